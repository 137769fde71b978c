# Consent (docs/security.md "No consent" and "Consent"), live against the
# fake API server: the upgrade shows description and permissions before
# its first change; the first upgrade, and a hook asking for a permission
# the state does not record, need a yes: on a terminal uphook asks, without
# one --yes answers; refused, or no terminal and no --yes, is exit 4 with
# nothing changed; the state records what was granted, which is not asked
# again; the plan marks the new ones; --offline never asks.
. tests/cli/lib.sh

. tests/cli/fake_api.sh
PIDS=""; trap fake_cleanup EXIT
fake_start || { echo "0 passed, 1 failed"; exit 1; }
cm() { fake_cm "$@"; }

R="$TMP/repo"; make_repo "$R" greet
# hook VERSION FROM PERMS: the hook; it writes ConfigMap default/greet
hook() {
  cat >"$R/addons/greet/upgrade.lua" <<EOF
return { version = "$1", from = "$2",
  description = "greet $1: says hello",
  permissions = { $3 },
  detect = function() return "1.0.0" end,
  upgrade = function()
    kube.apply { apiVersion = "v1", kind = "ConfigMap",
      metadata = { name = "greet", namespace = "default" },
      data = { version = "$1" } }
  end }
EOF
}
export SNAP_DATA="$TMP/snap" SNAP_COMMON="$TMP/common" HOME="$TMP/home"
U() { timeout 60 "$UPHOOK" --kubeconfig "$SRV/kubeconfig" --addons "$R" \
  --state-dir "$TMP/state" "$@"; }

hook 1.1.0 1.0.0 '"kube:default"'

# 1. the first upgrade, no terminal, no --yes: exit 4, nothing changed
run U upgrade greet </dev/null
expect "first upgrade without a terminal or --yes: exit 4, naming what needs the yes" 4 \
  '^[0-9TZ:-]* *Upgrading greet 1\.0\.0 -> 1\.1\.0$' '  greet 1\.1\.0: says hello$' \
  'permissions: kube:default \(new\)$' \
  'not upgraded: the first upgrade of greet \(permissions: kube:default\) needs your yes \(no terminal to ask on: --yes allows it\); nothing was changed'
[ "$(cm greet default)" = None ] && [ "$(cm uphook-greet kube-system)" = None ] \
  && ok "... nothing was changed: no ConfigMap, no state" \
  || not_ok "... nothing was changed: no ConfigMap, no state"

# 2. --yes: runs, and the state records the permissions
run U upgrade --yes greet </dev/null
expect "first upgrade with --yes: upgraded" 0 'yes \(--yes\) to the first upgrade of greet' 'Upgraded greet from 1\.0\.0 to 1\.1\.0'
st=$(cm uphook-greet kube-system)
case "$st" in *'"permissions": "- kube:default\n"'*) ok "the state records the granted permissions" ;;
  *) echo "    state: $st" >>"$OUT"; not_ok "the state records the granted permissions" ;; esac

# 3. a new version asking for the same permissions: no question, no --yes needed
hook 1.2.0 1.1.0 '"kube:default"'
run U upgrade greet </dev/null
expect "the same permissions again: no yes needed" 0 'permissions: kube:default$' 'Upgraded greet from 1\.1\.0 to 1\.2\.0'
refute "... and nothing is asked" 'yes \(--yes\)|needs your yes|\[y/N\]'

# 4. a new permission: the plan marks it, the upgrade needs a yes
hook 1.3.0 1.2.0 '"kube:default", "kube:cluster"'
run U plan greet </dev/null
expect "the plan marks the new permission" 0 '^  permissions: kube:default, kube:cluster \(new\)$'
run U upgrade greet </dev/null
expect "a new permission without a terminal or --yes: exit 4, naming it" 4 \
  'not upgraded: new permissions kube:cluster need your yes'
case "$(cm greet default)" in *'"version": "1.2.0"'*) ok "... the cluster keeps 1.2.0" ;;
  *) not_ok "... the cluster keeps 1.2.0" ;; esac

# 5. on a terminal: uphook asks; "n" refuses (exit 4), "y" runs
tty_run() {   # tty_run ANSWER ARGS...: uphook on a pseudo-terminal
  answer=$1; shift
  python3 - "$answer" "$@" >"$OUT" 2>&1 <<'PY'
import os, pty, sys, select, time
answer = sys.argv[1].encode()
pid, fd = pty.fork()
if pid == 0:
    os.execvp(sys.argv[2], sys.argv[2:])
out, sent, end = b"", False, time.time() + 60
while time.time() < end:
    r, _, _ = select.select([fd], [], [], 0.2)
    if r:
        try: data = os.read(fd, 4096)
        except OSError: break
        if not data: break
        out += data
    if not sent and b"[y/N]" in out:
        os.write(fd, answer + b"\n"); sent = True
_, status = os.waitpid(pid, 0)
sys.stdout.write(out.decode(errors="replace"))
print("\nexit=%d" % os.waitstatus_to_exitcode(status))
PY
  RC=$(sed -n 's/^exit=//p' "$OUT" | tail -1)
}
tty_run n "$UPHOOK" --kubeconfig "$SRV/kubeconfig" --addons "$R" --state-dir "$TMP/state" upgrade greet
expect "on a terminal the question names the new permission; n: exit 4" 4 \
  'asks for permissions the last upgrade did not have: kube:cluster' '\[y/N\]' \
  'need your yes \(the answer was no\)'
tty_run y "$UPHOOK" --kubeconfig "$SRV/kubeconfig" --addons "$R" --state-dir "$TMP/state" upgrade greet
expect "y: upgraded" 0 'Upgraded greet from 1\.2\.0 to 1\.3\.0'
case "$(cm uphook-greet kube-system)" in *'kube:cluster'*) ok "... and kube:cluster is recorded" ;;
  *) not_ok "... and kube:cluster is recorded" ;; esac

# 6. the grant is the repository's (docs/state.md "Which repository"): an
# addon of the same name in another repository is asked, as is a state an
# older uphook wrote without the repository, once
case "$(cm uphook-greet kube-system)" in *"\"repository\": \"repo $R\""*)
  ok "the state records the repository whose grant it is (name and folder)" ;;
  *) cm uphook-greet kube-system >"$OUT"; not_ok "the state records the repository whose grant it is (name and folder)" ;; esac
R2="$TMP/other/repo"; mkdir -p "$TMP/other"; cp -r "$R" "$R2"
sed -i 's/"1.3.0"/"1.4.0"/; s/from = "1.2.0"/from = "1.3.0"/' "$R2/addons/greet/upgrade.lua"
run timeout 60 "$UPHOOK" --kubeconfig "$SRV/kubeconfig" --addons "$R2" \
  --state-dir "$TMP/state" upgrade greet </dev/null
expect "greet of another repository (same name): asked again, exit 4 without a yes" 4 \
  "not upgraded: the permissions of greet from this repository \(kube:default, kube:cluster\) need your yes"
case "$(cm greet default)" in *'"version": "1.3.0"'*) ok "... nothing changed: the cluster keeps 1.3.0" ;;
  *) not_ok "... nothing changed: the cluster keeps 1.3.0" ;; esac
tty_run n "$UPHOOK" --kubeconfig "$SRV/kubeconfig" --addons "$R2" --state-dir "$TMP/state" upgrade greet
expect "... on a terminal the question names the repository the grant was for" 4 \
  "The permissions recorded for greet were granted to the repository repo $R, not to this one \(repo $R2\)"
curl -sS -X POST "$CTL/seed" --data-binary @- >/dev/null <<EOF2
apiVersion: v1
kind: ConfigMap
metadata: {name: uphook-greet, namespace: kube-system}
data: {version: 1.3.0, params: "{}\n", history: "[]\n", permissions: "- kube:cluster\n- kube:default\n"}
EOF2
hook 1.4.0 1.3.0 '"kube:default", "kube:cluster"'
run U upgrade greet </dev/null
expect "a state without the repository (an older uphook's) grants nothing: exit 4" 4 \
  "not upgraded: the permissions of greet from this repository"
run U upgrade --yes greet </dev/null
expect "... --yes: upgraded, and the state records the repository" 0 'Upgraded greet from 1\.3\.0 to 1\.4\.0'
hook 1.5.0 1.4.0 '"kube:default", "kube:cluster"'
run U upgrade greet </dev/null
expect "... so the next upgrade is not asked again" 0 'Upgraded greet from 1\.4\.0 to 1\.5\.0'

# 7. --offline never asks (a first upgrade, no terminal, no --yes)
printf 'apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n' >"$TMP/world.yaml"
hook 1.1.0 1.0.0 '"kube:default", "kube:cluster"'
run "$UPHOOK" --addons "$R" --offline "$TMP/world.yaml" upgrade greet </dev/null
expect "--offline never asks" 0 'permissions: kube:default \(new\), kube:cluster \(new\)' 'Upgraded greet'
finish

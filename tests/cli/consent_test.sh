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
# addon of the same name in another repository (here: another folder of
# the same name) has its own state, so its first upgrade is asked; a state
# an older uphook wrote without the repository is asked again, once
case "$(cm uphook-greet kube-system)" in *"\"repository\": \"repo $R\""*)
  ok "the state records the repository whose grant it is (name and folder)" ;;
  *) cm uphook-greet kube-system >"$OUT"; not_ok "the state records the repository whose grant it is (name and folder)" ;; esac
R2="$TMP/other/repo"; mkdir -p "$TMP/other"; cp -r "$R" "$R2"
sed -i 's/"1.3.0"/"1.4.0"/; s/from = "1.2.0"/from = "1.0.0"/' "$R2/addons/greet/upgrade.lua"
run timeout 60 "$UPHOOK" --kubeconfig "$SRV/kubeconfig" --addons "$R2" \
  --state-dir "$TMP/state" upgrade greet </dev/null
expect "greet of another repository (same name): its first upgrade, asked, exit 4 without a yes" 4 \
  "not upgraded: the first upgrade of greet \(permissions: kube:default, kube:cluster\) needs your yes"
case "$(cm greet default)" in *'"version": "1.3.0"'*) ok "... nothing changed: the cluster keeps 1.3.0" ;;
  *) not_ok "... nothing changed: the cluster keeps 1.3.0" ;; esac
tty_run n "$UPHOOK" --kubeconfig "$SRV/kubeconfig" --addons "$R2" --state-dir "$TMP/state" upgrade greet
expect "... on a terminal: the first upgrade of greet by uphook" 4 \
  "This is the first upgrade of greet by uphook \(1\.0\.0 -> 1\.4\.0\)"
case "$(cm uphook-greet kube-system)" in *"\"repository\": \"repo $R\", \"version\": \"1.3.0\""*)
  ok "... the state of the first repository's greet is untouched" ;;
  *) cm uphook-greet kube-system >"$OUT"; not_ok "... the state of the first repository's greet is untouched" ;; esac
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
# 8. two repositories added as `microk8s addons repo add` adds them
# ($SNAP_COMMON/addons/<name>), both with an addon web (docs/state.md
# "Which repository"): each is asked its own yes, and has its own state
# ConfigMap and Lease; upgrading one touches neither of the other's
A="$SNAP_COMMON/addons"
make_repo "$A/core" web; make_repo "$A/community" web
# webhook REPO VERSION FROM [WAIT]: its hook writes ConfigMap default/web-REPO;
# with WAIT, its upgrade first waits (30 s at most) for ConfigMap default/go
webhook() {
  wait=""
  [ -n "${4:-}" ] && wait='retry(function() assert(kube.get("ConfigMap", "go", "default")) end,
      { attempts = 600, delay = 0.05, backoff = 1 })'
  cat >"$A/$1/addons/web/upgrade.lua" <<EOF
local retry = require "retry"
return { version = "$2", from = "$3", permissions = { "kube:default" },
  detect = function() return "1.0.0" end,
  upgrade = function()
    $wait
    kube.apply { apiVersion = "v1", kind = "ConfigMap",
      metadata = { name = "web-$1", namespace = "default" },
      data = { version = "$2" } }
  end }
EOF
}
W() { timeout 60 "$UPHOOK" --kubeconfig "$SRV/kubeconfig" --state-dir "$TMP/state" "$@"; }
suffix() { printf '%s' "$1 $(cd "$A/$1" && pwd -P)" | sha256sum | cut -c1-10; }
SC=uphook-web-$(suffix community)
leases() { fake_objs "' '.join(sorted(o['metadata']['name'] for o in items if o['kind'] == 'Lease' and o['metadata']['name'].startswith('uphook-web')))"; }
webhook core 1.1.0 1.0.0; webhook community 1.1.0 1.0.0
run W upgrade --yes core/web </dev/null
expect "core/web: its first upgrade, with --yes" 0 'Upgraded web from 1\.0\.0 to 1\.1\.0.*State: ConfigMap kube-system/uphook-web\.$'
curl -sS -X DELETE "$CTL/requests" >/dev/null
run W upgrade community/web </dev/null
expect "community/web: asked its own yes although core/web has one: exit 4" 4 \
  "not upgraded: the first upgrade of web \(permissions: kube:default\) needs your yes"
run W list
expect "list: core/web at its own 1.1.0, community/web as its detect says (1.0.0*)" 0 \
  '^community +web +[^ ]+ +1\.0\.0\* ' '^core +web +[^ ]+ +1\.1\.0 '
run W upgrade --yes community/web </dev/null
expect "community/web with --yes: upgraded, its state is uphook-web-<suffix>" 0 \
  "Upgraded web from 1\.0\.0 to 1\.1\.0.*State: ConfigMap kube-system/$SC\.\$"
case "$(cm "$SC" kube-system)" in *"\"repository\": \"community $(cd "$A/community" && pwd -P)\", \"version\": \"1.1.0\""*)
  ok "... $SC records community at 1.1.0" ;;
  *) cm "$SC" kube-system >"$OUT"; not_ok "... $SC records community at 1.1.0" ;; esac
case "$(cm uphook-web kube-system)" in *'"repository": "core '*'"version": "1.1.0"'*) ok "... uphook-web stays core's" ;;
  *) cm uphook-web kube-system >"$OUT"; not_ok "... uphook-web stays core's" ;; esac
curl -sS "$CTL/requests" >"$OUT"
if grep -q "leases/$SC\"" "$OUT" && ! grep -q 'leases/uphook-web"' "$OUT"; then
  ok "... its runs took and released Lease $SC, never core's uphook-web"
else not_ok "... its runs took and released Lease $SC, never core's uphook-web"; fi
run W history core/web
expect "history core/web names uphook-web and core's run" 0 \
  'History of web \(ConfigMap kube-system/uphook-web;' '1\.0\.0 -> 1\.1\.0  upgraded \(exit 0\)  on .*  from core'
run W history community/web
expect "history community/web names its own ConfigMap and run" 0 \
  "History of web \(ConfigMap kube-system/$SC;" '1\.0\.0 -> 1\.1\.0  upgraded \(exit 0\)  on .*  from community'

# both upgraded at once, as on two nodes (each its own SNAP_DATA and state
# folder): both Leases are held together, under the two names
webhook core 1.2.0 1.1.0 wait; webhook community 1.2.0 1.1.0 wait
SNAP_DATA="$TMP/snap1" W upgrade core/web >"$TMP/core.out" 2>&1 </dev/null & P1=$!
SNAP_DATA="$TMP/snap2" timeout 60 "$UPHOOK" --kubeconfig "$SRV/kubeconfig" \
  --state-dir "$TMP/state2" upgrade community/web >"$TMP/comm.out" 2>&1 </dev/null & P2=$!
PIDS="$PIDS $P1 $P2"
i=0; held=""
while [ $i -lt 300 ] && [ "$held" != "uphook-web $SC" ]; do
  held=$(leases); [ "$held" = "uphook-web $SC" ] || sleep 0.1; i=$((i + 1))
done
[ "$held" = "uphook-web $SC" ] && ok "two upgrades of web hold uphook-web and $SC at once" \
  || { echo "    leases: $held" >>"$OUT"; not_ok "two upgrades of web hold uphook-web and $SC at once"; }
curl -sS -X POST "$CTL/seed" --data-binary @- >/dev/null <<EOF2
apiVersion: v1
kind: ConfigMap
metadata: {name: go, namespace: default}
EOF2
wait $P1; c1=$?; wait $P2; c2=$?
{ cat "$TMP/core.out" "$TMP/comm.out"; } >"$OUT"
[ "$c1" = 0 ] && [ "$c2" = 0 ] && [ -z "$(leases)" ] \
  && ok "... both upgraded (exit 0) and both Leases released" \
  || not_ok "... both upgraded (exit 0) and both Leases released ($c1, $c2, $(leases))"

# an interrupted upgrade of community/web: its Lease is marked pending, and
# recover writes its history and releases it; core's stay as they were
webhook community 1.3.0 1.2.0
UPHOOK_CRASH_AFTER=1 W upgrade community/web >"$OUT" 2>&1 </dev/null
pending=$(fake_objs "get('Lease', '$SC', 'kube-system')['metadata'].get('annotations', {}).get('uphook.microk8s.io/pending') if get('Lease', '$SC', 'kube-system') else None")
[ "$pending" != None ] && [ -n "$pending" ] && [ "$(leases)" = "$SC" ] \
  && ok "a crashed community/web upgrade leaves its own Lease $SC marked pending" \
  || not_ok "a crashed community/web upgrade leaves its own Lease $SC marked pending ($pending; $(leases))"
before=$(cm uphook-web kube-system)
run W recover community/web
expect "recover community/web: undone, its own Lease released" 0 \
  "released the Lease kube-system/$SC of the interrupted upgrade" 'Recovered web'
case "$(cm "$SC" kube-system)" in *'result: recovered'*) ok "... the history of $SC says recovered" ;;
  *) cm "$SC" kube-system >"$OUT"; not_ok "... the history of $SC says recovered" ;; esac
[ "$(cm uphook-web kube-system)" = "$before" ] && [ -z "$(leases)" ] \
  && ok "... core's uphook-web is untouched, no Lease is left" \
  || not_ok "... core's uphook-web is untouched, no Lease is left"

# the offline mock names them alike: in a world kept by --state-dir, core's
# web is uphook-web and community's uphook-web-<suffix>
OW="$TMP/offline-world"
webhook core 1.1.0 1.0.0; webhook community 1.1.0 1.0.0
for r in core community; do
  run "$UPHOOK" --offline "$TMP/world.yaml" --state-dir "$OW" upgrade "$r/web" </dev/null
done
python3 - "$OW/offline/cluster.yaml" "$SC" >"$OUT" 2>&1 <<'PY' \
  && ok "--offline: core/web's state is uphook-web, community/web's $SC, each its repository's" \
  || not_ok "--offline: core/web's state is uphook-web, community/web's $SC, each its repository's"
import sys, yaml
cms = {d["metadata"]["name"]: d["data"] for d in yaml.safe_load_all(open(sys.argv[1]))
       if d and d["kind"] == "ConfigMap" and d["metadata"].get("namespace") == "kube-system"
       and d["metadata"]["name"].startswith("uphook-web")}
assert sorted(cms) == ["uphook-web", sys.argv[2]], sorted(cms)
assert cms["uphook-web"]["repository"].startswith("core /"), cms
assert cms[sys.argv[2]]["repository"].startswith("community /"), cms
assert cms["uphook-web"]["version"] == cms[sys.argv[2]]["version"] == "1.1.0", cms
PY

# and each its own `state:` folder on the node, named as its state:
# community's web does not see what core's wrote there
statehook() {   # REPO VERSION FROM
  cat >"$A/$1/addons/web/upgrade.lua" <<EOF
return { version = "$2", from = "$3", permissions = {},
  upgrade = function()
    log.info("found: " .. tostring(config.read("state:secret")))
    config.write("state:secret", "$1's $2")
  end }
EOF
}
statehook core 1.2.0 1.1.0; statehook community 1.2.0 1.1.0
run "$UPHOOK" --offline "$TMP/world.yaml" --state-dir "$OW" upgrade core/web </dev/null
expect "--offline core/web writes its state:secret" 0 'found: nil'
run "$UPHOOK" --offline "$TMP/world.yaml" --state-dir "$OW" upgrade community/web </dev/null
expect "... community/web does not find core's state:secret" 0 'found: nil'
statehook core 1.3.0 1.2.0
run "$UPHOOK" --offline "$TMP/world.yaml" --state-dir "$OW" upgrade core/web </dev/null
expect "... core/web finds its own" 0 "found: core's 1\.2\.0"
[ "$(cat "$OW/addons/web/secret")" = "core's 1.3.0" ] \
  && [ "$(cat "$OW/addons/web-${SC#uphook-web-}/secret")" = "community's 1.2.0" ] \
  && ok "... each wrote its own folder: addons/web and addons/web-<suffix>" \
  || not_ok "... each wrote its own folder: addons/web and addons/web-<suffix>"
# an interrupted community/web: recover undoes its write in its own folder
statehook community 1.3.0 1.2.0
UPHOOK_CRASH_AFTER=1 "$UPHOOK" --offline "$TMP/world.yaml" --state-dir "$OW" \
  upgrade community/web >"$OUT" 2>&1 </dev/null
[ "$(cat "$OW/addons/web-${SC#uphook-web-}/secret")" = "community's 1.3.0" ] \
  && ok "a crashed --offline community/web wrote its state:secret" \
  || not_ok "a crashed --offline community/web wrote its state:secret"
run "$UPHOOK" --offline "$TMP/world.yaml" --state-dir "$OW" recover community/web </dev/null
expect "... recover community/web" 0 'Recovered web'
[ "$(cat "$OW/addons/web-${SC#uphook-web-}/secret")" = "community's 1.2.0" ] \
  && [ "$(cat "$OW/addons/web/secret")" = "core's 1.3.0" ] \
  && ok "... put its own state:secret back, and left core's alone" \
  || not_ok "... put its own state:secret back, and left core's alone"

# a state is read, locked and written only by the repository it records:
# uphook-web another's, and core's own name taken by an addon of a third
# repository named web-<core's suffix>: core/web stops before any change
SK=uphook-web-$(suffix core)
curl -sS -X POST "$CTL/seed" --data-binary @- >/dev/null <<EOF2
apiVersion: v1
kind: ConfigMap
metadata: {name: uphook-web, namespace: kube-system}
data: {version: 1.2.0, repository: "other /srv/other"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: $SK, namespace: kube-system}
data: {version: 1.0.0, repository: "third /srv/third"}
EOF2
webhook core 1.3.0 1.2.0
before=$(cm web-core default)
run W upgrade --yes core/web </dev/null
expect "a state that records another repository is not this one's: exit 5, nothing changed" 5 \
  "the state ConfigMap kube-system/$SK is the repository third /srv/third's, not this one's"
[ "$(cm web-core default)" = "$before" ] && [ -z "$(leases)" ] \
  && ok "... web-core kept, no Lease left" || not_ok "... web-core kept, no Lease left"

finish

#!/usr/bin/env python3
"""`microk8s upgrade` through upstream's own code.

Copies the verbatim upstream files of tests/upstream/microk8s/ into a
temporary tree, applies docs/microk8s/*.patch with `git apply`, lays out a
snap from it as snapcraft.yaml's parts do ($SNAP, $SNAP_DATA, $SNAP_COMMON
with two addon repositories), with the real uphook as $SNAP/bin/uphook, the
real kubectl as $SNAP/kubectl, the distribution's python3 (python3-click,
python3-yaml) as $SNAP/usr/bin/python3 and the fake API server of
tests/fakes behind both. Then runs `microk8s upgrade`, `microk8s enable`
and `microk8s status` as a user would, through upstream's microk8s.wrapper.

Run from the repository root with $UPHOOK set (tests/run.sh does).
Prints "ok - ..." lines and "N passed, N failed".
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

from testlib import FAIL, UPHOOK, UPSTREAM, Fake, check, finish, patched_tree, write
# the snap stages the distribution's python3 with python3-click and -yaml
SNAP_PYTHON = "/usr/bin/python3"
ARCHS = "[amd64, arm64, armhf, s390x, ppc64le]"


class Result:
    def __init__(self, p, seconds):
        self.code, self.out, self.err = p.returncode, p.stdout, p.stderr
        self.seconds = seconds

    @property
    def all(self):
        return self.out + self.err

    def __str__(self):
        return "exit %s after %.1f s\n%s" % (self.code, self.seconds, self.all)


# ----------------------------------------------------------------- the tree

def lay_out_snap(src, tmp):
    """$SNAP as the parts of snapcraft.yaml build it: the microk8s part
    copies wrappers/* and actions/, microk8s-scripts copies scripts/, the
    uphook part installs bin/uphook."""
    snap = os.path.join(tmp, "snap")
    res = os.path.join(src, "microk8s-resources")
    os.makedirs(snap)
    for name in os.listdir(os.path.join(res, "wrappers")):
        shutil.copy2(os.path.join(res, "wrappers", name), snap)
    shutil.copytree(os.path.join(res, "actions"), os.path.join(snap, "actions"))
    shutil.copytree(os.path.join(src, "scripts"), os.path.join(snap, "scripts"))
    links = {"bin/uphook": UPHOOK, "usr/bin/python3": SNAP_PYTHON,
             "kubectl": shutil.which("kubectl"), "bin/cat": shutil.which("cat"),
             "bin/grep": shutil.which("grep")}
    for rel, target in links.items():
        os.makedirs(os.path.dirname(os.path.join(snap, rel)), exist_ok=True)
        os.symlink(target, os.path.join(snap, rel))
    write(os.path.join(snap, "meta", "snap.yaml"), "name: microk8s\nconfinement: classic\n")
    return snap


def addons_yaml(entries):
    out = ["microk8s-addons:", "  description: test addons", "  addons:"]
    for name, check_status in entries:
        out += ['    - name: "%s"' % name, '      description: "the %s addon"' % name,
                '      version: "1.0.0"', '      check_status: "%s"' % check_status,
                "      supported_architectures: %s" % ARCHS]
    return "\n".join(out) + "\n"


# records what it was given, in a ConfigMap the test reads back
DNS_HOOK = r'''
return {
  version = "1.1.0",
  from = ">=1.0.0 <1.1.0",
  description = "test dns: records its arguments",
  permissions = { "kube:kube-system" },
  positional = { "nameservers" },
  detect = function(ctx)
    local d = kube.get("Deployment", "coredns", "kube-system")
    return d and d.spec.template.spec.containers[1].image:match(":(.+)$")
  end,
  upgrade = function(ctx)
    kube.apply { apiVersion = "v1", kind = "ConfigMap",
      metadata = { name = "dns-upgrade", namespace = "kube-system" },
      data = { positional = json.encode(ctx.positional),
               args = json.encode(ctx.args) } }
  end,
}
'''

HELLO_HOOK = r'''
return {
  version = "2.0.0",
  from = ">=1.0.0 <2.0.0",
  permissions = { "kube:default" },
  detect = function(ctx) return "1.0.0" end,
  upgrade = function(ctx)
    kube.apply { apiVersion = "v1", kind = "ConfigMap",
      metadata = { name = "hello-upgrade", namespace = "default" },
      data = { repo = "%s" } }
  end,
}
'''

# a legacy upgrade script: what it got, whether the addon lock is held for
# it, and `microk8s enable other` (upstream's enable, under that lock)
LEGACY_UPGRADE = r'''#!/bin/sh
out="$SNAP_COMMON/legacy.out"
echo "argv: $0 $*" > "$out"
echo "skip-lock: ${MICROK8S_ADDONS_SKIP_LOCK:-unset}" >> "$out"
"$SNAP/usr/bin/python3" - "$SNAP_DATA/var/lock/.microk8s-addon-lock" >> "$out" <<'EOF'
import fcntl, sys
f = open(sys.argv[1], "w")
try:
    fcntl.lockf(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    print("lock: free")
except OSError:
    print("lock: held")
EOF
case "${1:-}" in
  --enable-other) "$SNAP/microk8s.wrapper" enable other >> "$out" 2>&1 || exit 9 ;;
  --fail) exit 7 ;;
esac
exit 0
'''

OTHER_ENABLE = '''#!/bin/sh
echo "other enabled with: $*" > "$SNAP_COMMON/other.out"
'''
# an enable that upgrades another addon: it runs under enable's lock
CHAIN_ENABLE = '''#!/bin/sh
"$SNAP/microk8s.wrapper" upgrade core/legacy chained
echo "upgrade exit $?" > "$SNAP_COMMON/chain.out"
'''
# an enable that holds the addon lock until the test says go (60 s at most)
SLOW_ENABLE = '''#!/bin/sh
touch "$SNAP_COMMON/slow.started"
i=0
while [ ! -e "$SNAP_COMMON/slow.go" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
'''


def addon_repos(common):
    core = os.path.join(common, "addons", "core")
    write(os.path.join(core, "addons.yaml"), addons_yaml([
        ("dns", "deployment.apps/coredns"), ("legacy", "deployment.apps/legacy"),
        ("nohook", "deployment.apps/nohook"), ("absent", "deployment.apps/absent"),
        ("hello", "deployment.apps/hello"), ("other", "deployment.apps/other"),
        ("chain", "deployment.apps/chain"), ("slow", "deployment.apps/slow")]))
    a = os.path.join(core, "addons")
    write(os.path.join(a, "dns", "upgrade.lua"), DNS_HOOK)
    write(os.path.join(a, "legacy", "upgrade"), LEGACY_UPGRADE, 0o755)
    write(os.path.join(a, "nohook", "enable"), "#!/bin/sh\n", 0o755)
    write(os.path.join(a, "absent", "upgrade.lua"), HELLO_HOOK % "core")
    write(os.path.join(a, "hello", "upgrade.lua"), HELLO_HOOK % "core")
    write(os.path.join(a, "other", "enable"), OTHER_ENABLE, 0o755)
    write(os.path.join(a, "chain", "enable"), CHAIN_ENABLE, 0o755)
    write(os.path.join(a, "slow", "enable"), SLOW_ENABLE, 0o755)
    community = os.path.join(common, "addons", "community")
    write(os.path.join(community, "addons.yaml"),
          addons_yaml([("hello", "deployment.apps/hello")]))
    write(os.path.join(community, "addons", "hello", "upgrade.lua"),
          HELLO_HOOK % "community")


def deployment(name, ns, image):
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": ns},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": name, "image": image}]}}}}


# ------------------------------------------------------------ the fake API

# ------------------------------------------------------------------ running

class Snap:
    def __init__(self, tmp, snap, fake):
        self.snap, self.tmp = snap, tmp
        self.data = os.path.join(tmp, "snap_data")
        self.common = os.path.join(tmp, "snap_common")
        for d in ("var/lock", "credentials", "args"):
            os.makedirs(os.path.join(self.data, d), exist_ok=True)
        shutil.copy(os.path.join(fake.dir, "kubeconfig"),
                    os.path.join(self.data, "credentials", "client.config"))
        res = os.path.join(UPSTREAM, "microk8s-resources", "default-args")
        for name in ("kubectl", "kubectl-env"):
            shutil.copy(os.path.join(res, name), os.path.join(self.data, "args", name))
        write(os.path.join(self.data, "args", "kube-apiserver"), "--secure-port=16443\n")
        os.makedirs(os.path.join(self.common, "var", "lib"), exist_ok=True)
        addon_repos(self.common)
        self.env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "REAL_PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": os.path.join(tmp, "home"), "USER": "root", "LANG": "C.UTF-8",
            "SNAP": snap, "SNAP_DATA": self.data, "SNAP_COMMON": self.common,
            "SNAP_NAME": "microk8s", "SNAP_LIBRARY_PATH": "",
            "SNAPCRAFT_ARCH_TRIPLET": "x86_64-linux-gnu",
        }
        if "TMPDIR" in os.environ:
            self.env["TMPDIR"] = os.environ["TMPDIR"]

    def microk8s(self, *args, timeout=120):
        """`microk8s <args>`, as the snap's `microk8s` app runs it."""
        t0 = time.monotonic()
        p = subprocess.run([os.path.join(self.snap, "microk8s.wrapper"), *args],
                           env=self.env, capture_output=True, text=True,
                           timeout=timeout, stdin=subprocess.DEVNULL)
        return Result(p, time.monotonic() - t0)

    def start(self, *args):
        return subprocess.Popen([os.path.join(self.snap, "microk8s.wrapper"), *args],
                                env=self.env, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True,
                                stdin=subprocess.DEVNULL)

    def read(self, name):
        try:
            with open(os.path.join(self.common, name)) as f:
                return f.read()
        except OSError:
            return ""


def wait_for(path, seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if os.path.exists(path):
            return True
        time.sleep(0.05)
    return False


# -------------------------------------------------------------------- tests

def test_usage(s):
    r = s.microk8s("upgrade")
    check("`microk8s upgrade` alone is a usage error (exit 2)",
          r.code == 2 and "Missing argument" in r.all, r)
    r = s.microk8s("upgrade", "--help")
    check("`microk8s upgrade --help` is the command's help",
          r.code == 0 and "Usage: microk8s upgrade" in r.out and "ADDON --help" in r.out, r)
    r = s.microk8s("upgrade", "dns", "--help")
    check("`microk8s upgrade dns --help` reaches `uphook upgrade core/dns --help`",
          r.code == 0 and "usage: uphook upgrade" in r.out
          and "does not yet have a help message" not in r.all, r)
    r = s.microk8s("upgrade", "dns", "legacy")
    check("a second addon is exit 2: one addon at a time",
          r.code == 2 and "upgrade one addon at a time" in r.err, r)
    r = s.microk8s("upgrade", "nosuch")
    check("an unknown addon is exit 2, in upstream's words",
          r.code == 2 and "Addon nosuch was not found in any repository" in r.err, r)
    r = s.microk8s("upgrade", "hello")
    check("an addon in two repositories is exit 2, naming both",
          r.code == 2 and "core/hello" in r.err and "community/hello" in r.err, r)


def test_refusals(s, fake):
    r = s.microk8s("upgrade", "nohook")
    check("no hook: 'Upgrade is not supported by nohook', exit 3",
          r.code == 3 and "Upgrade is not supported by nohook\n" in r.out, r)
    r = s.microk8s("upgrade", "absent")
    check("an addon that is not enabled: exit 4, 'Addon absent is not enabled'",
          r.code == 4 and "Addon absent is not enabled" in r.err, r)
    lock = os.path.join(s.data, "var", "lock", "clustered.lock")
    write(lock, "")
    r = s.microk8s("upgrade", "dns")
    os.remove(lock)
    check("a worker node refuses: exit 4, nothing upgraded",
          r.code == 4 and "acting as a node in a cluster" in r.err
          and fake.get("ConfigMap", "dns-upgrade", "kube-system") is None, r)


def test_status(s, before):
    r = s.microk8s("status")
    line = [ln for ln in r.out.splitlines() if "1.0.0 -> 1.1.0" in ln]
    if before:
        check("`microk8s status` has 'upgrade available' for core/dns 1.0.0 -> 1.1.0",
              r.code == 0 and "upgrade available:" in r.out and line
              and "dns" in line[0] and "(core)" in line[0]
              and "microk8s upgrade core/dns" in line[0], r)
        y = s.microk8s("status", "--format", "yaml")
        check("`microk8s status --format yaml` has upgrade-available: 1.1.0",
              y.code == 0 and "upgrade-available: 1.1.0" in y.out, y)
    else:
        check("after the upgrade, status no longer offers core/dns",
              r.code == 0 and "addons:" in r.out and not line, r)


def test_upgrades(s, fake):
    r = s.microk8s("upgrade", "dns:8.8.8.8")
    cm = fake.get("ConfigMap", "dns-upgrade", "kube-system")
    data = cm["data"] if cm else {}
    check("`microk8s upgrade dns:8.8.8.8` runs upgrade.lua through uphook (exit 0)",
          r.code == 0 and "Upgraded dns from 1.0.0 to 1.1.0" in r.all and cm, r)
    check("the hook gets 8.8.8.8 as enable's parser splits dns:8.8.8.8",
          json.loads(data.get("positional", "null")) == ["8.8.8.8"], data)
    state = fake.get("ConfigMap", "uphook-dns", "kube-system")
    check("uphook records dns 1.1.0 in the cluster",
          state is not None and "1.1.0" in json.dumps(state.get("data")), state)
    r = s.microk8s("upgrade", "dns")
    check("a second upgrade has nothing to do (exit 0)",
          r.code == 0 and "already at 1.1.0" in r.all, r)

    r = s.microk8s("upgrade", "community/hello", "--yes")
    cm = fake.get("ConfigMap", "hello-upgrade", "default")
    check("`microk8s upgrade community/hello` runs that repository's hook",
          r.code == 0 and cm and cm["data"]["repo"] == "community", r)

    r = s.microk8s("upgrade", "legacy:a:b")
    out = s.read("legacy.out")
    check("a legacy `upgrade` script gets its arguments (legacy:a:b -> a b)",
          r.code == 0 and "legacy/upgrade a b\n" in out, str(r) + out)
    check("the script runs under the addon lock, with MICROK8S_ADDONS_SKIP_LOCK=1",
          "lock: held" in out and "skip-lock: 1" in out, out)
    r = s.microk8s("upgrade", "legacy", "--fail")
    check("the script's exit code is microk8s upgrade's (7)", r.code == 7, r)
    r = s.microk8s("upgrade", "legacy", "--enable-other", timeout=180)
    out = s.read("legacy.out")
    check("no deadlock: the script's `microk8s enable other` runs under its lock",
          r.code == 0 and "other enabled with:" in s.read("other.out")
          and "legacy/upgrade --enable-other" in out, str(r) + out)


def test_locks(s, fake):
    # `microk8s enable chain` holds the lock (upstream's protected_xable)
    # while chain's enable runs `microk8s upgrade core/legacy chained`
    r = s.microk8s("enable", "chain", timeout=180)
    check("no deadlock: an enable script that runs `microk8s upgrade` finishes",
          r.code == 0 and "upgrade exit 0" in s.read("chain.out")
          and "legacy/upgrade chained" in s.read("legacy.out"),
          str(r) + s.read("chain.out") + s.read("legacy.out"))

    slow = s.start("enable", "slow")
    started = wait_for(os.path.join(s.common, "slow.started"), 90)
    r = s.microk8s("upgrade", "dns", "--lock-wait", "1")
    legacy_before = s.read("legacy.out")
    r2 = s.microk8s("upgrade", "legacy", "--lock-wait", "1")
    write(os.path.join(s.common, "slow.go"), "")
    try:
        slow_out = slow.communicate(timeout=120)[0]
    except subprocess.TimeoutExpired:
        slow.kill()
        slow_out = "(killed)"
    check("while `microk8s enable` holds the addon lock, upgrade waits "
          "--lock-wait 1 and exits 5, naming `microk8s enable slow`",
          started and r.code == 5 and "held by PID " in r.err and "`microk8s enable slow`" in r.err
          and 0.9 < r.seconds < 30, str(r) + slow_out)
    check("so does an upgrade script, which does not run meanwhile",
          r2.code == 5 and s.read("legacy.out") == legacy_before, r2)
    check("the enable that held the lock finished", slow.returncode == 0, slow_out)


def test_tree(src):
    with open(os.path.join(src, "build-scripts", "components", "microk8s-completion",
                           "patches", "default",
                           "0001-microk8s-autocompleter-script.patch")) as f:
        inner = f.read()
    empty = tempfile.mkdtemp(dir=os.path.dirname(src))
    subprocess.run(["git", "init", "-q", empty], check=True)
    p = subprocess.run(["git", "apply", "--include=cmd/helm/hack_microk8s_autocompleter.go",
                        "-"], cwd=empty, input=inner, capture_output=True, text=True)
    go = ""
    if p.returncode == 0:
        with open(os.path.join(empty, "cmd", "helm", "hack_microk8s_autocompleter.go")) as f:
            go = f.read()
    check("the completion patch stays a valid patch and completes `upgrade`",
          p.returncode == 0 and '{Use: "upgrade", Run:' in go, p.stderr)


def main():
    if not os.path.exists(SNAP_PYTHON) or subprocess.run(
            [SNAP_PYTHON, "-c", "import click, yaml"], capture_output=True).returncode:
        check("%s has python3-click and python3-yaml (make deps)" % SNAP_PYTHON, False)
        finish()
    if not shutil.which("kubectl"):
        check("kubectl is installed (.ci/run installs it)", False)
        finish()
    tmp = tempfile.mkdtemp(prefix="upgrade_patch_test.")
    fake = None
    try:
        src = patched_tree(tmp)
        if FAIL[0]:
            finish()
        test_tree(src)
        snap = lay_out_snap(src, tmp)
        fake = Fake(tmp, "--rollout-delay", "0.05")
        if not fake.port:
            check("the fake API server started", False)
            finish()
        seed = [deployment("coredns", "kube-system", "coredns:1.0.0")]
        seed += [deployment(n, "default", n + ":1.0.0") for n in ("legacy", "nohook", "hello")]
        # dns's state from an earlier upgrade that was granted kube:kube-system, so
        # `microk8s upgrade dns:8.8.8.8` needs no yes (docs/security.md "Consent");
        # community/hello's first upgrade gets --yes; the grant is core's
        # (docs/state.md "Which repository": its name and folder)
        core = os.path.realpath(tmp) + "/snap_common/addons/core"
        seed += [{"apiVersion": "v1", "kind": "ConfigMap",
                  "metadata": {"name": "uphook-dns", "namespace": "kube-system"},
                  "data": {"version": "1.0.0", "permissions": "- kube:kube-system\n",
                           "repository": "core " + core}}]
        fake.call("POST", "seed", json.dumps(seed))
        s = Snap(tmp, snap, fake)
        test_usage(s)
        test_refusals(s, fake)
        test_status(s, before=True)
        test_upgrades(s, fake)
        test_status(s, before=False)
        test_locks(s, fake)
    finally:
        if fake:
            fake.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    finish()


if __name__ == "__main__":
    main()

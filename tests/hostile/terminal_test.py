"""Text that reaches a terminal (docs/security.md, "What the user sees"):
every command's human output, with a hostile addon repository (its
addons.yaml, its hook, its addon YAML, its test file) and a hostile mock
cluster, holds no raw control byte: no C0 byte but newline and tab, no
DEL, no C1 control. Each text carries ESC sequences that clear the
screen or set the window title; the commands print them escaped.

  python3 tests/hostile/terminal_test.py   (UPHOOK: the binary)
"""
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "fakes"))
from testlib import check, finish  # noqa: E402

UPHOOK = os.environ.get("UPHOOK") or os.path.abspath("build/uphook")
RAW = re.compile(rb"[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]")
ESC = "\\27[2J\\27]0;pwned\\7"          # Lua escapes: clear, window title
YESC = "\\e[2J\\e]0;pwned\\a"            # the same in YAML double quotes

ADDONS_YAML = """microk8s-addons:
  description: "the repo{y}"
  addons:
    - name: evil
      description: "an addon{y}"
      version: "1.0.0{y}"
      check_status: "deployment.apps/evil"
    - name: quiet
      description: "no hook{y}"
      version: "2.0.0"
""".format(y=YESC)

HOOK = """return {{
  version = "2.0.0", from = ">=1.0.0",
  description = "it does things{e}",
  permissions = {{ "kube:default" }},
  params = {{ color = {{ default = "red", description = "a color{e}" }} }},
  detect = function() log.info("detect says{e}") return "1.0.0" end,
  upgrade = function(ctx)
    log.info("hello{e}")
    log.warn("careful{e}")
    kube.apply({{ apiVersion = "v1", kind = "ConfigMap",
      metadata = {{ name = "evil", namespace = "default" }},
      data = {{ ["k{e}"] = "v{e}" }} }})
    if not ctx.plan then
      local t = {{}}
      t["field{e}"] = function() error("boom") end
      t["field{e}"]()     -- a traceback naming the field under -v
    end
  end,
}}
""".format(e=ESC)

ADDON_YAML = """apiVersion: "extensions/v1beta1{y}"
kind: "Ingress{y}"
metadata: {{name: web, namespace: default}}
""".format(y=YESC)

CLUSTER = """apiVersion: v1
kind: Node
metadata:
  name: n1
  labels: {{kubernetes.io/hostname: n1}}
status:
  nodeInfo: {{kubeletVersion: "v1.32.3{y}"}}
  addresses: [{{type: InternalIP, address: 10.0.1.11}}]
---
apiVersion: apps/v1
kind: Deployment
metadata: {{name: evil, namespace: default, labels: {{app: "x"}}}}
spec:
  selector: {{matchLabels: {{app: evil}}}}
  template:
    metadata: {{labels: {{app: evil}}}}
    spec: {{containers: [{{name: evil, image: "evil:1{y}"}}]}}
""".format(y=YESC)

TEST = """local t = require "uphook.test"
t.case("a case named{e}", function() error("failed{e}") end)
t.case("an assertion{e}", function() t.eq("got{e}", "want{e}") end)
t.case("a match{e}", function() t.match("text{e}", "^nope{e}") end)
""".format(e=ESC)


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def main():
    tmp = tempfile.mkdtemp(prefix="uphook-term.")
    repo = os.path.join(tmp, "repo")
    write(os.path.join(repo, "addons.yaml"), ADDONS_YAML)
    write(os.path.join(repo, "addons", "evil", "upgrade.lua"), HOOK)
    write(os.path.join(repo, "addons", "evil", "ingress.yaml"), ADDON_YAML)
    write(os.path.join(repo, "addons", "evil", "evil_test.lua"), TEST)
    write(os.path.join(repo, "addons", "quiet", "quiet.yaml"), ADDON_YAML)
    cluster = os.path.join(tmp, "cluster.yaml")
    write(cluster, CLUSTER)
    # doctor: the snap's copy and the clone ($SNAP/addons/<repo>)
    for root in ("snap", "common"):
        d = os.path.join(tmp, root, "addons", "core")
        os.makedirs(os.path.dirname(d), exist_ok=True)
        os.symlink(repo, d)
    env = dict(os.environ, SNAP=os.path.join(tmp, "snap"),
               SNAP_COMMON=os.path.join(tmp, "common"),
               HOME=os.path.join(tmp, "home"))
    base = [UPHOOK, "--addons", repo, "--offline", cluster]
    runs = {
        "list": base + ["--state-dir", tmp + "/s1", "list"],
        "doctor": [UPHOOK, "--offline", cluster, "--state-dir", tmp + "/s2",
                   "doctor"],
        "plan": base + ["--state-dir", tmp + "/s3", "plan", "evil"],
        "upgrade": base + ["--state-dir", tmp + "/s4", "upgrade", "evil"],
        "upgrade -v (traceback)": base + ["--state-dir", tmp + "/s5", "-v",
                                          "--yes", "upgrade", "evil"],
        "upgrade --help": base + ["upgrade", "evil", "--help"],
        "lint": [UPHOOK, "lint", os.path.join(repo, "addons", "evil",
                                              "upgrade.lua")],
        "test": [UPHOOK, "test", os.path.join(repo, "addons", "evil")],
        "fixture": base + ["fixture", "evil"],
    }
    # the others: this repository only (no clone in $SNAP_COMMON)
    alone = dict(env, SNAP_COMMON=os.path.join(tmp, "none"))
    for name, argv in runs.items():
        p = subprocess.run(argv, env=env if name == "doctor" else alone,
                           capture_output=True, timeout=120)
        out = p.stdout + p.stderr
        m = RAW.search(out)
        where = out[max(0, m.start() - 60):m.end() + 20] if m else b""
        check("%s: no raw control byte in its output" % name, m is None,
              "exit %d: ...%r..." % (p.returncode, where))
        # the text is there, escaped: the check looks at real output
        if name in ("plan", "upgrade", "upgrade -v (traceback)", "lint",
                    "test", "doctor"):
            check("%s: the hostile text is shown, escaped" % name,
                  b"\\x1b[2J" in out, out[-400:])
    if os.environ.get("KEEP"): print(tmp)
    else: subprocess.run(["rm", "-rf", tmp])
    finish()


main()

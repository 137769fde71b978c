"""What the suites of tests/microk8s/ share: the ok/not ok lines and the
closing count, the MicroK8s tree with docs/microk8s/*.patch applied, and
the fake API server of tests/fakes started on a free port."""
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
import urllib.request

ROOT = os.getcwd()
UPHOOK = os.environ.get("UPHOOK") or os.path.join(ROOT, "build", "uphook")
UPSTREAM = os.path.join(ROOT, "tests", "upstream", "microk8s")
PATCHES = [os.path.join(ROOT, "docs", "microk8s", p) for p in
           ("microk8s-upgrade.patch", "microk8s-upgrade-completion.patch")]

# the ok/not ok lines and the count: tests/fakes/testlib.py's (loaded by
# its path: this module is "testlib" too)
_spec = importlib.util.spec_from_file_location(
    "fakes_testlib", os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                  "..", "fakes", "testlib.py"))
_checks = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_checks)
check, finish = _checks.check, _checks.finish
PASS, FAIL = _checks.PASSED, _checks.FAILED


def write(path, text, mode=0o644):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, mode)


def patched_tree(tmp):
    """The verbatim upstream files of tests/upstream/microk8s/ with each
    patch applied by `git apply` (each a check). Returns the tree's path."""
    src = os.path.join(tmp, "src")
    shutil.copytree(UPSTREAM, src, ignore=shutil.ignore_patterns("SOURCES.md"))
    subprocess.run(["git", "init", "-q", src], check=True)
    for p in PATCHES:
        r = subprocess.run(["git", "apply", "--check", p], cwd=src,
                           capture_output=True, text=True)
        check("%s applies with git apply" % os.path.basename(p),
              r.returncode == 0, r.stderr)
        subprocess.run(["git", "apply", p], cwd=src, capture_output=True)
    return src


class Fake:
    """tests/fakes/apiserver.py on a free port; `port` is None when it did
    not start."""

    def __init__(self, tmp, *args):
        self.dir = os.path.join(tmp, "srv")
        os.makedirs(self.dir)
        self.out = open(os.path.join(self.dir, "stdout"), "w+")
        self.proc = subprocess.Popen(
            [sys.executable, os.path.join(ROOT, "tests", "fakes", "apiserver.py"),
             "--dir", self.dir, "--port", "0", "--quiet", *args],
            stdout=self.out, stderr=subprocess.DEVNULL)
        self.port = None
        for _ in range(300):
            self.out.seek(0)
            line = self.out.readline()
            if line.startswith("ready "):
                self.port = int(line.split()[1])
                break
            time.sleep(0.1)

    def call(self, method, path, body=None):
        """The /_fake/ control API: JSON back."""
        req = urllib.request.Request("http://127.0.0.1:%d/_fake/%s" % (self.port, path),
                                     data=body.encode() if body else None, method=method)
        with urllib.request.urlopen(req, timeout=20) as r:
            return json.loads(r.read())

    def get(self, kind, name, ns=None):
        for o in self.call("GET", "objects")["items"]:
            m = o["metadata"]
            if o["kind"] == kind and m["name"] == name and m.get("namespace") == ns:
                return o
        return None

    def stop(self):
        self.proc.terminate()
        self.proc.wait(10)

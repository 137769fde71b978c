"""The MicroK8s tree the tests of tests/microk8s/ run against: the verbatim
upstream files of tests/upstream/microk8s/ with docs/microk8s/*.patch
applied by `git apply`, in a temporary folder."""
import os
import shutil
import subprocess

ROOT = os.getcwd()
UPSTREAM = os.path.join(ROOT, "tests", "upstream", "microk8s")
PATCHES = [os.path.join(ROOT, "docs", "microk8s", p) for p in
           ("microk8s-upgrade.patch", "microk8s-upgrade-completion.patch")]


def patched_tree(tmp, check):
    """Copy, then apply each patch; check(desc, ok, info) reports each.
    Returns the tree's path."""
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

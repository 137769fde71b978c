"""The hook child holds none of the parent's environment (docs/security.md
"Inherited environment"): not in environ, and not in the pages it inherits
at fork either (the strings on the initial stack, copies in libc). uphook
runs with secrets in its environment and a hook that spins; while it
spins, this test reads the hook child's whole memory from outside
(/proc/<pid>/mem, which needs CAP_SYS_PTRACE: the child is not dumpable)
and must not find them, and reads the broker's the same way, where they
are (so the search can tell).

Under make asan the sanitizer runtime keeps a private copy of the whole
initial environment (it reads /proc/self/environ before main to find
ASAN_OPTIONS), which the child inherits and no program can clear: in a
sanitizer build, a mapping that holds that exact block is left out (and
counted). The plain build, in make test, leaves nothing out.

  python3 tests/hostile/environment_test.py   (UPHOOK: the binary)
"""
import os
import re
import secrets
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "fakes"))
from testlib import check, finish  # noqa: E402

UPHOOK = os.environ.get("UPHOOK") or os.path.abspath("build/uphook")

HOOK = """return { version = "2.0.0", from = ">=1.0.0", permissions = {},
  detect = function() return "1.0.0" end,
  upgrade = function() while true do end end }
"""


def regions(pid):
    """(start, end) of every readable mapping of pid."""
    out = []
    with open("/proc/%d/maps" % pid) as f:
        for line in f:
            m = re.match(r"([0-9a-f]+)-([0-9a-f]+) (\S+)", line)
            if m and m.group(3)[0] == "r" and "[vvar" not in line \
                    and "[vsyscall]" not in line:
                out.append((int(m.group(1), 16), int(m.group(2), 16)))
    return out


CHUNK = 16 << 20        # read a mapping 16 MiB at a time
HUGE = 1 << 30          # a sanitizer's shadow: reserved, never the hook's data


def memory_has(pid, needles, ignore=None):
    """Which of needles (bytes) occur anywhere in pid's readable memory,
    and how much was read; with `ignore` (bytes), a mapping that holds it
    whole is passed over, and counted in the third result.
    A mapping of 1 GiB or more (ASan's shadow memory under make asan) is
    skipped: it holds the sanitizer's bookkeeping, not strings, and reading
    terabytes of it would exhaust the test."""
    found, read, ignored = set(), 0, 0
    overlap = max(len(n) for n in needles) - 1
    with open("/proc/%d/mem" % pid, "rb", buffering=0) as mem:
        for start, end in regions(pid):
            if end - start >= HUGE:
                continue
            tail, at = b"", start
            while at < end:
                try:
                    mem.seek(at)
                    data = mem.read(min(CHUNK, end - at))
                except OSError:
                    break                    # a guard page, say
                if not data:
                    break
                if ignore and at == start and ignore in data:
                    ignored += 1
                    break
                read += len(data)
                window = tail + data
                for n in needles:
                    if n in window:
                        found.add(n)
                tail = window[-overlap:] if overlap else b""
                at += len(data)
    return found, read, ignored


def sanitized(binary):
    """Whether binary is a sanitizer build (ASan's runtime is linked in)."""
    with open(binary, "rb") as f:
        return b"__asan_init" in f.read()


def children(pid):
    try:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


def main():
    tmp = tempfile.mkdtemp(prefix="uphook-env-")
    repo = os.path.join(tmp, "repo")
    os.makedirs(os.path.join(repo, "addons", "spin"))
    with open(os.path.join(repo, "addons.yaml"), "w") as f:
        f.write("microk8s-addons:\n  addons:\n    - name: spin\n"
                "      version: 1.0.0\n")
    with open(os.path.join(repo, "addons", "spin", "upgrade.lua"), "w") as f:
        f.write(HOOK)
    with open(os.path.join(tmp, "cluster.yaml"), "w") as f:
        f.write("apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n")
    key = "uphook-cloud-key-" + secrets.token_hex(12)
    password = "uphook-proxy-pass-" + secrets.token_hex(12)
    env = dict(os.environ, AWS_SECRET_ACCESS_KEY=key,
               https_proxy="http://someone:%s@127.0.0.1:9/" % password)
    needles = [key.encode(), password.encode()]
    # what execve passes, in order: the block ASan's runtime copies
    block = b"\0".join(b"%s=%s" % (k.encode(), v.encode())
                       for k, v in env.items()) + b"\0"
    ignore = block if sanitized(UPHOOK) else None
    p = subprocess.Popen([UPHOOK, "--addons", repo, "--offline",
                          os.path.join(tmp, "cluster.yaml"), "--state-dir",
                          os.path.join(tmp, "st"), "--timeout", "20",
                          "upgrade", "spin"], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    child = None
    for _ in range(200):                     # the hook child, spinning
        kids = children(p.pid)
        if kids:
            child = kids[0]
            time.sleep(0.3)                  # past fork and confinement
            break
        time.sleep(0.05)
    check("the hook child runs", child is not None)
    if child is None:
        p.kill()
        finish()
    try:
        in_child, read, ignored = memory_has(child, needles, ignore)
        in_broker, _, _ = memory_has(p.pid, needles)
        with open("/proc/%d/environ" % child, "rb") as f:
            child_environ = f.read()
    except PermissionError as e:
        check("reading the hook child's memory needs CAP_SYS_PTRACE", False,
              e)
        p.kill()
        finish()
    check("the broker's memory holds the secrets (the search can find them)",
          in_broker == set(needles), in_broker)
    check("the hook child's memory (%d KiB read%s) holds none of them"
          % (read >> 10, ", %d sanitizer environment cop%s left out"
             % (ignored, "y" if ignored == 1 else "ies") if ignore else ""),
          not in_child,
          ", ".join(n.decode() for n in in_child))
    check("the child's initial-stack environment is zeroed",
          not any(n in child_environ for n in needles)
          and child_environ.strip(b"\0") == b"", child_environ[:200])
    p.kill()
    p.wait()
    subprocess.run(["rm", "-rf", tmp])
    finish()


main()

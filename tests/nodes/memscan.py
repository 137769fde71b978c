#!/usr/bin/env python3
"""Scan a live process's memory for secrets, from outside it.

  python3 tests/nodes/memscan.py PID FILE...

Each FILE holds one secret (surrounding white space dropped, except in a
FILE named *.bin, whose bytes are the secret). Reads
/proc/PID/maps and every readable private or anonymous mapping through
/proc/PID/mem (root may read a non-dumpable process's memory) and prints,
per secret, "found <FILE> at <address> in <mapping>" or "absent <FILE>".
Exit 0 when it could read the process, 2 when it could not.
"""
import re
import sys


def regions(pid):
    with open("/proc/%d/maps" % pid) as f:
        for line in f:
            m = re.match(r"([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)", line)
            start, end, perms, name = int(m.group(1), 16), int(m.group(2), 16), m.group(3), \
                m.group(4)
            if perms[0] != "r" or name in ("[vvar]", "[vsyscall]"):
                continue
            yield start, end, name or "[anon]"


def main():
    pid = int(sys.argv[1])
    secrets = []
    for path in sys.argv[2:]:
        with open(path, "rb") as f:
            data = f.read()
        secrets.append((path, data if path.endswith(".bin") else data.strip()))
    found = {p: None for p, _ in secrets}
    try:
        mem = open("/proc/%d/mem" % pid, "rb", 0)
    except OSError as e:
        print("cannot read the memory of %d: %s" % (pid, e))
        return 2
    scanned = 0
    with mem:
        for start, end, name in regions(pid):
            try:
                mem.seek(start)
                data = mem.read(end - start)
            except (OSError, OverflowError, ValueError):
                continue
            scanned += len(data)
            for path, s in secrets:
                i = data.find(s)
                if i >= 0 and found[path] is None:
                    found[path] = "%#x in %s" % (start + i, name)
    if scanned == 0:
        print("read nothing of %d" % pid)
        return 2
    print("scanned %d bytes of %d" % (scanned, pid))
    for path, _ in secrets:
        print(("found %s at %s" % (path, found[path])) if found[path] else ("absent " + path))
    return 0


if __name__ == "__main__":
    sys.exit(main())

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


HUGE = 1 << 30
CHUNK = 16 << 20


def scan(mem, start, end, name, secrets, found):
    """Look for each secret in [start, end), in chunks that overlap by the
    longest secret; returns the bytes read."""
    over = max(len(s) for _, s in secrets) - 1
    got, pos = 0, start
    while pos < end:
        n = min(CHUNK + over, end - pos)
        try:
            mem.seek(pos)
            data = mem.read(n)
        except (OSError, OverflowError, ValueError):
            return got
        got += len(data)
        for path, s in secrets:
            i = data.find(s)
            if i >= 0 and found[path] is None:
                found[path] = "%#x in %s" % (pos + i, name)
        pos += CHUNK
    return got


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
    scanned, skipped = 0, 0
    with mem:
        for start, end, name in regions(pid):
            if end - start > HUGE:      # a sanitizer's shadow: nothing of ours
                skipped += 1
                continue
            scanned += scan(mem, start, end, name, secrets, found)
    if scanned == 0:
        print("read nothing of %d" % pid)
        return 2
    print("scanned %d bytes of %d (%d mappings over 1 GiB skipped)" % (scanned, pid, skipped))
    for path, _ in secrets:
        print(("found %s at %s" % (path, found[path])) if found[path] else ("absent " + path))
    return 0


if __name__ == "__main__":
    sys.exit(main())

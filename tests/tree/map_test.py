#!/usr/bin/env python3
"""docs/internals.md is the map of the code: every source file of host/
and stdlib/ is named in it (by its path, `host/lock.c`, or within its
folder's list, `lock.c`), and every engine module under the heading of
its own tier (`### lua/core: ...` names `tables.lua`; `### lua/backend`
names `mock/clock.lua`), so a renamed, moved or new file shows up here
until the map says what it is and where it sits.
Prints one "ok"/"not ok" line per check and "N passed, N failed".
"""
import glob
import os
import re

from treecheck import ROOT, check, finish

with open(os.path.join(ROOT, "docs", "internals.md"), encoding="utf-8") as f:
    MAP = f.read()

missing = []
for pattern, folder in (("host/*.c", "host"), ("stdlib/*.lua", "stdlib")):
    for path in sorted(glob.glob(os.path.join(ROOT, pattern),
                                 recursive=True)):
        if path.endswith("_test.lua"):
            continue
        rel = os.path.relpath(path, ROOT)
        inside = os.path.relpath(path, os.path.join(ROOT, folder))
        if rel not in MAP and "`%s`" % inside not in MAP:
            missing.append(rel)
check(not missing, "docs/internals.md names every source file (%d not)"
      % len(missing), missing)


def sections(text):
    """'### lua/<tier>...' heading -> the text up to the next heading."""
    out, cur = {}, None
    for line in text.split("\n"):
        if line.startswith("#"):
            m = re.match(r"### (lua/\w+)\b", line)
            cur = m.group(1) if m else None
            if cur:
                out[cur] = ""
        elif cur:
            out[cur] += line + "\n"
    return out


TIERS = sections(MAP)
misplaced = []
for path in sorted(glob.glob(os.path.join(ROOT, "lua", "**", "*.lua"),
                             recursive=True)):
    rel = os.path.relpath(path, ROOT)
    parts = rel.split(os.sep)
    tier = "/".join(parts[:2])
    inside = "/".join(parts[2:])
    if len(parts) < 3 or "`%s`" % inside not in TIERS.get(tier, ""):
        misplaced.append(rel)
check(len(TIERS) == 4, "docs/internals.md has a section per tier (%s)"
      % ", ".join(sorted(TIERS)), [])
check(not misplaced, "each engine module is named under its tier's "
      "heading (%d not)" % len(misplaced), misplaced)
finish()

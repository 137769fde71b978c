#!/usr/bin/env python3
"""docs/internals.md is the map of the code: every source file of host/,
lua/ and stdlib/ is named in it (by its path, `host/lock.c`, or within
its folder's list, `lock.c`, `mock/clock.lua`), so a renamed or new
file shows up here until the map says what it is.
Prints one "ok"/"not ok" line per check and "N passed, N failed".
"""
import glob
import os

from treecheck import ROOT, check, finish

with open(os.path.join(ROOT, "docs", "internals.md"), encoding="utf-8") as f:
    MAP = f.read()

missing = []
for pattern, folder in (("host/*.c", "host"), ("lua/**/*.lua", "lua"),
                        ("stdlib/*.lua", "stdlib")):
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
finish()

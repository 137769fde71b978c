#!/usr/bin/env python3
"""The rules that C and Lua both need have one value: where a constant
must exist on both sides of the broker, the two are held equal here.
  - the default timeout of a run: host/luax.h UH_DEFAULT_TIMEOUT and
    lua/core/run.lua DEFAULT_TIMEOUT, and no bare 900 elsewhere in host/
    or lua/ (each use names the constant).
Prints one "ok"/"not ok" line per check and "N passed, N failed".
"""
import glob
import os
import re

from treecheck import ROOT, check, finish


def read(rel):
    with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
        return f.read()


c = re.search(r"#define UH_DEFAULT_TIMEOUT (\d+)", read("host/luax.h"))
lua = re.search(r"^M\.DEFAULT_TIMEOUT = (\d+)", read("lua/core/run.lua"),
                re.M)
check(c and lua and c.group(1) == lua.group(1),
      "the default timeout is one value in C and Lua (%s, %s)"
      % (c and c.group(1), lua and lua.group(1)), [])
bare = []
for path in glob.glob(os.path.join(ROOT, "host", "*.[ch]")) + \
        glob.glob(os.path.join(ROOT, "lua", "**", "*.lua"), recursive=True):
    rel = os.path.relpath(path, ROOT)
    for n, line in enumerate(read(rel).split("\n"), 1):
        code = re.split(r"--|/\*|//", line)[0]
        if re.search(r"(?<![\w.])900(?![\w.])", code) and \
                "DEFAULT_TIMEOUT" not in code:
            bare.append("%s:%d: %s" % (rel, n, line.strip()))
check(not bare, "no bare 900 (a timeout) outside the two constants", bare)
finish()

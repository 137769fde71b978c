#!/usr/bin/env python3
"""The Lua bindings of host/ keep docs/internals.md's rules ("Build",
Style):
  - every luaL_Reg table is sorted by name (as strcmp orders them), its
    {NULL, NULL} last;
  - the C function of an entry is <stem>_<name>, where the stem is the
    table's name without _funcs or _methods (fs_funcs: "pin" is fs_pin,
    wherever it is defined: a binding in another file of the family,
    host/fs_pin.c, has the same form); a metamethod (__gc, __close) may
    instead name the function of another entry of its table (the
    `close` it stands for);
  - in a file that opens a family (luaopen_uphook_<family>), the
    luaL_Reg tables and that function end the file, and its _funcs
    table is <family>_funcs.
Doctored copies of real files (a table unsorted, a binding renamed, a
function after the tables) must fail the same checks, so that the test
is shown to be able to fail. Prints "ok"/"not ok" lines, then "N passed,
N failed".
"""
import glob
import os
import re

from treecheck import ROOT, check, check_doctored, finish

TABLE = re.compile(r"(?:static\s+)?const\s+(?:struct\s+)?luaL_Reg\s+(\w+)"
                   r"\s*\[\]\s*=\s*\{(.*?)\};", re.S)
ENTRY = re.compile(r"\{\s*\"([^\"]+)\"\s*,\s*(\w+)\s*\}")
FUNC = re.compile(r"^[a-z][^;{}\n]*?\b(\w+)\([^;{}]*\)\s*\{", re.M)
OPEN = re.compile(r"^int\s+luaopen_uphook_(\w+)\s*\(", re.M)


def problems_of(name, text):
    """The rule breaks of one C file, as "name: what"."""
    out, tables = [], list(TABLE.finditer(text))
    for t in tables:
        entries = ENTRY.findall(t.group(2))
        names = [e[0] for e in entries]
        if names != sorted(names, key=lambda s: s.encode()):
            out.append("%s: %s is not sorted: %s" % (name, t.group(1),
                                                      ", ".join(names)))
        if not re.search(r"\{\s*NULL\s*,\s*NULL\s*\}\s*,?\s*$", t.group(2)):
            out.append("%s: %s does not end with {NULL, NULL}"
                       % (name, t.group(1)))
        stem = re.sub(r"_(funcs|methods)$", "", t.group(1))
        funcs = {f for n, f in entries if not n.startswith("__")}
        for n, f in entries:
            want = "%s_%s" % (stem, n.lstrip("_"))
            if f != want and not (n.startswith("__") and f in funcs):
                out.append("%s: %s: \"%s\" is %s, not %s"
                           % (name, t.group(1), n, f, want))
    opened = OPEN.search(text)
    if opened and tables:
        family = opened.group(1)
        rest = text[tables[0].start():]
        after = [m.group(1) for m in FUNC.finditer(rest)
                 if not m.group(1).startswith("luaopen_uphook_")]
        if after:
            out.append("%s: %s after the luaL_Reg tables (they and "
                       "luaopen_uphook_%s end the file)"
                       % (name, ", ".join(after), family))
        if opened.start() < tables[-1].start():
            out.append("%s: luaopen_uphook_%s before a luaL_Reg table"
                       % (name, family))
        stems = [t.group(1) for t in tables if t.group(1).endswith("_funcs")]
        if stems and "%s_funcs" % family not in stems:
            out.append("%s: luaopen_uphook_%s has no %s_funcs (%s)"
                       % (name, family, family, ", ".join(stems)))
    return out, sum(len(ENTRY.findall(t.group(2))) for t in tables)


texts = {}
for path in sorted(glob.glob(os.path.join(ROOT, "host", "*.c"))):
    with open(path, encoding="utf-8") as f:
        texts[os.path.relpath(path, ROOT)] = f.read()
problems, entries = [], 0
for rel, text in texts.items():
    p, n = problems_of(rel, text)
    problems += p
    entries += n
check(not problems and entries > 80, "host/'s luaL_Reg tables are sorted, "
      "their C names <family>_<name>, and they end their file "
      "(%d entries)" % entries, problems)

DOCTORED = [
    ("a table unsorted", "host/fs.c",
     '  {"backup", fs_backup},\n  {"hash", fs_hash},\n',
     '  {"hash", fs_hash},\n  {"backup", fs_backup},\n', "is not sorted"),
    ("a binding in another file named otherwise", "host/fs.c",
     '{"pin", fs_pin}', '{"pin", uh_fs_l_pin}', "not fs_pin"),
    ("a function after the tables", "host/json.c",
     "  uh_setnullarray(L);\n  return 1;\n}\n",
     "  uh_setnullarray(L);\n  return 1;\n}\n\nint json_late(void)\n{\n"
     "  return 0;\n}\n", "json_late after the luaL_Reg tables"),
]
check_doctored(DOCTORED, texts, problems_of)
finish()

#!/usr/bin/env python3
"""The layering rule of lua/engine/phases.lua, checked on the sources.

C primitives (host/) -> the Lua engine (lua/, `uphook.*`) -> stdlib and
hooks; nothing imports upward.  Checked:
  - the engine's modules form no import cycle, counting the requires
    inside functions too (a lazy require is still an import);
  - no engine module requires a stdlib module (stdlib sits above);
  - stdlib and hooks require no engine module, except that
    stdlib/semver.lua and stdlib/ip.lua hand on uphook.core.semver and
    uphook.core.ip, stdlib/manifest.lua uses uphook.core.yamlpos (and
    test files use the harness, uphook.test).
Prints one "ok"/"not ok" line per check and "N passed, N failed".
"""
import glob
import os
import re
import sys

from treecheck import ROOT, check, finish

REQ = re.compile(r"""\brequire\s*\(?\s*["']([\w.]+)["']""")


def module_of(path):
    rel = os.path.relpath(path, ROOT)
    if rel.startswith("lua" + os.sep):
        return "uphook." + rel[4:-4].replace(os.sep, ".")
    return rel[len("stdlib/"):-4].replace(os.sep, ".")


def requires(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    out = []
    for n, line in enumerate(text.split("\n"), 1):
        code = line.split("--", 1)[0]
        for m in REQ.finditer(code):
            out.append((n, m.group(1)))
    return out


def sources(pattern):
    return sorted(p for p in glob.glob(os.path.join(ROOT, pattern),
                                       recursive=True)
                  if not p.endswith("_test.lua"))


engine = {module_of(p): p for p in sources("lua/**/*.lua")}
stdlib = {module_of(p): p for p in sources("stdlib/*.lua")}
graph = {}
upward = []
for mod, path in engine.items():
    graph[mod] = []
    for n, name in requires(path):
        rel = "%s:%d" % (os.path.relpath(path, ROOT), n)
        if name in engine:
            graph[mod].append((name, rel))
        elif name in stdlib:
            upward.append("%s requires the stdlib module %s" % (rel, name))

# cycles: depth-first search, reporting each cycle once by its path
cycles, state = [], {}


def visit(mod, stack):
    state[mod] = "open"
    stack.append(mod)
    for dep, rel in graph[mod]:
        if state.get(dep) == "open":
            cyc = stack[stack.index(dep):] + [dep]
            cycles.append(" -> ".join(cyc) + " (closed at " + rel + ")")
        elif dep not in state:
            visit(dep, stack)
    stack.pop()
    state[mod] = "done"


for m in sorted(graph):
    if m not in state:
        visit(m, [])
check(not cycles, "the engine's modules form no import cycle", cycles)

# the tiers: what each may require (docs/internals.md, "The layers")
MAY = {"core": {"core"}, "engine": {"core", "engine"},
       "backend": {"core", "backend"},
       "cmd": {"core", "engine", "backend", "cmd"}}


def tier_of(mod):
    parts = mod.split(".")
    return parts[1] if len(parts) > 2 and parts[1] in MAY else None


def is_command(mod):
    with open(engine[mod], encoding="utf-8") as f:
        return re.search(r"^function M\.main\b", f.read(), re.M) is not None


outside = sorted(m for m in engine if tier_of(m) is None)
check(not outside, "every engine module lives in a tier folder "
      "(lua/core, lua/engine, lua/backend, lua/cmd)", outside)
up, across = [], []
for mod in sorted(graph):
    for dep, rel in graph[mod]:
        mine, theirs = tier_of(mod), tier_of(dep)
        if mine and theirs and theirs not in MAY[mine]:
            up.append("%s (%s) requires %s (%s)" % (rel, mine, dep, theirs))
        if mine == "cmd" and theirs == "cmd" and mod != "uphook.cmd.cli" \
                and is_command(mod) and is_command(dep):
            across.append("%s: the command %s requires the command %s"
                          % (rel, mod, dep))
check(not up, "no tier requires a tier above it or beside it", up)
check(not across, "no command requires another command (but the "
      "dispatcher, lua/cmd/cli.lua)", across)
commands = [m for m in engine if tier_of(m) == "cmd" and is_command(m)]
check(len(commands) >= 5 and "uphook.cmd.list" in commands,
      "the checker sees the commands (%s)" % ", ".join(sorted(commands)), [])
check(not upward, "no engine module requires a stdlib module", upward)

top = []
for path in sources("stdlib/*.lua") + sources("hooks/**/*.lua"):
    rel = os.path.relpath(path, ROOT)
    for n, name in requires(path):
        if not name.startswith("uphook."):
            continue
        # stdlib/X.lua may hand on the engine's uphook.core.X (semver, ip)
        if rel == os.path.join("stdlib", name.split(".")[-1] + ".lua") \
                and name in ("uphook.core.semver", "uphook.core.ip"):
            continue
        # manifest.load places values by the rules lint reads them by
        if rel == os.path.join("stdlib", "manifest.lua") \
                and name == "uphook.core.yamlpos":
            continue
        top.append("%s:%d requires the engine module %s" % (rel, n, name))
check(not top, "stdlib and hooks require no engine module", top)
check(len(engine) > 10 and "uphook.engine.phases" in graph
      and any(d == "uphook.engine.prims" for d, _ in graph["uphook.engine.phases"]),
      "the checker sees the engine (and engine -> prims)", [])

finish()

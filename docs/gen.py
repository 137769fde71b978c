#!/usr/bin/env python3
"""Generate docs/reference.md from the LuaCATS annotations.

Sources: docs/meta/uphook.lua (the hook globals), stdlib/*.lua (the
standard library) and docs/meta/uphook/test.lua (the test harness).
Only documented items are rendered: a function, class, alias or field
with a `---` block right above it.

    python3 docs/gen.py            write docs/reference.md
    python3 docs/gen.py --check    exit 1 when docs/reference.md is stale
    python3 docs/gen.py --stdout   print it
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "docs", "reference.md")
STDLIB = ["semver", "migrate", "manifest", "retry", "ip", "values"]
# where a stdlib module's annotated source lives when stdlib/ re-exports
# an engine module
STDLIB_SRC = {"semver": os.path.join("lua", "core", "semver.lua"),
              "ip": os.path.join("lua", "core", "ip.lua")}
HOOK_CLASSES = ["uphook.Hook", "uphook.Param", "uphook.Ctx"]


def split_type(s):
    """Split a LuaCATS type off the front of s: (type, rest)."""
    depth, i, n = 0, 0, len(s)
    while i < n:
        ch = s[i]
        if ch in "([{<":
            depth += 1
        elif ch in ")]}>":
            depth -= 1
        elif ch.isspace() and depth == 0:
            before = s[:i].rstrip()
            after = s[i:].lstrip()
            if before.endswith((":", "|", ",")) or after.startswith("|"):
                i += 1
                continue
            break
        i += 1
    return s[:i].strip(), s[i:].strip()


class Block:
    def __init__(self):
        self.text, self.tags = [], []


def parse(path):
    """Items of one file: intro text, allow lines, and documented
    declarations in file order."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    intro, allow, items = [], [], []
    i = 0
    # the intro: the leading comment lines
    while i < len(lines) and lines[i].startswith("--"):
        line = lines[i]
        m = re.match(r"^-- allow (\w+): (.*)$", line)
        if m:
            allow.append((m.group(1), m.group(2).split()))
        elif line.startswith("---@meta"):
            pass
        elif line.startswith("---"):
            intro.append(line[4:] if line.startswith("--- ") else line[3:])
        i += 1
    block = None
    for line in lines[i:]:
        if line.startswith("---"):
            block = block or Block()
            body = line[3:]
            if body.startswith("@"):
                block.tags.append(body[1:])
            else:
                block.text.append(body[1:] if body.startswith(" ") else body)
            continue
        if block is not None:
            items.append((block, line))
        block = None
    return intro, allow, items


def tag(block, name):
    return [t[len(name):].strip() for t in block.tags
            if t == name or t.startswith(name + " ")]


def esc(s):
    return s.replace("|", "\\|")


def code(s):
    return "`" + esc(s) + "`" if s else ""


def params_table(block):
    rows = []
    for p in tag(block, "param"):
        name, rest = (p.split(None, 1) + [""])[:2]
        typ, desc = split_type(rest)
        rows.append("| `%s` | %s | %s |" % (name, code(typ), esc(desc)))
    if not rows:
        return []
    return ["| parameter | type | |", "|---|---|---|"] + rows + [""]


def returns(block):
    out = []
    for r in tag(block, "return"):
        typ, rest = split_type(r)
        if rest.startswith("#"):
            name, desc = "", rest[1:].strip()
        else:
            m = re.match(r"^([A-Za-z_]\w*)\s*(.*)$", rest)
            name, desc = (m.group(1), m.group(2)) if m else ("", rest)
        s = code(typ)
        if name:
            s += " " + name
        if desc:
            s += " — " + desc
        out.append(s)
    if not out:
        return []
    if len(out) == 1:
        return ["**Returns** " + out[0], ""]
    return ["**Returns**", ""] + ["%d. %s" % (k + 1, r)
                                  for k, r in enumerate(out)] + [""]


def fields_table(fields):
    rows = []
    for f in fields:
        name, rest = (f.split(None, 1) + [""])[:2]
        typ, desc = split_type(rest)
        rows.append("| `%s` | %s | %s |" % (esc(name), code(typ), esc(desc)))
    if not rows:
        return []
    return ["| field | type | |", "|---|---|---|"] + rows + [""]


def text(block):
    return block.text + ([""] if block.text else [])


# "Since hook API 0.2." in a doc block: the hook API version the item
# appeared in (CHANGELOG.md, docs/guide.md "Migrating hooks"); without it,
# 0.1, the API before the versioned one. Rendered first, in every item.
SINCE = re.compile(r"^Since hook API (\d+\.\d+)\.$")


def since(block):
    """The item's line 'Since hook API X.Y.', taken out of its text."""
    found = [l for l in block.text if SINCE.match(l.strip())]
    block.text = [l for l in block.text if not SINCE.match(l.strip())]
    while block.text and not block.text[-1].strip():
        block.text.pop()
    v = SINCE.match(found[0].strip()).group(1) if found else "0.1"
    return ["*Since hook API %s.*" % v, ""]


def render_function(block, title):
    return (["#### `%s`" % title, ""] + since(block) + text(block)
            + params_table(block) + returns(block))


def render_class(block):
    name = tag(block, "class")[0].split(":")[0].strip()
    return (["#### `%s`" % name, ""] + text(block)
            + fields_table(tag(block, "field")))


def declarations(items, module=None):
    """Classify items: (kind, name, block, line)."""
    out = []
    for block, line in items:
        if "Test seam" in " ".join(block.text[:1]):
            continue
        if tag(block, "package"):
            continue
        if tag(block, "class"):
            out.append(("class", tag(block, "class")[0], block, line))
        elif tag(block, "alias"):
            out.append(("alias", tag(block, "alias")[0], block, line))
        m = re.match(r"^(local )?function ([\w.:]+)\((.*?)\)", line)
        if m:
            name = m.group(2)
            if m.group(1) and name != module:
                continue
            if module and name.startswith("M."):
                name = module + name[1:]
            if name.startswith("Env:"):
                name = "env" + name[3:]
            if name.startswith("Migration:"):
                name = "m" + name[9:]
            out.append(("function", "%s(%s)" % (name, m.group(3)), block,
                        line))
            continue
        m = re.match(r"^(\w+) = \{\}", line)
        if m and not tag(block, "class"):
            out.append(("table", m.group(1), block, line))
            continue
        m = re.match(r"^(\w+\.\w+) = ", line)
        if m and tag(block, "type"):
            out.append(("field", m.group(1), block, line))
    return out


def render_alias(block):
    name, rest = (tag(block, "alias")[0].split(None, 1) + [""])[:2]
    return ["#### `%s`" % name, ""] + text(block) + ["Type: " + code(rest),
                                                     ""]


def render_hooks(out):
    intro, allow, items = parse(os.path.join(ROOT, "docs", "meta",
                                             "uphook.lua"))
    decls = declarations(items)
    out += ["## The hook environment", ""]
    out += ["Source: `docs/meta/uphook.lua` (LuaLS definitions of what "
            "host/child.c and lua/engine/prims/ implement). ✎ marks a "
            "primitive that changes something: allowed only in `upgrade`, "
            "journaled, and only recorded under `plan`.", ""]
    out += ["### The hook file", ""]
    classes = {d[1].split(":")[0].strip(): d for d in decls
               if d[0] == "class"}
    for name in HOOK_CLASSES:
        out += render_class(classes[name][2])
    current = None
    for kind, name, block, line in decls:
        if kind == "table":
            current = name
            out += ["### `%s`" % name, ""] + text(block)
        elif kind == "function":
            out += render_function(block, name)
        elif kind == "field":
            out += ["#### `%s`" % name, ""] + since(block) + text(block)
            out += ["Type: " + code(tag(block, "type")[0]), ""]
    out += ["### Types", ""]
    for kind, name, block, line in decls:
        if kind == "class" and name.split(":")[0].strip() not in HOOK_CLASSES:
            out += render_class(block)
    out += ["### The Lua standard library in hooks", ""]
    keep = [l for l in intro if not l.startswith("LuaLS") ]
    out += ["Exactly these standard names exist in a hook (the allow list "
            "of `host/child.c`):", ""]
    out += ["| library | names |", "|---|---|"]
    for lib, names in allow:
        out.append("| %s | %s |" % (lib, " ".join("`%s`" % n
                                                  for n in names)))
    out.append("")
    tail = []
    for l in keep:
        if l.startswith("Changed on the way in") or tail:
            tail.append(l)
    out += tail + [""]


def render_stdlib(out):
    out += ["## The standard library", ""]
    out += ["Pure Lua modules embedded in uphook; a hook loads them with "
            "`require \"<name>\"`. Source: `stdlib/*.lua` (semver: "
            "`lua/core/semver.lua`, which the engine shares).", ""]
    for mod in STDLIB:
        src = STDLIB_SRC.get(mod, os.path.join("stdlib", mod + ".lua"))
        intro, _, items = parse(os.path.join(ROOT, src))
        out += ["### `%s`" % mod, ""]
        if intro and intro[0].startswith(mod + ":"):
            intro = [intro[0][len(mod) + 1:].strip()] + intro[1:]
        out += intro + [""]
        decls = declarations(items, module=mod)
        for kind, name, block, line in decls:
            if kind == "function":
                out += render_function(block, name)
        for kind, name, block, line in decls:
            if kind == "class":
                out += render_class(block)
            elif kind == "alias":
                out += render_alias(block)


def render_test(out):
    intro, _, items = parse(os.path.join(ROOT, "docs", "meta", "uphook",
                                         "test.lua"))
    out += ["## The test harness: `uphook.test`", ""]
    if intro and intro[0].startswith("uphook.test:"):
        intro = [intro[0][len("uphook.test:"):].strip()] + intro[1:]
    out += intro + [""]
    decls = declarations(items)
    for kind, name, block, line in decls:
        if kind == "function":
            out += render_function(block, name)
    out += ["### Types", ""]
    for kind, name, block, line in decls:
        if kind == "class" and tag(block, "field"):
            out += render_class(block)
        elif kind == "alias":
            out += render_alias(block)


def generate():
    out = ["<!-- Generated by docs/gen.py from docs/meta/*.lua and "
           "stdlib/*.lua: edit those, then run `make docs`. -->", "",
           "# uphook reference", "",
           "Every global, standard-library module and test-harness "
           "function a hook author uses. The guide is "
           "[guide.md](guide.md); the contract is "
           "[contract.md](contract.md).", "",
           "- [The hook environment](#the-hook-environment)",
           "- [The standard library](#the-standard-library)",
           "- [The test harness](#the-test-harness-uphooktest)", ""]
    render_hooks(out)
    render_stdlib(out)
    render_test(out)
    text_out = "\n".join(out)
    text_out = re.sub(r"\n{3,}", "\n\n", text_out).rstrip("\n") + "\n"
    return text_out


def main(argv):
    doc = generate()
    if "--stdout" in argv:
        sys.stdout.write(doc)
        return 0
    if "--check" in argv:
        try:
            with open(OUT, encoding="utf-8") as f:
                cur = f.read()
        except OSError:
            cur = None
        if cur != doc:
            print("docs/reference.md is stale: run `make docs`")
            return 1
        return 0
    with open(OUT, "w", encoding="utf-8") as f:
        f.write(doc)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

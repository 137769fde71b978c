#!/usr/bin/env python3
"""The LuaLS annotations of lua/, stdlib/ and hooks/ say what the code
does (LuaLS itself is not a Debian package, so nothing else reads them
in make test).

A function's annotations are the `---` lines right above the line where
it is defined (`function M.f(...)`, `local function f(...)`, `x =
function(...)`, a table field `f = function(...)`). Rules:
  - `---@param` and `---@return` are only above a function;
  - each `---@param NAME` names a parameter of that function (`...` for
    a vararg; `self` for a method defined with `:`);
  - a function that has a `---@return` returns as many values as its
    `---@return` lines declare, counted as LuaLS counts them: a line is
    `TYPE [NAME], TYPE [NAME] ...`, a comma after a type or its name
    starting the next value, and anything else after the name a
    comment; `fun(...): A, B` is one type. What the function returns is
    the most values one of its own `return` statements gives (a return
    in a nested function is that function's). Checkable, and so
    checked, only where every return gives a fixed count: a return
    ending in a call or `...` can give any, and its function is skipped;
    a function that raises on every path but returns nowhere is
    skipped too (its `---@return` is what callers would get);
  - a function whose annotations have `---@param` and no `---@return`
    returns no value (a return with values needs its `---@return`).
Doctored copies of real functions (a misnamed parameter, a value added
to a return, the @return taken away, a comment after a @return's name,
the annotations parted from their function; each edit made to the first
function of the tree it fits) must fail the same checks, so that the
test is shown to be able to fail. Prints "ok"/"not ok" lines, then "N passed,
N failed".
"""
import glob
import os
import re

from treecheck import ROOT, check, check_doctored, finish

KEYWORDS = {"and", "break", "do", "else", "elseif", "end", "false", "for",
            "function", "goto", "if", "in", "local", "nil", "not", "or",
            "repeat", "return", "then", "true", "until", "while"}
TOKEN = re.compile(r"""
    (?P<space>[ \t\r]+)
  | (?P<newline>\n)
  | (?P<comment>--(?:\[(?P<ceq>=*)\[[\s\S]*?\](?P=ceq)\]|[^\n]*))
  | (?P<long>\[(?P<leq>=*)\[[\s\S]*?\](?P=leq)\])
  | (?P<string>"(?:\\[\s\S]|[^"\\\n])*"|'(?:\\[\s\S]|[^'\\\n])*')
  | (?P<number>0[xX][0-9a-fA-F.]+(?:[pP][+-]?\d+)?|\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)
  | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<op>\.\.\.|\.\.|==|~=|<=|>=|<<|>>|//|::|[-+*/%^#&~|<>=(){}\[\];:,.])
""", re.X)


def tokens(text):
    """(kind, value, line) for each token but spaces and comments."""
    out, line, pos = [], 1, 0
    while pos < len(text):
        m = TOKEN.match(text, pos)
        if not m:
            raise ValueError("line %d: cannot read %r"
                             % (line, text[pos:pos + 20]))
        kind = next(k for k in ("space", "newline", "comment", "long",
                                "string", "number", "name", "op")
                    if m.group(k) is not None)
        v = m.group(0)
        if kind == "name" and v in KEYWORDS:
            kind = "kw"
        if kind == "long":
            kind = "string"
        if kind not in ("space", "newline", "comment"):
            out.append((kind, v, line))
        line += v.count("\n")
        pos = m.end()
    return out


OPENS = {"function", "if", "do", "repeat"}
CLOSES = {"end", "until"}
ENDS = {"end", "else", "elseif", "until", ";", "return"}


class Function:
    def __init__(self, line, params, method):
        self.line, self.params, self.method = line, params, method
        self.returns = []   # (count, or None for any number; its line)


PAIRS = {"(": ")", "{": "}", ")": "(", "}": "{"}


def partner(toks, k, step=1):
    """The index of the bracket that matches toks[k]: forward from an
    opening one (step 1), back from a closing one (step -1)."""
    mine, other, depth = toks[k][1], PAIRS[toks[k][1]], 0
    while 0 <= k < len(toks):
        if toks[k][1] == mine:
            depth += 1
        elif toks[k][1] == other:
            depth -= 1
            if depth == 0:
                return k
        k += step
    return max(0, min(k, len(toks) - 1))


def return_count(toks, i):
    """The values of the return at toks[i]: a count, or None when its
    last expression is a call or `...`; and where the statement ends."""
    j, depth, commas, n = i + 1, 0, 0, len(toks)
    start = j
    while j < n:
        kind, v, _ = toks[j]
        if depth == 0 and kind in ("kw", "op") and v in ENDS:
            break
        if kind == "kw" and v == "function":
            j = skip_function(toks, j)
            j += 1
            continue
        if v in ("(", "{", "["):
            depth += 1
        elif v in (")", "}", "]"):
            depth -= 1
        elif v == "," and depth == 0:
            commas += 1
        j += 1
    if j == start:
        return 0, j
    last = toks[j - 1]
    if last[1] == "...":
        return None, j
    # a call's arguments end the list: (...), {...} or a string after a
    # name, `)` or `]`
    arg = None
    if last[1] in (")", "}"):
        arg = partner(toks, j - 1, -1)
    elif last[0] == "string":
        arg = j - 1
    if arg is not None and arg - 1 >= start:
        before = toks[arg - 1]
        if before[0] == "name" or before[1] in (")", "]"):
            return None, j
    return commas + 1, j


def skip_function(toks, i):
    """toks[i] is `function`: the index of its `end`."""
    depth, j = 0, i
    while j < len(toks):
        kind, v, _ = toks[j]
        if kind == "kw" and v in OPENS:
            depth += 1
        elif kind == "kw" and v in CLOSES:
            depth -= 1
            if depth == 0:
                return j
        j += 1
    return j


def functions(toks):
    """Every function of a chunk, by the line of its `function` keyword."""
    found = {}

    def walk(i, end, fn):
        j = i
        while j < end:
            kind, v, line = toks[j]
            if kind == "kw" and v == "function":
                k = j + 1
                method = False
                while toks[k][1] != "(":
                    if toks[k][1] == ":":
                        method = True
                    k += 1
                close = partner(toks, k)
                params = [t[1] for t in toks[k + 1:close] if t[1] != ","]
                f = Function(line, params, method)
                found.setdefault(line, f)
                stop = skip_function(toks, j)
                walk(close + 1, stop, f)
                j = stop + 1
                continue
            if kind == "kw" and v == "return" and fn is not None:
                # a function in the returned values is walked as any other
                fn.returns.append((return_count(toks, j)[0], line))
            j += 1
    walk(0, len(toks), None)
    return found


def return_types(text):
    """How many values a `---@return` text declares, as LuaLS reads it."""
    s, i, n = text, 0, 0

    def space(i):
        while i < len(s) and s[i] in " \t":
            i += 1
        return i

    def one_type(i):
        """The end of the type at i: unions (a|b), generics, tables,
        string literals, and fun(...): R1, R2 with all its returns."""
        i = space(i)
        depth, quote = 0, None
        while i < len(s):
            c = s[i]
            if quote:
                if c == quote:
                    quote = None
            elif c in "\"'":
                quote = c
            elif c in "({[<":
                depth += 1
            elif c in ")}]>":
                depth -= 1
            elif depth == 0 and c in " \t,":
                j = space(i)
                if s[i - 1] == ":":            # fun(...): its returns
                    i = one_type(j)
                    while space(i) < len(s) and s[space(i)] == ",":
                        i = one_type(space(i) + 1)
                    return i
                if s[i - 1] == "|" or (j < len(s) and s[j] == "|"):
                    i = j if s[i - 1] == "|" else space(j + 1)
                    continue
                break
            i += 1
        return i

    while True:
        i = space(i)
        if i >= len(s):
            break
        i = one_type(i)
        n += 1
        i = space(i)
        m = re.match(r"\.\.\.|[A-Za-z_][A-Za-z0-9_]*", s[i:])
        if m and not s.startswith(",", i):
            i = space(i + m.end())
        if i < len(s) and s[i] == ",":
            i += 1
            continue
        break
    return n


def doc_blocks(lines):
    """line number of the line a `---` block precedes -> the block's
    annotations as [tag, text, line], continuation lines joined to
    theirs."""
    blocks, i = {}, 0
    while i < len(lines):
        if not lines[i].lstrip().startswith("---"):
            i += 1
            continue
        start = i
        while i < len(lines) and lines[i].lstrip().startswith("---"):
            i += 1
        tags = []
        for at in range(start, i):
            body = lines[at].lstrip()[3:]
            m = re.match(r"\s*@(\w+)\s*(.*)$", body)
            if m:
                tags.append([m.group(1), m.group(2), at + 1])
            elif tags and tags[-1][1].count("{") > tags[-1][1].count("}"):
                tags[-1][1] += " " + body.strip()
        blocks[i + 1] = tags
    return blocks


def problems_of(name, text):
    """The rule breaks of one file's text, as "name:line: what"."""
    toks = tokens(text)
    funcs = functions(toks)
    out, checked = [], [0, 0]
    for line, tags in doc_blocks(text.split("\n")).items():
        f = funcs.get(line)
        if f is None:
            if any(t[0] in ("param", "return") for t in tags):
                out.append("%s:%d: @param or @return above no function"
                           % (name, line))
            continue
        params = [t for t in tags if t[0] == "param"]
        rets = [t for t in tags if t[0] == "return"]
        names = set(f.params) | ({"self"} if f.method else set())
        for _, body, _ in params:
            pname = re.match(r"(\.\.\.|[A-Za-z_][A-Za-z0-9_]*)", body)
            pname = pname.group(1) if pname else body
            checked[0] += 1
            if pname not in names:
                out.append("%s:%d: @param %s is not a parameter of function(%s)"
                           % (name, line, pname, ", ".join(f.params)))
        if not rets and not params:
            continue
        if any(r is None for r, _ in f.returns):
            continue
        declared = sum(return_types(body) for _, body, _ in rets)
        given = max(r for r, _ in f.returns) if f.returns else 0
        if rets and not f.returns:
            continue
        checked[1] += 1
        if declared != given:
            out.append("%s:%d: @return declares %d value%s, the function "
                       "returns %d" % (name, line, declared,
                                       "" if declared == 1 else "s", given))
    return out, checked


def sources():
    files = []
    for d in ("lua", "stdlib", "hooks", os.path.join("docs", "meta")):
        files += glob.glob(os.path.join(ROOT, d, "**", "*.lua"), recursive=True)
    return sorted(files)


all_problems, totals = [], [0, 0]
texts = {}
for path in sources():
    rel = os.path.relpath(path, ROOT)
    with open(path, encoding="utf-8") as f:
        texts[rel] = f.read()
    p, c = problems_of(rel, texts[rel])
    all_problems += p
    totals[0] += c[0]
    totals[1] += c[1]
check(not all_problems and totals[0] > 500 and totals[1] > 200,
      "every @param names a parameter (%d checked) and every checkable "
      "@return count matches (%d functions)" % tuple(totals), all_problems)

# Doctored copies: each edit of a real function (the first in the tree
# that it fits, so that no one function's text is pinned here) must draw
# the problem named.
def doctor_cases(texts):
    """(what, file, old, new, want) for check_doctored."""
    cases = {}
    for rel, text in sorted(texts.items()):
        lines = text.split("\n")
        funcs = functions(tokens(text))
        for line, tags in sorted(doc_blocks(lines).items()):
            f = funcs.get(line)
            params = [t for t in tags if t[0] == "param"]
            rets = [t for t in tags if t[0] == "return"]
            if f is None or not params:
                continue
            at = params[0][2] - 1
            old = "\n".join(lines[at:line])
            name = re.match(r"\s*---@param\s+(\w+)", lines[at])
            if name and "param" not in cases:
                cases["param"] = ("a misnamed @param", rel, old,
                                  old.replace(name.group(1),
                                              name.group(1) + "_gone", 1),
                                  "@param %s_gone is not a parameter"
                                  % name.group(1))
            if "orphan" not in cases:
                cases["orphan"] = ("annotations parted from their function",
                                   rel, old, old.replace(
                                       "\n" + lines[line - 1],
                                       "\nlocal _ = nil\n" + lines[line - 1]),
                                   "above no function")
            counts = [r for r, _ in f.returns]
            if not rets or not counts or None in counts or max(counts) < 1:
                continue
            most = max(counts)
            where = [ln for r, ln in f.returns if r == most][0]
            ret = lines[where - 1]
            if "added" not in cases and ret.count("return ") == 1:
                cases["added"] = ("a value added to a return", rel,
                                  "\n".join(lines[at:where]),
                                  "\n".join(lines[at:where - 1] + [
                                      ret.replace("return ", "return nil, ")]),
                                  "the function returns %d" % (most + 1))
            if "taken" not in cases:
                first = rets[0][2] - 1
                cases["taken"] = ("its @return taken away", rel,
                                  "\n".join(lines[first:line]),
                                  "\n".join(l for l in lines[first:line]
                                            if "---@return" not in l),
                                  "declares 0 values, the function returns")
            pair = re.match(r"(\s*---@return [\w.|?\[\]]+ \w+)(, .*)$",
                            lines[rets[0][2] - 1])
            if "comment" not in cases and len(rets) == 1 and pair:
                cases["comment"] = ("a comment after a @return's name ends "
                                    "its values, as in LuaLS", rel,
                                    "\n".join(lines[at:line]),
                                    "\n".join(lines[at:line]).replace(
                                        pair.group(0), pair.group(1)
                                        + " (a note)" + pair.group(2)),
                                    "@return declares")
    return [cases[k] for k in ("param", "added", "taken", "comment", "orphan")
            if k in cases]


DOCTORED = doctor_cases(texts)
check(len(DOCTORED) == 5, "five kinds of doctored copy found in the tree",
      ["found: %s" % [c[0] for c in DOCTORED]])
check_doctored(DOCTORED, texts, problems_of)
finish()

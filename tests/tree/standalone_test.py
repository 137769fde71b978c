#!/usr/bin/env python3
"""The repository stands alone, and its contract is docs/.

Checked over the tracked files of host lua stdlib hooks tests docs
Makefile .ci, README.md and CHANGELOG.md:
  - nothing names the folder beside the checkout that the project grew
    from (upstream is cited as canonical/<repo>@<commit>:<path>), nor
    cites the original brief: the contract is docs/contract.md;
  - no file but CHANGELOG.md cites an issue of the project's tracker
    ("issue N", "issues N and M", also across a comment's line break):
    the tracker is not part of the repository, so a comment cites the
    doc section or the test that holds the rule (a weakness found in
    review: its row of docs/security.md's table, by name). An upstream
    issue is cited with its project's name ("MicroK8s issues #4191");
    a doctored copy of a file, with a citation put in, must fail the
    same check, so the check is shown to be able to fail;
  - docs/contract.md has the sections 1 to 8, in order, and every
    "contract.md §N" citation names one of them;
  - every relative link in README.md, CHANGELOG.md and docs/*.md reaches a file, and
    its #anchor a heading of that file.
Prints one "ok"/"not ok" line per check and "N passed, N failed".
"""
import os
import re
import subprocess
import sys

from treecheck import ROOT, check, finish

AREAS = ["host", "lua", "stdlib", "hooks", "tests", "docs", "Makefile",
         ".ci", "README.md", "CHANGELOG.md"]
# spelled in pieces so that this file does not match itself
SHARED = re.compile(r"\.\./" + "shared" + r"\b|/work/" + "shared" + r"\b")
BRIEF = re.compile(r"(?<![\w])" + "SP" + r"EC(?![\w])")
CITE = re.compile(r"contract\.md\s*§\s*(\d+)")
# the word issue (or issues) and a number, with or without "#"; not after
# "MicroK8s ", where the issue is upstream's
ISSUE = re.compile(r"(?<!MicroK8s )\b" + "iss" + r"ues?\s+#?\d+", re.I)
# a comment's line break: the newline, the indent and the comment leader
BREAK = re.compile(r"\n[ \t]*(?:--+|#+|//+|\*(?!/))?[ \t]*")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")

def tracked():
    """The tracked files of AREAS, or every file when this is no git
    checkout (a copy made without .git)."""
    try:
        out = subprocess.run(["git", "-C", ROOT, "ls-files", "-z", "--"]
                             + AREAS, capture_output=True, check=True)
        files = [f for f in out.stdout.decode().split("\0") if f]
        if files:
            return files
    except (OSError, subprocess.CalledProcessError):
        pass
    files = []
    for a in AREAS:
        p = os.path.join(ROOT, a)
        if os.path.isfile(p):
            files.append(a)
        for d, dirs, names in os.walk(p):
            dirs[:] = [x for x in dirs if x != "build"]
            files += [os.path.relpath(os.path.join(d, n), ROOT)
                      for n in names]
    return files


def text_of(rel):
    try:
        with open(os.path.join(ROOT, rel), "rb") as f:
            data = f.read()
    except OSError:
        return None
    if b"\0" in data:
        return None
    return data.decode("utf-8", "replace")


files = tracked()
texts = {f: t for f in files for t in [text_of(f)] if t is not None}

shared, brief = [], []
for f, t in texts.items():
    for n, line in enumerate(t.split("\n"), 1):
        if SHARED.search(line):
            shared.append("%s:%d: %s" % (f, n, line.strip()[:100]))
        if BRIEF.search(line):
            brief.append("%s:%d: %s" % (f, n, line.strip()[:100]))
check(not shared, "nothing names the folder beside the checkout "
      "(cite upstream as canonical/<repo>@<commit>:<path>)", shared)
check(not brief, "nothing cites the original brief (cite "
      "docs/contract.md §N)", brief)


def issue_citations(name, text):
    """Where text cites a tracker issue, as "name:line: words"; a citation
    broken over two lines of a comment is found on the first."""
    flat = BREAK.sub(" ", text)
    # line numbers: the offsets in flat where each line of text begins
    starts, pos = [], 0
    for m in BREAK.finditer(text):
        starts.append(m.start() - pos)
        pos += len(m.group(0)) - 1
    out = []
    for m in ISSUE.finditer(flat):
        n = 1 + sum(1 for s in starts if s < m.start())
        out.append("%s:%d: %s" % (name, n, m.group(0)))
    return out


cited = []
for f, t in sorted(texts.items()):
    if f != "CHANGELOG.md":
        cited += issue_citations(f, t)
check(not cited, "no file but CHANGELOG.md cites an issue number (cite "
      "the doc section or the test that holds the rule)", cited)
# the same check on doctored copies of real files must fail
doctored = []
for f, put in (("host/environ.c", "(" + "iss" + "ue 15 point 21)"),
               ("docs/security.md", "\n" + "Iss" + "ues 14\nand 16"),
               ("lua/engine/plan.lua", "(see\n-- " + "iss" + "ue\n-- 15)")):
    t = texts.get(f, "")
    got = issue_citations(f, t.replace("\n", " " + put + "\n", 1))
    if len(got) != 1:
        doctored.append("%s with %r: found %r" % (f, put, got))
check(not doctored and len(texts) > 100, "a doctored copy that cites an "
      "issue fails the check (three kinds of citation)", doctored)

contract = texts.get(os.path.join("docs", "contract.md"), "")
sections = [int(m.group(1)) for m in
            re.finditer(r"^## (\d+)\. ", contract, re.M)]
check(sections == list(range(1, 9)), "docs/contract.md has sections 1 to "
      "8 in order", ["found: %s" % sections])
bad = []
for f, t in texts.items():
    for n, line in enumerate(t.split("\n"), 1):
        for m in CITE.finditer(line):
            if int(m.group(1)) not in sections:
                bad.append("%s:%d: §%s" % (f, n, m.group(1)))
ncites = sum(len(CITE.findall(t)) for t in texts.values())
check(not bad and ncites >= 10, "every contract.md §N citation names a "
      "section (%d citations)" % ncites, bad)


def slug(heading):
    """GitHub's anchor of a Markdown heading."""
    s = heading.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def anchors(md):
    out, seen = set(), {}
    in_code = False
    for line in md.split("\n"):
        if line.startswith("```"):
            in_code = not in_code
        if in_code:
            continue
        m = re.match(r"^#+\s+(.*)$", line)
        if m:
            a = slug(m.group(1))
            k = seen.get(a, 0)
            seen[a] = k + 1
            out.add(a if k == 0 else "%s-%d" % (a, k))
    return out


broken = []
docs = [f for f in texts if f in ("README.md", "CHANGELOG.md")
        or (f.startswith("docs" + os.sep) and f.endswith(".md"))]
for f in sorted(docs):
    in_code = False
    for n, line in enumerate(texts[f].split("\n"), 1):
        if line.startswith("```"):
            in_code = not in_code
        if in_code:
            continue
        for m in LINK.finditer(line):
            target = m.group(1)
            if re.match(r"^[a-z]+:", target):
                continue
            path, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(f), path)) \
                if path else f
            full = os.path.join(ROOT, dest)
            if not os.path.exists(full):
                broken.append("%s:%d: %s (no file %s)" % (f, n, target, dest))
            elif anchor and dest.endswith(".md"):
                if anchor not in anchors(text_of(dest) or ""):
                    broken.append("%s:%d: %s (no heading #%s in %s)"
                                  % (f, n, target, anchor, dest))
check(not broken, "every relative link in README.md and docs/ resolves",
      broken)

finish()

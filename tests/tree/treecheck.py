"""What the tests/tree checks share: the repository's root, and checks
that print "ok"/"not ok" lines and end with "N passed, N failed"."""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))

_counts = {"passed": 0, "failed": 0}


def check(ok, what, problems):
    """One check: ok, or not ok with its problems (at most 40 shown)."""
    if ok:
        _counts["passed"] += 1
        print("ok - " + what)
        return
    _counts["failed"] += 1
    print("not ok - " + what)
    for p in problems[:40]:
        print("    " + p)
    if len(problems) > 40:
        print("    ... and %d more" % (len(problems) - 40))


def check_doctored(cases, texts, problems_of):
    """Show that a check can fail: each case (what, file, old, new, want)
    edits the file's text (old must occur once) and problems_of(file,
    text), which returns (problems, ...), must then report one that
    holds want."""
    failures = []
    for what, rel, old, new, want in cases:
        text = texts.get(rel, "")
        if text.count(old) != 1:
            failures.append("%s: %s no longer holds the text to doctor"
                            % (what, rel))
            continue
        got = problems_of(rel, text.replace(old, new))[0]
        if not any(want in p for p in got):
            failures.append("%s (%s): wanted %r, got %r"
                            % (what, rel, want, got))
    check(not failures, "doctored copies fail the checks (%d kinds)"
          % len(cases), failures)


def finish():
    """The count line, and the exit status."""
    print("%d passed, %d failed" % (_counts["passed"], _counts["failed"]))
    sys.exit(1 if _counts["failed"] else 0)

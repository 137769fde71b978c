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


def finish():
    """The count line, and the exit status."""
    print("%d passed, %d failed" % (_counts["passed"], _counts["failed"]))
    sys.exit(1 if _counts["failed"] else 0)

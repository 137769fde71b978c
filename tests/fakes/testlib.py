"""What the Python test scripts of tests/ share: one line per check
("ok - ..." / "not ok - ..."), then "N passed, N failed" and the exit code
tests/run.sh reads."""
import sys

PASSED, FAILED = [0], [0]


def check(desc, cond, info=""):
    """Count one check; on failure print up to 400 characters of info."""
    if cond:
        PASSED[0] += 1
        print("ok - " + desc)
    else:
        FAILED[0] += 1
        print("not ok - " + desc)
        if info:
            print("#   " + str(info)[:400])


def finish():
    print("%d passed, %d failed" % (PASSED[0], FAILED[0]))
    sys.exit(1 if FAILED[0] else 0)

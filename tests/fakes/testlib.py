"""What the Python test scripts of tests/ share: one line per check
("ok - ..." / "not ok - ..."), then "N passed, N failed" and the exit code
tests/run.sh reads; and one HTTP request with its answer decoded."""
import json
import sys

PASSED, FAILED = [0], [0]


def check(desc, cond, info=""):
    """Count one check; on failure print info under it (its first 25
    lines, 300 characters of each)."""
    if cond:
        PASSED[0] += 1
        print("ok - " + desc)
    else:
        FAILED[0] += 1
        print("not ok - " + desc)
        for line in str(info).splitlines()[:25]:
            print("#   " + line[:300])


def finish():
    print("%d passed, %d failed" % (PASSED[0], FAILED[0]))
    sys.exit(1 if FAILED[0] else 0)


def send(conn, method, path, body=None, headers=None):
    """One request on conn (an http.client connection, closed after):
    the status, the answer decoded from JSON (its text when it is not
    JSON) and the response."""
    conn.request(method, path, body=body, headers=headers or {})
    r = conn.getresponse()
    data = r.read()
    conn.close()
    try:
        return r.status, json.loads(data), r
    except ValueError:
        return r.status, data.decode(), r

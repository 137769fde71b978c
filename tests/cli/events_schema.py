#!/usr/bin/env python3
"""Every --output json event the test suites made uphook print is valid
against the schema of docs/output.md.

    python3 tests/cli/events_schema.py LOG

LOG is the test-only event log (UPHOOK_TEST_EVENT_LOG: "<pid>.<start>
<json>" per line, written by every uphook process; the start time tells
two runs with the same pid apart). tests/run.sh sets it for the
whole suite and runs this last. Checks: every line is a JSON object,
valid against the schema; no process printed two result events or an
event after its result; the suites reached every kind of event the
schema names for uphook's commands (so that the check cannot pass on an
empty log). Without LOG, it makes one by running tests/cli/args_test.sh,
recover_test.sh, download_test.sh, list_test.py and pty_test.py.
"""
import json
import os
import re
import subprocess
import sys
import tempfile
from collections import defaultdict

import jsonschema

ROOT = os.getcwd()
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "microk8s"))
from testlib import check, finish  # noqa: E402  the one ok/not ok helper


def schema():
    text = open(os.path.join(ROOT, "docs", "output.md"), encoding="utf-8").read()
    m = re.search(r"### Schema\n.*?```json\n(.*?)```", text, re.S)
    return json.loads(m.group(1)) if m else None


def make_log():
    log = tempfile.mktemp(prefix="uphook-events.")
    env = dict(os.environ, UPHOOK_TEST_EVENT_LOG=log)
    for t in ("tests/cli/args_test.sh", "tests/cli/recover_test.sh",
              "tests/cli/download_test.sh",
              "tests/cli/list_test.py", "tests/cli/pty_test.py"):
        cmd = ["python3", t] if t.endswith(".py") else ["sh", t]
        subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=900)
    return log


def main():
    log = sys.argv[1] if len(sys.argv) > 1 else make_log()
    s = schema()
    check("docs/output.md has the schema", s is not None)
    if s is None:
        return
    jsonschema.Draft202012Validator.check_schema(s)
    v = jsonschema.Draft202012Validator(s)
    lines = open(log, encoding="utf-8").read().splitlines() if os.path.exists(log) else []
    bad_json, invalid, by_pid, kinds = [], [], defaultdict(list), defaultdict(int)
    for line in lines:
        pid, _, text = line.partition(" ")
        try:
            ev = json.loads(text)
        except ValueError as e:
            bad_json.append("%s: %s" % (e, text[:200]))
            continue
        if not isinstance(ev, dict):
            bad_json.append("not an object: " + text[:200])
            continue
        errs = sorted(v.iter_errors(ev), key=lambda e: list(e.path))
        if errs:
            invalid.append("%s\n  %s at %s" % (text[:300], errs[0].message[:200],
                                               "/".join(map(str, errs[0].path))))
        kinds[ev.get("event")] += 1
        by_pid[pid].append(ev.get("event"))
    print("# %d events from %d processes: %s" % (len(lines), len(by_pid),
          ", ".join("%s %d" % kv for kv in sorted(kinds.items(), key=str))))
    check("every logged line is a JSON object (%d lines)" % len(lines), not bad_json,
          "\n".join(bad_json[:10]))
    check("every event is valid against docs/output.md's schema", not invalid,
          "\n".join(invalid[:10]))
    twice = [p for p, evs in by_pid.items() if evs.count("result") > 1]
    after = [p for p, evs in by_pid.items()
             if "result" in evs and evs[-1] != "result"]
    check("no run printed two result events", not twice, twice[:10])
    check("no run printed anything after its result", not after,
          ["%s: %s" % (p, by_pid[p][-5:]) for p in after[:10]])
    want = ["result", "error", "info", "log", "progress", "plan", "confirm",
            "recover_plan", "addon"]
    missing = [k for k in want if not kinds.get(k)]
    check("the suites reached every kind of event of the CLI (%s)" % ", ".join(want),
          not missing, "missing: %s" % missing)


main()
finish()

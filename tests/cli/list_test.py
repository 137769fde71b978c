#!/usr/bin/env python3
"""`uphook list` as an operator and `microk8s status` read it
(docs/microk8s.md on "Upgrade available" in `microk8s status`, and the
`addon` event of docs/output.md):

- an API server that does not answer is found once, said once on
  stderr, and gives exit 4 (it printed `?` everywhere and exited 0);
- one time limit for the whole command (--timeout): an API server that
  answers slowly stops list at it, exit 4, naming the limit;
- an addon with a pending journal shows "interrupted: run recover", and
  the command to run; it is not upgradable until then;
- --output json: one `addon` event per addon (installed from the state,
  detected from the hook's detect, source, upgradable, pending_journal,
  error), then one `result` event; the footnote only when a row has its
  star.
"""
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.getcwd(), "tests", "microk8s"))
from testlib import ROOT, UPHOOK, Fake, check, finish, write  # noqa: E402

TMP = tempfile.mkdtemp(prefix="uphook-list.")
REPO = os.path.join(TMP, "repo")
CHECKS = {"dns": "coredns", "metrics-server": "metrics-server",
          "hostpath-storage": "hostpath-provisioner"}
NAMES = list(CHECKS)
write(os.path.join(REPO, "addons.yaml"), "microk8s-addons:\n  addons:\n" + "".join(
    "    - name: %s\n      version: 1.0.0\n      check_status: deployment.apps/%s\n"
    % (n, d) for n, d in CHECKS.items()))
os.makedirs(os.path.join(REPO, "addons"))
for n in NAMES:
    os.symlink(os.path.join(ROOT, "hooks", n), os.path.join(REPO, "addons", n))
ENV = dict(os.environ, SNAP_DATA=os.path.join(TMP, "data"),
           SNAP_COMMON=os.path.join(TMP, "common"), HOME=os.path.join(TMP, "home"))


def uphook(*args, timeout=120):
    p = subprocess.run([UPHOOK, "--addons", REPO, *args], env=ENV, capture_output=True,
                       text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    return p.returncode, p.stdout, p.stderr


def events(text):
    """Every line as JSON (a line that is not fails the check)."""
    try:
        return [json.loads(line) for line in text.splitlines()]
    except ValueError as e:
        return [{"not json": str(e)}]


def one_result_last(evs, code):
    res = [i for i, e in enumerate(evs) if e.get("event") == "result"]
    return res == [len(evs) - 1] and evs[-1].get("code") == code


# ------------------------------------------------------- a dead API server
s = socket.socket()
s.bind(("127.0.0.1", 0))
port = s.getsockname()[1]
s.close()                       # nothing listens there now
DEAD = os.path.join(TMP, "dead.kubeconfig")
write(DEAD, """apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:%d", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
""" % port)
rc, out, err = uphook("--kubeconfig", DEAD, "list")
check("a dead API server: exit 4", rc == 4, out + err)
check("... said once on stderr, naming the server",
      err.count("cannot reach the API server") == 1 and ("127.0.0.1:%d" % port) in err
      and "whether addons are enabled and their installed versions are unknown" in err, err)
check("... the rows still show what is known here (the hooks' targets)",
      all(n in out for n in NAMES) and "1.14.3" in out, out)
rows_text = [l for l in out.splitlines() if l.split()[:2][-1:] and l.split()[1] in NAMES]
check("... and ? (with its legend) where it does not know: UPGRADE never says no",
      rows_text and all(l.split()[-1] == "?" for l in rows_text)
      and "(? = not known" in out, out)
rc, out, err = uphook("--kubeconfig", DEAD, "-v", "list", "--output", "json")
evs = events(out)
check("... with --output json: addon events, one error, one result (code 4) last",
      one_result_last(evs, 4) and sum(e.get("event") == "error" for e in evs) == 1
      and [e.get("name") for e in evs if e.get("event") == "addon"] == NAMES, out)

# a server that takes the TCP connection and never answers its TLS
# handshake: said once, with the time it really waited
hang = socket.socket()
hang.bind(("127.0.0.1", 0))
hang.listen(16)
write(DEAD, open(DEAD).read().replace(":%d\"" % port, ":%d\"" % hang.getsockname()[1]))
t0 = time.time()
rc, out, err = uphook("--kubeconfig", DEAD, "--timeout", "3", "list")
took = time.time() - t0
# the time waited is what was left of --timeout 3 when the connection began
# (start-up on a loaded machine takes a little of it)
waited = re.findall(r"no connection \(TCP and TLS\) within (\d+\.\d) s", err)
check("a server that never completes the TLS handshake: exit 4, said once, "
      "as what it is, with the time waited",
      rc == 4 and len(waited) == 1 and 2.0 <= float(waited[0]) <= 3.0
      and took < 10, "%.1f s\n%s" % (took, err))
hang.close()

# --------------------------------------------- a slow one: the time limit
fake = Fake(TMP)
check("the fake API server started", fake.port is not None)
if fake.port is None:
    finish()
KC = os.path.join(fake.dir, "kubeconfig")
fake.call("POST", "faults", json.dumps({"action": "delay", "delay": 1.5,
                                         "path": "/configmaps/", "count": -1}))
rc, out, err = uphook("--kubeconfig", KC, "--timeout", "2", "list")
check("a slow API server and --timeout 2: list stops at the limit, names it, exit 4 (a partial table)",
      rc == 4 and "list ran out of its time limit (2 s, --timeout)" in err, out + err)
fake.call("DELETE", "faults")

# ------------------------------------------------------------ the shape
rc, out, err = uphook("--kubeconfig", KC, "list", "--output", "json")
evs = events(out)
rows = {e.get("name"): e for e in evs if e.get("event") == "addon"}
check("a reachable cluster: exit 0, one addon event each, one result last",
      rc == 0 and one_result_last(evs, 0) and sorted(rows) == sorted(NAMES), out + err)
KEYS = {"repo", "name", "enabled", "upgradable", "pending_journal"}
check("each addon event has repo, name, enabled, upgradable, pending_journal",
      all(KEYS <= set(e) for e in rows.values()), out)
check("no addon enabled here: enabled false, nothing installed, no source",
      all(e["enabled"] is False and "installed" not in e and "source" not in e
          for e in rows.values()), out)
check("... and none upgradable (upgrade refuses an addon not enabled)",
      all(e["upgradable"] is False for e in rows.values()), out)

# offline worlds: one with state (installed, source state), one detected,
# one with a pending journal
OFF = os.path.join(TMP, "off")
FIX = os.path.join(ROOT, "hooks", "dns", "fixtures", "cluster-1.8.0.yaml")


def off(*args, state=OFF, **kw):
    return uphook("--offline", FIX, "--state-dir", state, *args, **kw)


rc, out, err = off("list", "--output", "json")
dns = {e.get("name"): e for e in events(out)}.get("dns", {})
check("no state: detected is detect's version, source detect, installed absent",
      dns.get("detected") == "1.8.0" and dns.get("source") == "detect"
      and "installed" not in dns and dns.get("upgradable") is True, out + err)
rc, out, err = off("list")
check("the footnote comes with its star", "1.8.0*" in out and "(* installed version" in out, out)
rc, out, err = off("upgrade", "dns")
rc, out, err = off("list", "--output", "json")
dns = {e.get("name"): e for e in events(out)}.get("dns", {})
check("with state: installed, source state, not upgradable",
      dns.get("installed") == "1.14.3" and dns.get("source") == "state"
      and "detected" not in dns and dns.get("upgradable") is False, out + err)
rc, out, err = off("list")
check("no star, no footnote", "*" not in out and "(* installed" not in out, out)

CRASH = os.path.join(TMP, "crash")
p = subprocess.run([UPHOOK, "--addons", REPO, "--offline", FIX, "--state-dir", CRASH,
                    "upgrade", "dns"], env=dict(ENV, UPHOOK_CRASH_AFTER="2"),
                   capture_output=True, text=True, timeout=120)
check("a crash leaves a journal", p.returncode == 99, p.stdout + p.stderr)
rc, out, err = off("list", state=CRASH)
line = [x for x in out.splitlines() if " dns " in x]
check("an interrupted upgrade shows in list: 'interrupted: run recover'",
      rc == 0 and line and line[0].endswith("interrupted: run recover"), out + err)
check("... with the command to run",
      ("dns: an upgrade was interrupted; run: %s" % os.path.realpath(UPHOOK)) in out
      or "dns: an upgrade was interrupted; run: " in out and " recover dns" in out, out)
rc, out, err = off("list", "--output", "json", state=CRASH)
dns = {e.get("name"): e for e in events(out)}.get("dns", {})
check("... in JSON: pending_journal true, its path, not upgradable",
      dns.get("pending_journal") is True
      and dns.get("journal", "").endswith("/journal/dns.journal")
      and dns.get("upgradable") is False, out)

fake.stop()
shutil.rmtree(TMP, ignore_errors=True)
finish()

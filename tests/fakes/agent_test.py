#!/usr/bin/env python3
"""The cluster-agent test server (agent.py) behaves as the real agent is
documented to (canonical/microk8s-cluster-agent@33e4ad06:
pkg/api/v1/configure.go, pkg/snap/services.go): token check with the
`|expiry` suffix, the args-file rewrite, restarts through snapctl, the
answers, and the test faults. Prints "ok - ..." and "N passed, N failed"."""
import http.client
import json
import os
import random
import shutil
import ssl
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True
sys.path.insert(0, HERE)
import agent  # noqa: E402
from cluster_ca import make_ca, make_node  # noqa: E402
from testlib import check, finish, send  # noqa: E402

TOKEN = "T0KEN" + "x" * 59


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def read(path):
    with open(path) as f:
        return f.read()


def unit_checks(d):
    """The rewrite and the token rule, called directly."""
    sd = os.path.join(d, "unit")
    write(os.path.join(sd, "args", "kubelet"),
          "  --kubeconfig=${SNAP_DATA}/credentials/kubelet.config  \n\n"
          "# a comment\n--cluster-dns=10.152.183.10\n\n\n--node-ip 10.0.0.5\n--fail-swap-on=false\n")
    changed = agent.update_arguments(sd, "kubelet", [{"--cluster-dns": "10.152.183.20"},
                                                     {"--new-a": "1", "--new-b": "2"}],
                                     ["--fail-swap-on"])
    lines = read(os.path.join(sd, "args", "kubelet")).split("\n")
    check("rewrite: updated in place, spaces trimmed, blank lines dropped, comment kept",
          lines[:4] == ["--kubeconfig=${SNAP_DATA}/credentials/kubelet.config",
                        "# a comment", "--cluster-dns=10.152.183.20", "--node-ip 10.0.0.5"],
          lines)
    check("rewrite: new keys appended, removed key gone, file ends in one newline",
          sorted(lines[4:6]) == ["--new-a=1", "--new-b=2"] and lines[6:] == [""] and changed,
          lines)
    check("rewrite: the space form is parsed as a key",
          agent.parse_argument_line("--node-ip 10.0.0.5") == ("--node-ip", "10.0.0.5"))
    before = read(os.path.join(sd, "args", "kubelet"))
    os.utime(os.path.join(sd, "args", "kubelet"), (1, 1))
    ch = agent.update_arguments(sd, "kubelet", [], [])
    check("rewrite: nothing to do writes nothing", not ch and
          os.stat(os.path.join(sd, "args", "kubelet")).st_mtime == 1)
    ch = agent.update_arguments(sd, "kubelet", [{"--cluster-dns": "10.152.183.20"}], [])
    check("rewrite: the same value is no change", not ch and
          read(os.path.join(sd, "args", "kubelet")) == before)
    agent.update_arguments(sd, "absent", [{"--x": "1"}], [])
    check("rewrite: a missing file is created", read(os.path.join(sd, "args", "absent")) ==
          "--x=1\n")
    write(os.path.join(sd, "credentials", "callback-token.txt"),
          "other\n  %s|%d  \nold|%d\n" % (TOKEN, time.time() + 3600, time.time() - 5))
    check("token: a line with a future |expiry is valid", agent.token_valid(sd, TOKEN))
    check("token: an expired line is refused", not agent.token_valid(sd, "old"))
    check("token: a plain line is valid, others are not",
          agent.token_valid(sd, "other") and not agent.token_valid(sd, "nope")
          and not agent.token_valid(sd, "") and not agent.token_valid(sd, None))
    check("units: without lite.lock a kube service is its own daemon",
          agent.unit_of(sd, "kubelet") == "microk8s.daemon-kubelet")
    write(os.path.join(sd, "var", "lock", "lite.lock"), "")
    check("units: kubelite with lite.lock, others by name",
          agent.unit_of(sd, "kube-apiserver") == "microk8s.daemon-kubelite"
          and agent.unit_of(sd, "containerd") == "microk8s.daemon-containerd")


class Node:
    def __init__(self, d):
        self.address = "127.%d.%d.%d" % (random.randint(1, 254), random.randint(0, 254),
                                         random.randint(2, 254))
        self.sd = os.path.join(d, "node")
        ca = os.path.join(d, "ca")
        make_ca(ca)
        make_node(ca, self.sd, self.address, TOKEN)
        write(os.path.join(self.sd, "var", "lock", "lite.lock"), "")
        write(os.path.join(self.sd, "args", "kubelet"), "--cluster-dns=10.152.183.10\n")
        stand_in = os.path.join(d, "snapctl")
        write(stand_in, "#!/bin/sh\necho \"$@\" >> \"$SNAP_DATA/snapctl.calls\"\n"
              "[ -e \"$SNAP_DATA/snapctl.fail\" ] && exit 3\nexit 0\n")
        os.chmod(stand_in, 0o755)
        env = dict(os.environ, SNAP_DATA=self.sd)
        self.proc = subprocess.Popen([sys.executable, os.path.join(HERE, "agent.py"),
                                      "--snap-data", self.sd, "--address", self.address,
                                      "--port", "0", "--snapctl", stand_in, "--quiet"],
                                     stdout=subprocess.PIPE, env=env, text=True)
        line = self.proc.stdout.readline()
        self.port = int(line.split()[1])
        self.ctx = ssl.create_default_context(cafile=os.path.join(self.sd, "certs", "ca.crt"))

    def post(self, body, ctx=None):
        c = http.client.HTTPSConnection(self.address, self.port, context=ctx or self.ctx,
                                        timeout=10)
        status, answer, _ = send(c, "POST", agent.CONFIGURE, json.dumps(body),
                                 {"Content-Type": "application/json"})
        return status, answer

    def faults(self, rules):
        write(os.path.join(self.sd, "agent-faults.json"), json.dumps(rules))

    def log(self):
        return [json.loads(x) for x in read(os.path.join(self.sd, "agent.log")).splitlines()]

    def stop(self):
        self.proc.terminate()
        self.proc.wait()


def server_checks(d):
    n = Node(d)
    try:
        kubelet = os.path.join(n.sd, "args", "kubelet")
        code, body = n.post({"callback": TOKEN, "service": []})
        check("an empty service list is 200 {\"result\": \"ok\"} (the token proof)",
              code == 200 and body == {"result": "ok"}, (code, body))
        code, body = n.post({"callback": "wrong", "service": [
            {"name": "kubelet", "arguments_update": [{"--cluster-dns": "1.2.3.4"}]}]})
        check("a wrong token is HTTP 500 {\"error\": \"Invalid token\"}, nothing changed",
              code == 500 and body == {"error": "Invalid token"}
              and read(kubelet) == "--cluster-dns=10.152.183.10\n", (code, body))
        code, body = n.post({"callback": TOKEN, "service": [
            {"name": "kubelet", "arguments_update": [{"--cluster-dns": "10.152.183.20"}],
             "arguments_remove": ["--nothing"]}]})
        check("arguments_update rewrites the node's file, no restart by itself",
              code == 200 and read(kubelet) == "--cluster-dns=10.152.183.20\n"
              and not os.path.exists(os.path.join(n.sd, "restarts.log")), (code, body))
        code, body = n.post({"callback": TOKEN, "service": [
            {"name": "kubelet", "restart": True}, {"name": "containerd", "restart": "yes"}]})
        calls = read(os.path.join(n.sd, "snapctl.calls")).splitlines()
        restarts = [x.split()[1] for x in read(os.path.join(n.sd, "restarts.log")).splitlines()]
        check("restart runs snapctl restart <unit> (kubelite), \"yes\" accepted, recorded",
              code == 200 and calls == ["restart microk8s.daemon-kubelite",
                                        "restart microk8s.daemon-containerd"]
              and restarts == ["microk8s.daemon-kubelite", "microk8s.daemon-containerd"],
              (calls, restarts))
        write(os.path.join(n.sd, "snapctl.fail"), "")
        code, body = n.post({"callback": TOKEN, "service": [{"name": "kubelet",
                                                             "restart": True}]})
        os.unlink(os.path.join(n.sd, "snapctl.fail"))
        check("a failed snapctl is HTTP 500 naming the service",
              code == 500 and "kubelet" in body.get("error", ""), (code, body))
        n.faults([{"match": "change", "action": "error", "message": "disk full"}])
        code, body = n.post({"callback": TOKEN, "service": []})
        code2, body2 = n.post({"callback": TOKEN, "service": [
            {"name": "kubelet", "arguments_update": [{"--cluster-dns": "9.9.9.9"}]}]})
        check("fault: an error rule hits the first change, not the empty request",
              code == 200 and code2 == 500 and body2 == {"error": "Disk full"}
              and "9.9.9.9" not in read(kubelet), (code, code2, body2))
        n.faults([{"match": "any", "action": "garbage"}])
        code, body = n.post({"callback": TOKEN, "service": []})
        check("fault: garbage answers 200 with something that is not JSON",
              code == 200 and body == "<html>not json", (code, body))
        n.faults([{"match": "change", "action": "hang", "when": "after", "seconds": 1.5}])
        t0 = time.time()
        code, _ = n.post({"callback": TOKEN, "service": [
            {"name": "kubelet", "arguments_update": [{"--cluster-dns": "10.152.183.30"}]}]})
        check("fault: hang after applying delays the answer, the change is made",
              code == 200 and time.time() - t0 >= 1.4 and "10.152.183.30" in read(kubelet)
              and os.path.exists(os.path.join(n.sd, "agent-hanging")))
        n.faults([{"match": "empty", "action": "run",
                   "command": "touch '%s/ran'" % n.sd}])
        code, _ = n.post({"callback": TOKEN, "service": []})
        check("fault: run runs its command, then answers as usual",
              code == 200 and os.path.exists(os.path.join(n.sd, "ran")))
        other = os.path.join(d, "other-ca")
        make_ca(other, "another-ca")
        bad = ssl.create_default_context(cafile=os.path.join(other, "ca.crt"))
        try:
            n.post({"callback": TOKEN, "service": []}, ctx=bad)
            refused = False
        except ssl.SSLError:
            refused = True
        check("a client trusting another CA refuses the agent's certificate", refused)
        kinds = [x["kind"] for x in n.log()]
        check("agent.log records each request and its kind",
              kinds == ["empty", "change", "change", "restart", "restart", "empty",
                        "change", "empty", "change", "empty"], kinds)
    finally:
        n.stop()


def main():
    d = tempfile.mkdtemp(prefix="agent_test.")
    try:
        unit_checks(d)
        server_checks(d)
    finally:
        shutil.rmtree(d)


if __name__ == "__main__":
    main()
    finish()

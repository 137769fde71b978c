#!/usr/bin/env python3
"""The fake API server's nodes (apiserver_nodes.py): registered Nodes with
their InternalIP, configz through the node proxy as of the last restart,
Ready dropping during a restart, the API server's own restart, and the
real kubectl reading configz. Prints "ok - ..." and "N passed, N failed"."""
import http.client
import json
import os
import shutil
import ssl
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True
sys.path.insert(0, HERE)
from apiserver_nodes import kubelet_config  # noqa: E402
from testlib import check, finish, send  # noqa: E402




class Fake:
    def __init__(self, d):
        self.d = d
        self.proc = subprocess.Popen([sys.executable, os.path.join(HERE, "apiserver.py"),
                                      "--dir", d, "--quiet", "--node-name", "node-a"],
                                     stdout=subprocess.PIPE, text=True)
        self.port = int(self.proc.stdout.readline().split()[1])
        self.ctx = ssl.create_default_context(cafile=os.path.join(d, "ca.crt"))
        self.ctx.load_cert_chain(os.path.join(d, "client.crt"), os.path.join(d, "client.key"))

    def req(self, method, path, body=None, tls=True):
        c = http.client.HTTPSConnection("127.0.0.1", self.port, context=self.ctx, timeout=10) \
            if tls else http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        status, answer, _ = send(c, method, path,
                                 json.dumps(body) if body is not None else None,
                                 {"Content-Type": "application/json"})
        return status, answer

    def ctl(self, method, path, body=None):
        return self.req(method, "/_fake/" + path, body, tls=False)

    def stop(self):
        self.proc.terminate()
        self.proc.wait()


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def ready(node):
    return [c["status"] for c in node["status"]["conditions"] if c["type"] == "Ready"]


def main(d):
    cfg = kubelet_config("--cluster-dns=10.152.183.10,10.152.183.11\n  --cluster-domain cluster.local\n"
                         "# --max-pods=3\n--authentication-token-webhook=true\n--other=1\n")
    check("kubelet_config: flags over the defaults of a kubelet run from flags",
          cfg["clusterDNS"] == ["10.152.183.10", "10.152.183.11"]
          and cfg["clusterDomain"] == "cluster.local"
          and cfg["authentication"]["webhook"]["enabled"] is True and cfg["maxPods"] == 110
          and kubelet_config("")["authentication"]["webhook"]["enabled"] is False
          and "clusterDNS" not in kubelet_config(""), cfg)
    f = Fake(os.path.join(d, "srv"))
    try:
        sd = os.path.join(d, "node-b")
        write(os.path.join(sd, "args", "kubelet"), "--cluster-dns=10.152.183.10\n")
        code, _ = f.ctl("POST", "nodes", [{"name": "node-b", "address": "127.9.9.2", "snapData": sd},
                                          {"name": "node-c", "address": None}])
        code2, nl = f.req("GET", "/api/v1/nodes")
        nodes = {n["metadata"]["name"]: n for n in nl["items"]}
        check("registered Nodes are listed with their InternalIP, Ready",
              code == 200 and set(nodes) == {"node-a", "node-b", "node-c"}
              and nodes["node-b"]["status"]["addresses"][0] == {"type": "InternalIP",
                                                                "address": "127.9.9.2"}
              and ready(nodes["node-b"]) == ["True"], nl)
        check("a node registered without an address has no InternalIP",
              [a["type"] for a in nodes["node-c"]["status"]["addresses"]] == ["Hostname"])
        code, body = f.req("GET", "/api/v1/nodes/node-b/proxy/configz")
        check("configz answers the kubelet's configuration",
              code == 200 and body["kubeletconfig"]["clusterDNS"] == ["10.152.183.10"], body)
        write(os.path.join(sd, "args", "kubelet"), "--cluster-dns=10.152.183.20\n")
        code, body = f.req("GET", "/api/v1/nodes/node-b/proxy/configz")
        check("an args change is not running before a restart",
              body["kubeletconfig"]["clusterDNS"] == ["10.152.183.10"], body)
        f.ctl("POST", "nodes/node-b/restart", {"seconds": 0.5})
        code, body = f.req("GET", "/api/v1/nodes/node-b/proxy/configz")
        code2, node = f.req("GET", "/api/v1/nodes/node-b")
        check("during a restart: NotReady, configz 503 like a real proxy",
              code == 503 and "connection refused" in body["message"]
              and ready(node) == ["False"], (code, body))
        time.sleep(0.8)
        code, body = f.req("GET", "/api/v1/nodes/node-b/proxy/configz")
        code2, node = f.req("GET", "/api/v1/nodes/node-b")
        check("after it: Ready, configz runs the new args",
              code == 200 and body["kubeletconfig"]["clusterDNS"] == ["10.152.183.20"]
              and ready(node) == ["True"], body)
        code, body = f.req("GET", "/api/v1/nodes/node-c/proxy/configz")
        code2, body2 = f.req("GET", "/api/v1/nodes/node-x/proxy/configz")
        check("a node without a kubelet folder: 503; no such node: 404 NotFound",
              code == 503 and code2 == 404 and body2["reason"] == "NotFound", (body, body2))
        f.ctl("POST", "nodes", {"name": "node-a", "address": "127.9.9.1"})
        f.ctl("POST", "nodes/node-a/restart", {"seconds": 0.6, "apiserver": True})
        try:
            f.req("GET", "/readyz")
            dropped = False
        except (OSError, http.client.HTTPException):
            dropped = True
        time.sleep(0.8)
        code, _ = f.req("GET", "/readyz")
        check("the API server's own node restarting: requests dropped, then served",
              dropped and code == 200)
        env = dict(os.environ, HOME=d, KUBECONFIG=os.path.join(f.d, "kubeconfig"))
        out = subprocess.run(["kubectl", "get", "--raw", "/api/v1/nodes/node-b/proxy/configz"],
                             env=env, capture_output=True, text=True, timeout=60)
        check("kubectl get --raw reads configz",
              out.returncode == 0 and json.loads(out.stdout)["kubeletconfig"]["clusterDNS"]
              == ["10.152.183.20"], out.stderr)
    finally:
        f.stop()


if __name__ == "__main__":
    tmp = tempfile.mkdtemp(prefix="nodes_test.")
    try:
        main(tmp)
    finally:
        shutil.rmtree(tmp)
    finish()

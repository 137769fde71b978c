#!/usr/bin/env python3
"""A test cluster CA and the node files a MicroK8s node keeps under
$SNAP_DATA for the cluster agent (openssl CLI, as apiserver_certs.py).

  python3 tests/fakes/cluster_ca.py ca CA_DIR
      CA_DIR/ca.crt, ca.key: a cluster CA (EC P-256)
  python3 tests/fakes/cluster_ca.py node CA_DIR SNAP_DATA ADDRESS [TOKEN]
      SNAP_DATA/certs/ca.crt (the CA), certs/server.crt and server.key
      (signed by it, SAN IP:ADDRESS and DNS:localhost), and with TOKEN
      credentials/callback-token.txt
"""
import os
import shutil
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from apiserver_certs import EC, _run, _sign  # noqa: E402


def make_ca(ca_dir, cn="uphook-test-cluster-ca"):
    os.makedirs(ca_dir, exist_ok=True)
    if os.path.exists(os.path.join(ca_dir, "ca.key")):
        return
    old = os.umask(0o077)
    try:
        _run(["req", "-x509"] + EC + ["-keyout", "ca.key", "-out", "ca.crt", "-days", "3650",
                                      "-subj", "/CN=" + cn, "-sha256",
                                      "-addext", "basicConstraints=critical,CA:TRUE",
                                      "-addext", "keyUsage=critical,keyCertSign,cRLSign"],
             ca_dir)
    finally:
        os.umask(old)


def make_node(ca_dir, snap_data, address, token=None):
    certs = os.path.join(snap_data, "certs")
    os.makedirs(certs, exist_ok=True)
    work = os.path.join(ca_dir, "sign-" + address)
    os.makedirs(work, exist_ok=True)
    for f in ("ca.crt", "ca.key"):
        shutil.copy(os.path.join(ca_dir, f), work)
    _sign(work, "server", "/CN=" + address,
          "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n"
          "extendedKeyUsage=serverAuth\nsubjectAltName=IP:%s,DNS:localhost\n" % address)
    shutil.copy(os.path.join(ca_dir, "ca.crt"), os.path.join(certs, "ca.crt"))
    for f in ("server.crt", "server.key"):
        shutil.copy(os.path.join(work, f), os.path.join(certs, f))
    shutil.rmtree(work)
    if token is not None:
        cred = os.path.join(snap_data, "credentials")
        os.makedirs(cred, exist_ok=True)
        with open(os.path.join(cred, "callback-token.txt"), "w") as f:
            f.write(token + "\n")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "ca":
        make_ca(sys.argv[2])
    elif len(sys.argv) in (5, 6) and sys.argv[1] == "node":
        make_node(*sys.argv[2:])
    else:
        sys.exit(__doc__)

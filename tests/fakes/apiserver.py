#!/usr/bin/env python3
"""A fake Kubernetes API server that the real kubectl works against.

Python 3 standard library plus PyYAML (for apply-patch+yaml bodies).
Usage: python3 tests/fakes/apiserver.py --dir TMPDIR [--port 0]
See tests/fakes/README.md for what it serves and the /_fake/ control API.
"""
import argparse
import os
import platform
import signal
import socket
import ssl
import sys
import threading
from http.server import ThreadingHTTPServer

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from apiserver_certs import make_certs, write_kubeconfigs  # noqa: E402
from apiserver_http import Handler  # noqa: E402
from apiserver_state import State  # noqa: E402

BROKEN_MODES = ("discovery", "rollout", "watch")


class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128
    allow_reuse_address = True

    def handle_error(self, request, client_address):
        # a client that gives up the TLS handshake or hangs up is no server bug
        if not isinstance(sys.exc_info()[1], (ssl.SSLError, OSError)):
            ThreadingHTTPServer.handle_error(self, request, client_address)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", required=True, help="where certs, kubeconfig and port go")
    ap.add_argument("--port", type=int, default=0, help="0 = a free port")
    ap.add_argument("--token", help="also accept this bearer token (writes kubeconfig-token)")
    ap.add_argument("--basic", metavar="USER:PASS", help="also accept basic auth (writes kubeconfig-basic)")
    ap.add_argument("--node-name", default=socket.gethostname())
    ap.add_argument("--rollout-delay", type=float, default=0.2)
    ap.add_argument("--history", type=int, default=1000, help="watch events kept")
    ap.add_argument("--broken", nargs="?", const="discovery", choices=BROKEN_MODES,
                    help="misbehave on purpose so a test can prove it fails")
    ap.add_argument("--quiet", action="store_true")
    a = ap.parse_args(argv)

    os.makedirs(a.dir, exist_ok=True)
    certs = make_certs(a.dir)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(certs["server_crt"], certs["server_key"])
    ctx.load_verify_locations(certs["ca_crt"])
    ctx.verify_mode = ssl.CERT_OPTIONAL
    ctx.set_alpn_protocols(["http/1.1"])

    arch = {"x86_64": "amd64", "aarch64": "arm64"}.get(platform.machine(), platform.machine())
    state = State(node_name=a.node_name, arch=arch, rollout_delay=a.rollout_delay,
                  history=a.history, broken=a.broken)
    srv = Server(("127.0.0.1", a.port), Handler)
    srv.ssl_ctx = ctx
    srv.state = state
    srv.token = a.token
    srv.basic = a.basic
    srv.quiet = a.quiet
    port = srv.server_address[1]
    write_kubeconfigs(a.dir, port, certs, token=a.token, basic=a.basic)
    with open(os.path.join(a.dir, "port"), "w") as f:
        f.write("%d\n" % port)

    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    print("ready %d" % port, flush=True)
    try:
        t.join()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Loopback HTTPS server for the download tests (standard library only).

Generates, with the openssl CLI into a temp dir: a CA, a leaf for
127.0.0.1/localhost signed by it, a self-signed leaf and a CA-signed
leaf for the wrong host.  Serves the same routes on four ports:

  https       the good certificate
  http        plain HTTP
  self_signed a self-signed certificate for 127.0.0.1
  wrong_host  a CA-signed certificate for wrong.example only

The first stdout line (and --port-file, if given) is JSON:
  {"https": p, "http": p, "self_signed": p, "wrong_host": p,
   "ca": "/tmp/.../ca.pem", "dir": "/tmp/..."}

Routes:
  /file/<n>             n bytes, byte i = i & 0xff, Content-Length
  /dl/<name>-<n>.bin    the same content under a file name
  /sums/gnu, /sums/bsd  checksum files for /dl/tool-<n>.bin, n in SUM_SIZES
  /chunked/<n>          n bytes chunked, no Content-Length
  /truncated            Content-Length 100000, 50000 sent, then close
  /slow                 Content-Length 1000000, 100 bytes every 0.2 s
  /bomb                 Content-Encoding: gzip, ~1 MiB that inflates to 1 GiB
  /status/<code>        that status with a short body
  /redirect/http        302 to http://127.0.0.1:<http>/file/100
  /redirect/file        302 to file:///etc/passwd
  /redirect/ftp         302 to ftp://127.0.0.1/x
  /redirect/otherhost   302 to https://localhost.example:<https>/file/100
  /redirect/localhost   302 to https://localhost:<https>/file/100
  /redirect/loop        302 to itself
  /redirect/chain/<k>   k redirects, then /file/100
  /stats                {"requests": n, "paths": {path: n}} (not counted)
  /stats/reset          zero the counters
"""
import argparse
import gzip
import http.server
import json
import os
import shutil
import signal
import ssl
import subprocess
import sys
import tempfile
import threading
import time

PATTERN = bytes(range(256)) * 256          # 64 KiB; byte i = i & 0xff
SUM_SIZES = (1000, 65536, 300000)


def pattern(n):
    """Yield n bytes of the pattern in 64 KiB pieces."""
    while n > 0:
        k = min(n, len(PATTERN))
        yield PATTERN[:k]
        n -= k


def pattern_sha256(n):
    import hashlib
    h = hashlib.sha256()
    for piece in pattern(n):
        h.update(piece)
    return h.hexdigest()


def make_bomb():
    """Concatenated gzip members, 16 MiB of zeros each: 1 GiB inflated."""
    member = gzip.compress(b"\0" * (16 << 20), compresslevel=9)
    return member * 64


def openssl(*args):
    subprocess.run(("openssl",) + args, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def make_certs(d):
    """CA, good leaf, self-signed leaf, wrong-host leaf (EC P-256)."""
    p = lambda n: os.path.join(d, n)
    ec = ("-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
          "-nodes")
    openssl("req", "-x509", *ec, "-keyout", p("ca.key"), "-out", p("ca.pem"),
            "-days", "2", "-subj", "/CN=uphook test CA",
            "-addext", "basicConstraints=critical,CA:TRUE",
            "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    for name, san in (("good", "IP:127.0.0.1,DNS:localhost"),
                      ("wrong", "DNS:wrong.example")):
        openssl("req", *ec, "-keyout", p(name + ".key"),
                "-out", p(name + ".csr"), "-subj", "/CN=" + name)
        with open(p(name + ".ext"), "w") as f:
            f.write("subjectAltName=%s\nbasicConstraints=CA:FALSE\n"
                    "extendedKeyUsage=serverAuth\n" % san)
        openssl("x509", "-req", "-in", p(name + ".csr"), "-CA", p("ca.pem"),
                "-CAkey", p("ca.key"), "-CAcreateserial", "-days", "2",
                "-extfile", p(name + ".ext"), "-out", p(name + ".pem"))
    openssl("req", "-x509", *ec, "-keyout", p("self.key"),
            "-out", p("self.pem"), "-days", "2", "-subj", "/CN=127.0.0.1",
            "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost")


class Stats:
    def __init__(self):
        self.lock = threading.Lock()
        self.reset()

    def reset(self):
        with self.lock:
            self.requests = 0
            self.paths = {}

    def count(self, path):
        with self.lock:
            self.requests += 1
            self.paths[path] = self.paths.get(path, 0) + 1

    def dump(self):
        with self.lock:
            return {"requests": self.requests, "paths": dict(self.paths)}


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "uphook-test"

    def log_message(self, fmt, *args):
        pass

    def send_body(self, code, body, ctype="text/plain", extra=()):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in extra:
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def redirect(self, to):
        self.send_body(302, b"moved\n", extra=(("Location", to),))

    def send_pattern(self, n, chunked=False):
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        if chunked:
            self.send_header("Transfer-Encoding", "chunked")
        else:
            self.send_header("Content-Length", str(n))
        self.end_headers()
        if self.command == "HEAD":
            return
        for piece in pattern(n):
            if chunked:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            else:
                self.wfile.write(piece)
        if chunked:
            self.wfile.write(b"0\r\n\r\n")

    def do_HEAD(self):
        self.do_GET()

    def do_GET(self):
        path = self.path.split("?", 1)[0]
        srv = self.server.shared
        if path == "/stats":
            return self.send_body(200, json.dumps(srv.stats.dump()).encode(),
                                  "application/json")
        if path == "/stats/reset":
            srv.stats.reset()
            return self.send_body(200, b"ok\n")
        srv.stats.count(path)
        try:
            self.route(path, srv)
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError):
            self.close_connection = True

    def route(self, path, srv):
        parts = path.strip("/").split("/")
        hp, pp = srv.ports["https"], srv.ports["http"]
        if parts[0] == "file" and len(parts) == 2 and parts[1].isdigit():
            return self.send_pattern(int(parts[1]))
        if parts[0] == "dl" and len(parts) == 2 and parts[1].endswith(".bin"):
            n = parts[1][:-4].rsplit("-", 1)[-1]
            if n.isdigit():
                return self.send_pattern(int(n))
        if parts[0] == "chunked" and len(parts) == 2 and parts[1].isdigit():
            return self.send_pattern(int(parts[1]), chunked=True)
        if path == "/sums/gnu":
            return self.send_body(200, srv.sums_gnu)
        if path == "/sums/bsd":
            return self.send_body(200, srv.sums_bsd)
        if path == "/truncated":
            return self.truncated()
        if path == "/slow":
            return self.slow()
        if path == "/bomb":
            return self.send_body(200, srv.bomb, "application/octet-stream",
                                  (("Content-Encoding", "gzip"),))
        if parts[0] == "status" and len(parts) == 2 and parts[1].isdigit():
            return self.send_body(int(parts[1]), b"status body\n")
        targets = {
            "/redirect/http": "http://127.0.0.1:%d/file/100" % pp,
            "/redirect/file": "file:///etc/passwd",
            "/redirect/ftp": "ftp://127.0.0.1/x",
            "/redirect/otherhost": "https://localhost.example:%d/file/100" % hp,
            "/redirect/localhost": "https://localhost:%d/file/100" % hp,
            "/redirect/loop": "/redirect/loop",
        }
        if path in targets:
            return self.redirect(targets[path])
        if parts[:2] == ["redirect", "chain"] and len(parts) == 3 \
                and parts[2].isdigit():
            k = int(parts[2])               # exactly k redirects
            if k == 0:
                return self.send_pattern(100)
            return self.redirect("/redirect/chain/%d" % (k - 1) if k > 1
                                 else "/file/100")
        self.send_body(404, b"not found\n")

    def truncated(self):
        self.send_response(200)
        self.send_header("Content-Length", "100000")
        self.end_headers()
        self.wfile.write(PATTERN[:50000])
        self.wfile.flush()
        self.close_connection = True

    def slow(self):
        self.send_response(200)
        self.send_header("Content-Length", "1000000")
        self.end_headers()
        for _ in range(10000):
            self.wfile.write(PATTERN[:100])
            self.wfile.flush()
            time.sleep(0.2)


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, shared, ctx):
        super().__init__(("127.0.0.1", 0), Handler)
        self.shared = shared
        self.ctx = ctx

    def finish_request(self, request, client_address):
        # The TLS handshake runs in the request's thread, so a client
        # that rejects the certificate cannot stall the accept loop.
        if self.ctx is not None:
            try:
                request = self.ctx.wrap_socket(request, server_side=True)
            except (ssl.SSLError, OSError):
                return
        super().finish_request(request, client_address)


class Shared:
    pass


def tls_context(d, name):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(os.path.join(d, name + ".pem"),
                        os.path.join(d, name + ".key"))
    return ctx


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port-file")
    ap.add_argument("--dir", help="keep certificates here (default: temp)")
    args = ap.parse_args()
    d = args.dir or tempfile.mkdtemp(prefix="uphook-https-")
    os.makedirs(d, exist_ok=True)
    make_certs(d)
    shared = Shared()
    shared.stats = Stats()
    shared.bomb = make_bomb()
    shared.sums_gnu = "".join(
        "%s %stool-%d.bin\n" % (pattern_sha256(n), "*" if i % 2 else " ", n)
        for i, n in enumerate(SUM_SIZES)).encode()
    shared.sums_bsd = "".join(
        "SHA256 (tool-%d.bin) = %s\n" % (n, pattern_sha256(n))
        for n in SUM_SIZES).encode()
    servers = {
        "https": Server(shared, tls_context(d, "good")),
        "http": Server(shared, None),
        "self_signed": Server(shared, tls_context(d, "self")),
        "wrong_host": Server(shared, tls_context(d, "wrong")),
    }
    shared.ports = {k: s.server_address[1] for k, s in servers.items()}
    info = dict(shared.ports, ca=os.path.join(d, "ca.pem"), dir=d)
    for s in servers.values():
        threading.Thread(target=s.serve_forever, daemon=True).start()
    line = json.dumps(info)
    if args.port_file:
        with open(args.port_file + ".tmp", "w") as f:
            f.write(line + "\n")
        os.rename(args.port_file + ".tmp", args.port_file)
    print(line, flush=True)
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        if not args.dir:
            shutil.rmtree(d, ignore_errors=True)

if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""A MicroK8s cluster-agent test server: POST /cluster/api/v1.0/configure.

Written from the documented behaviour of the real agent
(canonical/microk8s-cluster-agent@33e4ad065b749e9b27aadad46ad7648e25442bc7:
pkg/api/v1/configure.go, pkg/snap/services.go, pkg/snap/snap.go), not
copied from it. Python 3 standard library only.

Usage:
  python3 tests/fakes/agent.py --snap-data DIR --address 127.0.0.2 \\
      [--port 25000] [--snapctl CMD] [--quiet]

Like the real agent it serves TLS with DIR/certs/server.crt and .key,
checks the callback token against DIR/credentials/callback-token.txt,
rewrites DIR/args/<service> and restarts services with `snapctl restart
<unit>` (CMD, run with the agent's environment; without --snapctl every
restart is only recorded). It prints "ready <port>" once it serves.

Test additions (see tests/fakes/README.md, "The cluster-agent test server"):
  DIR/agent.log       one JSON line per configure request: time, the
                      services asked, status, what was applied
  DIR/restarts.log    one line "<time> <unit>" per restart
  DIR/agent-faults.json  rules read at every request (see match_fault)
"""
import argparse
import json
import os
import random
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CONFIGURE = "/cluster/api/v1.0/configure"
KUBE_SERVICES = ("apiserver", "proxy", "kubelet", "scheduler", "controller-manager")


# ------------------------------------------------------------ the node's files

def token_valid(snap_data, token, now=None):
    """The token equals a line of credentials/callback-token.txt; a line may
    carry an expiry as "token|<unix seconds>", past which it is refused."""
    now = time.time() if now is None else now
    path = os.path.join(snap_data, "credentials", "callback-token.txt")
    try:
        with open(path) as f:
            lines = f.read().splitlines()
    except OSError:
        return False
    for line in lines:
        line = line.strip()
        if not line:
            continue
        tok, sep, expiry = line.partition("|")
        if tok != token or not token:
            continue
        if not sep:
            return True
        try:
            return float(expiry) > now
        except ValueError:
            return False
    return False


def parse_argument_line(line):
    """'--key=value', '--key value' or '--key' -> (key, value)."""
    line = line.strip()
    if "=" in line:
        key, _, value = line.partition("=")
    else:
        parts = line.split(None, 1)
        key, value = parts[0], parts[1] if len(parts) > 1 else ""
    return key.strip(), value.strip()


def update_arguments(snap_data, service, updates, remove):
    """The agent's rewrite of args/<service>: replaced in place, new keys
    appended (in no particular order: the agent iterates a Go map), removed
    keys dropped, every line trimmed, blank lines dropped. No-op (no write)
    when there is nothing to update or remove. Returns whether anything
    changed."""
    updates = updates or []
    remove = remove or []
    if not updates and not remove:
        return False
    if "/" in service or service in ("", ".", ".."):
        raise ValueError("invalid service name %r" % service)
    update_map = {}
    for u in updates:
        if not isinstance(u, dict):
            raise ValueError("arguments_update must be a list of objects")
        for k, v in u.items():
            update_map[k] = str(v)
    remove_set = set(remove)
    path = os.path.join(snap_data, "args", service)
    try:
        with open(path) as f:
            text = f.read()
    except FileNotFoundError:
        text = ""
    changed, seen, out = False, set(), []
    for line in text.split("\n"):
        line = line.strip()
        if not line:
            continue
        key, old = parse_argument_line(line)
        seen.add(key)
        if key in update_map:
            out.append("%s=%s" % (key, update_map[key]))
            changed = changed or old != update_map[key]
        elif key in remove_set:
            changed = True
        else:
            out.append(line)
    new_keys = [k for k in update_map if k not in seen]
    random.shuffle(new_keys)
    for k in new_keys:
        changed = True
        out.append("%s=%s" % (k, update_map[k]))
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o660)
    with os.fdopen(fd, "w") as f:
        f.write("\n".join(out) + "\n")
    return changed


def unit_of(snap_data, service):
    """The snapctl unit of a service: kube services are kubelite when
    var/lock/lite.lock exists."""
    if service in ("kube-apiserver", "kube-proxy", "kube-scheduler",
                   "kube-controller-manager"):
        service = service[5:]
    if os.path.exists(os.path.join(snap_data, "var", "lock", "lite.lock")) \
            and service in KUBE_SERVICES:
        service = "kubelite"
    return service if service.startswith("microk8s.daemon-") \
        else "microk8s.daemon-" + service


def restart_requested(v):
    return v is True or (isinstance(v, str) and v.lower() in ("yes", "true"))


# ------------------------------------------------------------ faults

def match_fault(snap_data, kind, lock):
    """The first rule of DIR/agent-faults.json (a JSON list) matching this
    request: {"match": "any"|"empty"|"change"|"restart" (the request's
    kind: no service, args only, a restart in it), "skip": n,
    "count": n (-1: forever), "action": "error"|"garbage"|"hang"|"drop"|
    "status"|"run", "message": ..., "seconds": ..., "when": "before"|"after",
    "status_code": ..., "body": ..., "command": ...}. A hang appends a line
    to DIR/agent-hanging when it starts; "run" runs `sh -c command`, then
    answers the request as usual. A rule's skip and count are used up
    as requests match, and the file is rewritten."""
    path = os.path.join(snap_data, "agent-faults.json")
    with lock:
        try:
            with open(path) as f:
                rules = json.load(f)
        except (OSError, ValueError):
            return None
        hit = None
        for r in rules:
            m = r.get("match", "any")
            if r.get("count", 1) == 0 or not (m == "any" or m == kind):
                continue
            if r.get("skip", 0) > 0:
                r["skip"] -= 1
                continue
            if r.get("count", 1) > 0:
                r["count"] = r.get("count", 1) - 1
            r["hits"] = r.get("hits", 0) + 1
            hit = dict(r)
            break
        tmp = path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(rules, f)
        os.replace(tmp, path)
        return hit


def request_kind(services):
    if not services:
        return "empty"
    if any(restart_requested(s.get("restart")) for s in services):
        return "restart"
    return "change"


# ------------------------------------------------------------ HTTP

class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "uphook-fake-cluster-agent"

    def setup(self):
        # the TLS handshake in the request's own thread: a client that
        # never finishes it holds up no one else
        self.request.settimeout(30)
        # as Go's net/http (the real agent) does: no Nagle delay between the
        # headers and the body of an answer
        self.request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.request = self.server.ssl_ctx.wrap_socket(self.request, server_side=True)
        BaseHTTPRequestHandler.setup(self)

    def log_message(self, fmt, *args):
        if not self.server.quiet:
            sys.stderr.write("fake-agent %s: %s\n" % (self.server.address, fmt % args))

    def answer(self, code, obj=None, raw=None):
        body = raw if raw is not None else json.dumps(obj).encode()
        self.status = code
        if getattr(self, "req", None) is not None:
            self.log_request_line()     # before the client can read the answer
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def error(self, code, msg):
        self.answer(code, {"error": msg[:1].upper() + msg[1:]})

    def do_GET(self):
        self.status = 0
        self.error(404, "not found")

    def do_POST(self):
        self.status, self.applied, self.received = 0, [], time.time()
        self.req = None
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        if self.path.split("?")[0] != CONFIGURE:
            return self.error(404, "not found")
        try:
            req = json.loads(raw)
            if not isinstance(req, dict):
                raise ValueError("not an object")
        except ValueError as e:
            return self.error(400, "failed to unmarshal request: %s" % e)
        services = req.get("service") or []
        fault = match_fault(self.server.snap_data, request_kind(services),
                            self.server.faults_lock)
        self.req, self.services, self.fault = req, services, fault
        try:
            self.configure(req, services, fault)
        finally:
            if self.req is not None:    # no answer was sent (a drop)
                self.log_request_line()

    def configure(self, req, services, fault):
        act = fault and fault.get("action", "error")
        if act == "run":            # a command, then the request as usual
            subprocess.call(["sh", "-c", fault.get("command", "true")])
            act = None
        if act == "drop":
            self.close_connection = True
            self.status = -1
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        if act == "hang" and fault.get("when", "before") == "before":
            self.hanging()
            time.sleep(float(fault.get("seconds", 30)))
        if act == "error":
            return self.error(500, fault.get("message", "injected fault"))
        if act == "garbage":
            return self.answer(200, raw=fault.get("body", "<html>not json").encode())
        if act == "status":
            return self.answer(int(fault.get("status_code", 500)),
                               raw=fault.get("body", "").encode())
        if not token_valid(self.server.snap_data, req.get("callback")):
            return self.error(500, "invalid token")
        err = self.apply_services(services)
        if err:
            return self.error(500, err)
        if act == "hang":           # "after": the change is made, no answer yet
            self.hanging()
            time.sleep(float(fault.get("seconds", 30)))
        self.answer(200, {"result": "ok"})

    def hanging(self):
        """DIR/agent-hanging says a request is held (for a test to act)."""
        with open(os.path.join(self.server.snap_data, "agent-hanging"), "a") as f:
            f.write("%.6f\n" % time.time())

    def apply_services(self, services):
        sd = self.server.snap_data
        for s in services:
            name = s.get("name", "")
            try:
                update_arguments(sd, name, s.get("arguments_update"),
                                 s.get("arguments_remove"))
            except (OSError, ValueError) as e:
                return "failed to update arguments of service %r: %s" % (name, e)
            self.applied.append({"name": name, "update": s.get("arguments_update") or [],
                                 "remove": s.get("arguments_remove") or []})
            if restart_requested(s.get("restart")):
                err = self.restart(name)
                if err:
                    return err
        return None

    def restart(self, service):
        unit = unit_of(self.server.snap_data, service)
        with open(os.path.join(self.server.snap_data, "restarts.log"), "a") as f:
            f.write("%.6f %s\n" % (time.time(), unit))
        self.applied.append({"restart": unit})
        if self.server.snapctl:
            rc = subprocess.call([self.server.snapctl, "restart", unit])
            if rc != 0:
                return "failed to restart service %r: exit status %d" % (service, rc)
        return None

    def log_request_line(self):
        services, fault = self.services, self.fault
        self.req = None
        line = {"received": round(self.received, 6), "time": round(time.time(), 6),
                "status": self.status,
                "kind": request_kind(services),
                "services": [s.get("name") for s in services],
                "applied": self.applied, "fault": fault and fault.get("action")}
        with self.server.faults_lock:
            with open(os.path.join(self.server.snap_data, "agent.log"), "a") as f:
                f.write(json.dumps(line) + "\n")


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def handle_error(self, request, client_address):
        if not isinstance(sys.exc_info()[1], (ssl.SSLError, OSError)):
            ThreadingHTTPServer.handle_error(self, request, client_address)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--snap-data", required=True)
    ap.add_argument("--address", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=25000)
    ap.add_argument("--snapctl", help="run as: CMD restart <unit>")
    ap.add_argument("--quiet", action="store_true")
    a = ap.parse_args(argv)
    sd = os.path.abspath(a.snap_data)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(os.path.join(sd, "certs", "server.crt"),
                        os.path.join(sd, "certs", "server.key"))
    srv = Server((a.address, a.port), Handler)
    srv.ssl_ctx = ctx
    srv.snap_data, srv.snapctl, srv.quiet = sd, a.snapctl, a.quiet
    srv.address = a.address
    srv.faults_lock = threading.Lock()
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    print("ready %d" % srv.server_address[1], flush=True)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()

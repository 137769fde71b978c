"""HTTP side of the fake API server: TLS sniffing, auth, routing, discovery,
watch streaming, fault injection and the /_fake/ control API."""
import base64
import json
import re
import socket
import sys
import time
import traceback
import urllib.parse
from http.server import BaseHTTPRequestHandler

import yaml

from apiserver_control import control, match_fault, note_request
from apiserver_discovery import discovery
from apiserver_pods import TABLES
import apiserver_proto as proto
import apiserver_nodes as nodes
from apiserver_types import ApiError, bad_request, resource_not_found, status_obj


def _item_key(obj):
    md = obj.get("metadata") or {}
    return [md.get("namespace") or "", md.get("name") or ""]


def page(items, md, q):
    """A LIST's `limit` and `continue`, as the API server's chunking: at most
    limit items, and in md a continue token (the key the next page starts
    at, with the list's resourceVersion) and remainingItemCount while more
    are left. The items are sorted by namespace and name (state.list)."""
    token = q.get("continue")
    if token:
        try:
            start = json.loads(base64.b64decode(token, validate=True))["start"]
        except (ValueError, KeyError, TypeError):
            raise bad_request("continue key is not valid: %s" % token)
        items = [it for it in items if _item_key(it) >= start]
    try:
        limit = int(q.get("limit") or 0)
    except ValueError:
        raise bad_request("limit must be an integer")
    if 0 < limit < len(items):
        nxt = json.dumps({"rv": md["resourceVersion"], "start": _item_key(items[limit])})
        md["continue"] = base64.b64encode(nxt.encode()).decode()
        md["remainingItemCount"] = len(items) - limit
        items = items[:limit]
    return items


class _Loader(yaml.SafeLoader):
    """YAML as Kubernetes reads it: timestamps stay strings."""


_Loader.yaml_implicit_resolvers = {
    k: [(tag, rx) for tag, rx in v if tag != "tag:yaml.org,2002:timestamp"]
    for k, v in yaml.SafeLoader.yaml_implicit_resolvers.items()}


def load_yaml_all(text):
    return [d for d in yaml.load_all(text, Loader=_Loader) if d is not None]


REASONS = {400: "BadRequest", 401: "Unauthorized", 403: "Forbidden", 404: "NotFound",
           405: "MethodNotAllowed", 409: "Conflict", 410: "Expired",
           413: "RequestEntityTooLarge", 415: "UnsupportedMediaType",
           422: "Invalid", 429: "TooManyRequests", 500: "InternalError",
           503: "ServiceUnavailable", 504: "Timeout"}
MESSAGES = {429: "Too many requests, please try again later.",
            500: "Internal error occurred: injected fault",
            503: "the server is currently unable to handle the request",
            504: "Timeout: request did not complete within the allotted timeout"}
# the API server's MaxRequestBodyBytes (3 MiB: twice etcd's request limit)
MAX_REQUEST_BODY = 3 * 1024 * 1024
PATCH_TYPES = {"application/apply-patch+yaml": "apply", "application/merge-patch+json": "merge",
               "application/strategic-merge-patch+json": "strategic",
               "application/json-patch+json": "json"}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "uphook-fake-apiserver"
    timeout = 600

    # ---- connection
    def setup(self):
        sock = self.request
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.settimeout(30)
        try:
            first = sock.recv(1, socket.MSG_PEEK)
        except OSError:
            first = b""
        self.tls = first == b"\x16"
        if self.tls:
            self.request = self.server.ssl_ctx.wrap_socket(sock, server_side=True)
        BaseHTTPRequestHandler.setup(self)

    def handle(self):
        try:
            BaseHTTPRequestHandler.handle(self)
        except (ConnectionError, ssl_errors(), socket.timeout, OSError):
            pass

    def log_message(self, fmt, *args):
        if not self.server.quiet:
            sys.stderr.write("fake-apiserver: " + (fmt % args) + "\n")

    def log_request(self, code="-", size="-"):
        pass

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = lambda self: self.dispatch()

    # ---- responses
    def send_body(self, code, body, ctype="application/json", headers=()):
        if isinstance(body, (dict, list)):
            body = json.dumps(body, separators=(",", ":")).encode()
        elif isinstance(body, str):
            body = body.encode()
        self.status_sent = code
        lines = ["HTTP/1.1 %d %s" % (code, self.responses.get(code, ("",))[0]),
                 "Content-Type: " + ctype, "Content-Length: %d" % len(body),
                 "Date: " + self.date_time_string(), "Cache-Control: no-cache, private"]
        lines += ["%s: %s" % h for h in headers]
        if self.close_connection:
            lines.append("Connection: close")
        self.wfile.write(("\r\n".join(lines) + "\r\n\r\n").encode() + body)

    def send_status(self, err, headers=()):
        self.send_body(err.code, err.status(), headers=headers)

    def start_chunked(self, code=200, ctype="application/json"):
        self.status_sent = code
        lines = ["HTTP/1.1 %d OK" % code, "Content-Type: " + ctype,
                 "Transfer-Encoding: chunked", "Date: " + self.date_time_string(),
                 "Cache-Control: no-cache, private"]
        self.wfile.write(("\r\n".join(lines) + "\r\n\r\n").encode())

    def chunk(self, data):
        if isinstance(data, (dict, list)):
            data = json.dumps(data, separators=(",", ":")) + "\n"
        if isinstance(data, str):
            data = data.encode()
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))

    def end_chunked(self):
        self.wfile.write(b"0\r\n\r\n")

    # ---- request
    def read_body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            out = b""
            while True:
                n = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if n == 0:
                    self.rfile.readline()
                    return out
                out += self.rfile.read(n)
                self.rfile.readline()
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def parse_body(self, raw, ctype, rt=None):
        if ctype == proto.MEDIA:
            return self.parse_proto(raw, rt)
        if not raw.strip():
            return None
        text = raw.decode("utf-8", "replace")
        try:
            # a YAML body that is JSON (what kubectl and uphook send) is
            # read as JSON, as the real server's YAML-to-JSON step leaves
            # it: and PyYAML's pure-Python reader would cost ~1.5 ms each
            if "yaml" in ctype and text.lstrip().startswith("{"):
                try:
                    return json.loads(text)
                except ValueError:
                    pass
            if "yaml" in ctype:
                docs = load_yaml_all(text)
                return docs[0] if docs else None
            return json.loads(text)
        except (ValueError, yaml.YAMLError) as e:
            raise bad_request("the body of the request was in an unknown format: %s" % e)

    @staticmethod
    def parse_proto(raw, rt):
        """A protobuf body of a kind apiserver_proto reads; 415 for the
        others (a custom resource has no protobuf form in a real server)."""
        if rt is None or not proto.decodable(rt.gv, rt.kind):
            raise ApiError(415, "UnsupportedMediaType",
                           "the body of the request was in an unknown format - accepted "
                           "media types include: application/json, application/yaml")
        try:
            return proto.decode_body(raw)
        except (proto.ProtoError, ValueError) as e:
            raise bad_request("the body of the request was in an unknown format: %s" % e)

    def authorized(self):
        if not self.tls:
            return False
        cert = self.request.getpeercert()
        if cert:
            return True
        auth = self.headers.get("Authorization", "")
        if self.server.token and auth == "Bearer " + self.server.token:
            return True
        if self.server.basic and auth.startswith("Basic "):
            try:
                return base64.b64decode(auth[6:]).decode() == self.server.basic
            except ValueError:
                return False
        return False

    def dispatch(self):
        received = time.time()
        self.status_sent = 0
        u = urllib.parse.urlsplit(self.path)
        path = u.path.rstrip("/") or "/"
        q = {k: v[-1] for k, v in urllib.parse.parse_qs(u.query, keep_blank_values=True).items()}
        body = self.read_body()
        state = self.server.state
        fault = None
        try:
            if path == "/_fake" or path.startswith("/_fake/"):
                return control(self, state, path, q, body)
            if nodes.api_down(state):       # its node's kubelite restarts
                self.close_connection = True
                self.status_sent = -1
                return self.request.shutdown(socket.SHUT_RDWR)
            if not self.tls:
                self.close_connection = True
                return self.send_body(400, "Client sent an HTTP request to an HTTPS server.\n",
                                      "text/plain; charset=utf-8")
            if not self.authorized():
                raise ApiError(401, "Unauthorized", "Unauthorized")
            fault = match_fault(state, self.command, path, u.query)
            if fault and self.apply_fault(fault, path):
                return
            self.route(state, path, q, body, fault)
        except ApiError as e:
            if not self.status_sent:
                self.send_status(e)
        except (ConnectionError, ssl_errors(), socket.timeout):
            self.close_connection = True
        except Exception as e:  # a bug in the fake: answer like an apiserver panic would
            traceback.print_exc()
            if not self.status_sent:
                self.send_status(ApiError(500, "InternalError", "Internal error occurred: %s" % e))
        finally:
            if path != "/_fake" and not path.startswith("/_fake/"):
                note_request(state, self.command, path, u.query, self.status_sent,
                                   fault["action"] if fault else None,
                                   self.headers.get("User-Agent", ""), received,
                                   self.headers.get("Accept", ""))

    def apply_fault(self, fault, path):
        """True when the fault answered (or dropped) the request."""
        act = fault["action"]
        if act == "delay":
            time.sleep(fault.get("delay", 1))
            return False
        if act == "drop":
            self.close_connection = True
            self.status_sent = -1
            try:
                self.request.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            return True
        if act == "status":
            code = int(fault.get("status", 500))
            msg = fault.get("message") or MESSAGES.get(code) or "injected fault"
            reason = fault.get("reason") or REASONS.get(code, "Unknown")
            headers = []
            if code in (429, 503) or "retryAfter" in fault:
                headers.append(("Retry-After", str(fault.get("retryAfter", 1))))
            details = {"retryAfterSeconds": int(fault.get("retryAfter", 1))} \
                if code == 429 else None
            self.send_body(code, status_obj(code, reason, msg, details), headers=headers)
            return True
        return False            # slow-watch / cut-watch act inside the watch

    # ---- API
    def route(self, state, path, q, body, fault):
        accept = self.headers.get("Accept", "")
        if nodes.is_proxy(path):
            return nodes.proxy(self, state, path)
        if self.command == "GET":
            d = discovery(state, path, accept, self.server.server_address[1])
            if d is not None:
                code, obj, ctype = d
                return self.send_body(code, obj, ctype)
        parts = [urllib.parse.unquote(p) for p in path.strip("/").split("/")]
        if parts[0] == "api" and len(parts) >= 3:
            group, version, rest = "", parts[1], parts[2:]
        elif parts[0] == "apis" and len(parts) >= 4:
            group, version, rest = parts[1], parts[2], parts[3:]
        else:
            return self.send_body(404, "404 page not found\n", "text/plain; charset=utf-8")
        watch = q.get("watch") in ("1", "true", "True")
        if rest[0] == "watch":
            watch, rest = True, rest[1:]
        ns = ""
        if rest and rest[0] == "namespaces" and len(rest) >= 3 and not (
                len(rest) == 3 and rest[2] in ("status", "finalize")):
            ns, rest = rest[1], rest[2:]
        if not rest or len(rest) > 3:
            raise resource_not_found()
        rt = state.find_type(group, version, rest[0])
        if rt is None or (ns and not rt.namespaced):
            raise resource_not_found()
        name = rest[1] if len(rest) > 1 else None
        sub = rest[2] if len(rest) > 2 else None
        if sub is not None and not (sub == "status" and rt.status):
            raise resource_not_found()
        dry = q.get("dryRun")
        if dry not in (None, "All"):
            raise bad_request('Invalid dryRun value "%s"' % dry)
        dry = dry == "All"
        m = self.command
        if len(body) > MAX_REQUEST_BODY and m in ("POST", "PUT", "PATCH"):
            raise ApiError(413, "RequestEntityTooLarge",
                           "Request entity too large: limit is %d" % MAX_REQUEST_BODY)
        manager = q.get("fieldManager") or self.headers.get("User-Agent", "unknown").split("/")[0]
        ctype = (self.headers.get("Content-Type") or "application/json").split(";")[0].strip()
        if m == "GET" and name is None and watch:
            return self.watch(state, rt, ns, q, fault)
        if m == "GET" and name is None:
            items, rv = state.list(rt, ns, q.get("labelSelector"), q.get("fieldSelector"))
            if "as=Table" in accept:
                return self.send_body(200, table(items, rv, q, rt.kind), "application/json")
            md = {"resourceVersion": rv}
            items = page(items, md, q)
            if "as=PartialObjectMetadataList" in accept:
                return self.send_body(200, partial_list(items, md))
            return self.send_body(200, {"kind": rt.kind + "List", "apiVersion": rt.gv,
                                        "metadata": md, "items": items})
        if m == "GET":
            obj = state.get(rt, ns, name)
            if "as=Table" in accept and sub is None:
                return self.send_body(200, table([obj], obj["metadata"]["resourceVersion"], q,
                                                  rt.kind))
            return self.send_body(200, partial_one(obj, accept))
        if m == "POST" and name is None:
            code, obj = state.create(rt, ns, self.parse_body(body, ctype, rt), dry, manager)
            return self.send_body(code, partial_one(obj, accept))
        if m == "PUT" and name:
            code, obj = state.update(rt, ns, name, self.parse_body(body, ctype, rt), dry, manager,
                                     sub)
            return self.send_body(code, partial_one(obj, accept))
        if m == "PATCH" and name:
            ptype = PATCH_TYPES.get(ctype)
            if ptype is None or (ptype == "strategic" and rt.crd):
                raise ApiError(415, "UnsupportedMediaType",
                               "the body of the request was in an unknown format - accepted "
                               "media types include: application/json-patch+json, "
                               "application/merge-patch+json, application/apply-patch+yaml"
                               + ("" if rt.crd else
                                  ", application/strategic-merge-patch+json"))
            if ptype == "apply" and q.get("fieldManager") is None:
                manager = None
            code, obj = state.patch(rt, ns, name, ptype, self.parse_body(body, ctype), dry,
                                    manager, q.get("force") in ("true", "1"), sub)
            return self.send_body(code, partial_one(obj, accept))
        if m == "DELETE" and name and sub is None:
            return self.send_body(200, state.delete(rt, ns, name, dry))
        if m == "DELETE" and name is None:
            items, rv = state.list(rt, ns, q.get("labelSelector"), q.get("fieldSelector"))
            for it in items:
                state.delete(rt, it["metadata"].get("namespace", ""), it["metadata"]["name"],
                             dry)
            return self.send_body(200, {"kind": rt.kind + "List", "apiVersion": rt.gv,
                                        "metadata": {"resourceVersion": rv}, "items": items})
        raise ApiError(405, "MethodNotAllowed", "the server does not allow this method on the "
                       "requested resource")

    def watch(self, state, rt, ns, q, fault):
        from apiserver_watch import run_watch
        run_watch(self, state, rt, ns, q, fault)


def node_cells(o):
    """A Node's row as the real server prints it: NAME STATUS ROLES AGE VERSION
    (`kubectl get nodes`; scripts grep it for " Ready ")."""
    conds = (o.get("status") or {}).get("conditions") or []
    ready = [c for c in conds if c.get("type") == "Ready"]
    status = "Ready" if ready and ready[0].get("status") == "True" else (
        "NotReady" if ready else "Unknown")
    roles = sorted(k.split("/", 1)[1] for k in (o["metadata"].get("labels") or {})
                   if k.startswith("node-role.kubernetes.io/"))
    info = (o.get("status") or {}).get("nodeInfo") or {}
    return [o["metadata"]["name"], status, ",".join(roles) or "<none>", "1m",
            info.get("kubeletVersion", "")]


NODE_COLUMNS = [{"name": n, "type": "string", "format": f, "priority": 0, "description": d}
                for n, f, d in (("Name", "name", "Name must be unique."),
                                ("Status", "", "The status of the node"),
                                ("Roles", "", "The roles of the node"),
                                ("Age", "", "CreationTimestamp ..."),
                                ("Version", "", "Kubelet Version reported by the node."))]


def table(items, rv, q, kind=None):
    include = q.get("includeObject", "Metadata")
    rows = []
    for o in items:
        md = o["metadata"]
        row = {"cells": node_cells(o) if kind == "Node" else
               TABLES[kind][1](o) if kind in TABLES else
               [md["name"], md.get("creationTimestamp")]}
        if include == "Object":
            row["object"] = o
        elif include != "None":
            row["object"] = {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                             "metadata": md}
        rows.append(row)
    if kind == "Node" or kind in TABLES:
        return {"kind": "Table", "apiVersion": "meta.k8s.io/v1",
                "metadata": {"resourceVersion": rv},
                "columnDefinitions": NODE_COLUMNS if kind == "Node" else TABLES[kind][0],
                "rows": rows}
    return {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": {"resourceVersion": rv},
            "columnDefinitions": [
                {"name": "Name", "type": "string", "format": "name", "priority": 0,
                 "description": "Name must be unique within a namespace."},
                {"name": "Created At", "type": "date", "format": "", "priority": 0,
                 "description": "CreationTimestamp is a timestamp representing the server time "
                                "when this object was created."}],
            "rows": rows}


def partial_list(items, md):
    """A metadata-only list (one page of it), as the real server answers
    `Accept: application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1`
    (k8s.io/client-go metadata/metadata.go)."""
    return {"kind": "PartialObjectMetadataList", "apiVersion": "meta.k8s.io/v1",
            "metadata": md,
            "items": [{"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                       "metadata": o["metadata"]} for o in items]}


def partial_one(obj, accept):
    """One object as the real server answers a GET or a write (create,
    update, patch: k8s.io/apiserver pkg/endpoints/handlers, each through
    transformResponseObject) with `Accept:
    application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1`: its
    metadata only; the whole object otherwise."""
    if not re.search(r"as=PartialObjectMetadata(;|,|$)", accept):
        return obj
    return {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
            "metadata": obj["metadata"]}


def ssl_errors():
    import ssl
    return ssl.SSLError


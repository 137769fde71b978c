"""The /_fake/ control API for tests (see README.md), fault matching and the
request log."""
import json
import re
import time

import yaml

from apiserver_types import ApiError, bad_request

ACTIONS = ("status", "drop", "delay", "slow-watch", "cut-watch")


def note_request(state, method, path, query, status, fault, agent, received, accept=""):
    """Logs an answered request: `received` when it came in, `time` after
    its answer was sent (a client may act on the answer in between);
    `accept` its Accept header."""
    with state.lock:
        state.counts["%s %s" % (method, path)] += 1
        state.requests.append({"n": sum(state.counts.values()), "received": round(received, 6),
                               "time": round(time.time(), 3), "method": method, "path": path,
                               "query": query, "status": status, "fault": fault,
                               "userAgent": agent, "accept": accept})


def match_fault(state, method, path, query):
    """The first armed fault whose method, path and query regexes match; a
    match uses up one of its count."""
    with state.lock:
        for f in state.faults:
            if f["count"] == 0:
                continue
            if not re.fullmatch(f.get("method") or ".*", method, re.I):
                continue
            if not re.search(f.get("path") or "", path):
                continue
            if not re.search(f.get("query") or "", query):
                continue
            if f["count"] > 0:
                f["count"] -= 1
            f["hits"] = f.get("hits", 0) + 1
            return dict(f)
    return None


def _params(q, body):
    p = dict(q)
    if body.strip():
        try:
            data = json.loads(body)
        except ValueError:
            raise bad_request("control body must be JSON")
        if isinstance(data, dict):
            p.update(data)
        else:
            p["items"] = data
    return p


def _add_faults(state, p):
    rules = p["items"] if isinstance(p.get("items"), list) else [p]
    out = []
    with state.lock:
        for r in rules:
            r = dict(r)
            r.setdefault("action", "status")
            if r["action"] not in ACTIONS:
                raise bad_request("action must be one of " + ", ".join(ACTIONS))
            for k in ("method", "path", "query"):
                try:
                    re.compile(r.get(k) or "")
                except re.error as e:
                    raise bad_request("bad %s regex: %s" % (k, e))
            r["count"] = int(r.get("count", 1))
            for k in ("status", "events"):
                if k in r:
                    r[k] = int(r[k])
            if "delay" in r:
                r["delay"] = float(r["delay"])
            r["id"] = len(state.faults) + 1
            state.faults.append(r)
            out.append(r)
    return out


def control(h, state, path, q, body):
    m, name = h.command, path[len("/_fake/"):] if path.startswith("/_fake/") else ""
    p = _params(q, body) if name != "seed" else q
    ok = {"ok": True}
    if name in ("", "healthz"):
        return h.send_body(200, ok)
    if name == "reset" and m == "POST":
        state.reset()
        return h.send_body(200, ok)
    if name == "seed" and m == "POST":
        text = body.decode("utf-8", "replace")
        from apiserver_http import load_yaml_all
        try:
            docs = load_yaml_all(text)
        except yaml.YAMLError as e:
            raise bad_request("seed: %s" % e)
        objs = []
        for d in docs:
            objs += d if isinstance(d, list) else [d]
        return h.send_body(200, {"seeded": state.seed(objs)})
    if name in ("stall", "unstall") and m == "POST":
        for k in ("kind", "name"):
            if not p.get(k):
                raise bad_request("%s: %s is required" % (name, k))
        state.stall(p["kind"], p.get("namespace", "default"), p["name"], name == "stall",
                    p.get("fail") in (True, "true", "1"))
        return h.send_body(200, ok)
    if name == "faults":
        if m == "POST":
            return h.send_body(200, {"faults": _add_faults(state, p)})
        if m == "DELETE":
            with state.lock:
                state.faults = []
            return h.send_body(200, ok)
        with state.lock:
            return h.send_body(200, {"faults": list(state.faults)})
    if name == "gone" and m == "POST":
        mode = p.get("mode", "event")
        if mode not in ("event", "http"):
            raise bad_request("mode must be event or http")
        with state.lock:
            state.force_gone += [mode] * int(p.get("count", 1))
        return h.send_body(200, ok)
    if name == "compact" and m == "POST":
        state.compact()
        return h.send_body(200, {"ok": True, "resourceVersion": str(state.rv)})
    if name == "watches/close" and m == "POST":
        with state.cond:
            state.watch_epoch += 1
            state.cond.notify_all()
        return h.send_body(200, ok)
    if name == "config" and m == "POST":
        with state.lock:
            if "rolloutDelay" in p:
                state.rollout_delay = float(p["rolloutDelay"])
        return h.send_body(200, {"rolloutDelay": state.rollout_delay})
    if name == "requests":
        with state.lock:
            if m == "DELETE":
                state.requests.clear()
                state.counts.clear()
                return h.send_body(200, ok)
            log = list(state.requests)
            return h.send_body(200, {"total": sum(state.counts.values()),
                                     "counts": dict(state.counts), "log": log})
    if name == "objects" and m == "GET":
        with state.lock:
            out = []
            for (g, plural), objs in sorted(state.objects.items()):
                out += [o for _, o in sorted(objs.items())]
            return h.send_body(200, {"resourceVersion": str(state.rv), "items": out})
    if name.startswith("nodes"):
        from apiserver_nodes import control as nodes_control
        if nodes_control(h, state, name, p):
            return None
    raise ApiError(404, "NotFound", "no such control: %s %s" % (m, path))

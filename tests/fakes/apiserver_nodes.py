"""The nodes of a multi-node cluster in the fake API server (README.md,
"Nodes and configz"): Nodes registered with their InternalIP and a node
folder (that node's $SNAP_DATA); GET /api/v1/nodes/<name>/proxy/configz
answers the kubelet configuration the node's args/kubelet held at its last
restart, as a real kubelet would; a restart makes the node NotReady and
its configz unreachable for a moment; a restart of the API server's own
node makes the API server drop every request for that moment."""
import copy
import os
import threading
import time
import urllib.parse

from apiserver_types import ApiError, bad_request
from agent import parse_argument_line

DEFAULT_RESTART = 0.3           # seconds a restart takes

# kubelet flag -> (configz path, conversion)


def _bool(v):
    return v.strip().lower() in ("", "true", "1", "yes")


FLAGS = {
    "--cluster-dns": (("clusterDNS",), lambda v: [x for x in v.split(",") if x]),
    "--cluster-domain": (("clusterDomain",), str),
    "--resolv-conf": (("resolvConf",), str),
    "--authentication-token-webhook": (("authentication", "webhook", "enabled"), _bool),
    "--anonymous-auth": (("authentication", "anonymous", "enabled"), _bool),
    "--client-ca-file": (("authentication", "x509", "clientCAFile"), str),
    "--authorization-mode": (("authorization", "mode"), str),
    "--fail-swap-on": (("failSwapOn",), _bool),
    "--max-pods": (("maxPods",), int),
}


def kubelet_config(args_text):
    """The configz "kubeletconfig" of a kubelet started with these flags
    (the defaults of a kubelet run from flags, then each known flag)."""
    cfg = {"kind": "KubeletConfiguration", "apiVersion": "kubelet.config.k8s.io/v1beta1",
           "authentication": {"webhook": {"enabled": False, "cacheTTL": "2m0s"},
                              "anonymous": {"enabled": True}, "x509": {}},
           "authorization": {"mode": "AlwaysAllow"}, "resolvConf": "/etc/resolv.conf",
           "failSwapOn": True, "maxPods": 110}
    for line in (args_text or "").split("\n"):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        key, value = parse_argument_line(line)
        if key not in FLAGS:
            continue
        path, conv = FLAGS[key]
        try:
            v = conv(value)
        except ValueError:
            continue
        d = cfg
        for p in path[:-1]:
            d = d.setdefault(p, {})
        d[path[-1]] = v
    return cfg


def _registry(state):
    if not hasattr(state, "fake_nodes"):
        state.fake_nodes = {}
        state.api_down_until = 0.0
    return state.fake_nodes


def _read_args(snap_data):
    try:
        with open(os.path.join(snap_data, "args", "kubelet")) as f:
            return f.read()
    except OSError:
        return ""


def _set_ready(state, name, ready):
    rt = state.type_for("v1", "Node")
    with state.lock:
        try:
            node = state.get(rt, "", name)
        except ApiError:
            return
        conds = [c for c in node.get("status", {}).get("conditions", [])
                 if c.get("type") != "Ready"]
        t = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        conds.append({"type": "Ready", "status": "True" if ready else "False",
                      "reason": "KubeletReady" if ready else "KubeletNotReady",
                      "message": "kubelet is posting ready status" if ready
                      else "kubelet is restarting",
                      "lastHeartbeatTime": t, "lastTransitionTime": t})
        node.setdefault("status", {})["conditions"] = conds
        state.update(rt, "", name, node, manager="kubelet", sub="status")


def register(state, p):
    """POST /_fake/nodes {"name", "address" (null: no InternalIP),
    "snapData", "ready" (default true), "labels", "taints", "unschedulable"}:
    the Node, and its kubelet as started from snapData/args/kubelet."""
    name = p.get("name")
    if not name:
        raise bad_request("nodes: name is required")
    addrs = [{"type": "Hostname", "address": name}]
    if p.get("address"):
        addrs.insert(0, {"type": "InternalIP", "address": p["address"]})
    labels = {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux",
              "kubernetes.io/arch": state.arch, "microk8s.io/cluster": "true",
              "node.kubernetes.io/microk8s-controlplane": "microk8s-controlplane"}
    labels.update(p.get("labels") or {})
    ready = p.get("ready", True)
    t = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
            "spec": {}, "status": {
                "conditions": [{"type": "Ready", "status": "True" if ready else "False",
                                "reason": "KubeletReady" if ready else "KubeletNotReady",
                                "message": "kubelet is posting ready status",
                                "lastHeartbeatTime": t, "lastTransitionTime": t}],
                "addresses": addrs,
                "nodeInfo": {"kubeletVersion": "v1.32.3", "architecture": state.arch,
                             "operatingSystem": "linux"}}}
    if p.get("taints"):
        node["spec"]["taints"] = p["taints"]
    if p.get("unschedulable"):
        node["spec"]["unschedulable"] = True
    with state.lock:
        state.seed([node])
        sd = p.get("snapData")
        _registry(state)[name] = {"snap_data": sd, "restarting": False,
                                  "running": _read_args(sd) if sd else None}
    return {"name": name, "address": p.get("address")}


def restart(state, name, p):
    """POST /_fake/nodes/<name>/restart {"seconds", "apiserver"}: what a
    `snapctl restart microk8s.daemon-kubelite` does to that node."""
    reg = _registry(state)
    seconds = float(p.get("seconds", DEFAULT_RESTART))
    with state.lock:
        info = reg.get(name)
        if info is None:
            raise ApiError(404, "NotFound", "no registered node %s" % name)
        info["restarting"] = True
        if p.get("apiserver"):
            state.api_down_until = max(state.api_down_until, time.time() + seconds)
    _set_ready(state, name, False)

    def done():
        with state.lock:
            if info["snap_data"]:
                info["running"] = _read_args(info["snap_data"])
            info["restarting"] = False
            info["restarts"] = info.get("restarts", 0) + 1
        _set_ready(state, name, True)
    threading.Timer(seconds, done).start()
    return {"name": name, "seconds": seconds}


def control(h, state, name, p):
    """/_fake/nodes...; True when it answered."""
    m = h.command
    parts = name.split("/")
    if parts == ["nodes"] and m == "POST":
        items = p["items"] if isinstance(p.get("items"), list) else [p]
        h.send_body(200, {"nodes": [register(state, x) for x in items]})
        return True
    if parts == ["nodes"] and m == "GET":
        with state.lock:
            out = {n: {"restarting": i["restarting"], "restarts": i.get("restarts", 0),
                       "kubeletconfig": kubelet_config(i["running"])
                       if i["running"] is not None else None}
                   for n, i in _registry(state).items()}
        h.send_body(200, {"nodes": out})
        return True
    if len(parts) == 2 and parts[0] == "nodes" and m == "DELETE":
        rt = state.type_for("v1", "Node")
        h.send_body(200, state.delete(rt, "", parts[1]))
        return True
    if len(parts) == 3 and parts[0] == "nodes" and parts[2] == "restart" and m == "POST":
        h.send_body(200, restart(state, parts[1], p))
        return True
    return False


def api_down(state):
    """The API server's own node is restarting: no API request is served."""
    return time.time() < getattr(state, "api_down_until", 0.0)


def is_proxy(path):
    parts = path.strip("/").split("/")
    return len(parts) >= 6 and parts[:3] == ["api", "v1", "nodes"] and parts[4] == "proxy"


def proxy(h, state, path):
    """GET /api/v1/nodes/<name>/proxy/configz through the API server."""
    parts = path.strip("/").split("/")
    name, rest = urllib.parse.unquote(parts[3]), "/".join(parts[5:])
    rt = state.type_for("v1", "Node")
    with state.lock:
        state.get(rt, "", name)             # 404 NotFound when there is none
        info = _registry(state).get(name)
        node = state.get(rt, "", name)
        running = copy.deepcopy(info["running"]) if info else None
        restarting = info["restarting"] if info else False
    ip = next((a["address"] for a in node.get("status", {}).get("addresses", [])
               if a.get("type") == "InternalIP"), name)
    if running is None or restarting or h.command != "GET":
        raise ApiError(503, "ServiceUnavailable", "error trying to reach service: dial tcp "
                       "%s:10250: connect: connection refused" % ip)
    if rest != "configz":
        return h.send_body(404, "404 page not found\n", "text/plain; charset=utf-8")
    return h.send_body(200, {"kubeletconfig": kubelet_config(running)})

"""Discovery documents: /api, /apis (legacy and aggregated), /version,
per-group resource lists, health endpoints."""
import re

from apiserver_types import SUB_VERBS, VERBS

AGG = "application/json;g=apidiscovery.k8s.io;v=%s;as=APIGroupDiscoveryList"


def version_key(v):
    """Kubernetes version priority: GA > beta > alpha, higher numbers first."""
    m = re.match(r"^v(\d+)(?:(alpha|beta)(\d+))?$", v)
    if not m:
        return (3, 0, 0, v)
    rank = {None: 0, "beta": 1, "alpha": 2}[m.group(2)]
    return (rank, -int(m.group(1)), -int(m.group(3) or 0), v)


def _groups(state):
    """[(group, [versions by priority], {version: [RType]})] in a stable order."""
    by = {}
    order = []
    for rt in state.served():
        if rt.group not in by:
            by[rt.group] = {}
            order.append(rt.group)
        by[rt.group].setdefault(rt.version, []).append(rt)
    return [(g, sorted(by[g], key=version_key), by[g]) for g in order]


def _resource_list(gv, types):
    res = []
    for rt in types:
        r = {"name": rt.plural, "singularName": rt.singular, "namespaced": rt.namespaced,
             "kind": rt.kind, "verbs": VERBS}
        if rt.short:
            r["shortNames"] = rt.short
        if rt.categories:
            r["categories"] = rt.categories
        res.append(r)
        if rt.status:
            res.append({"name": rt.plural + "/status", "singularName": "",
                        "namespaced": rt.namespaced, "kind": rt.kind, "verbs": SUB_VERBS})
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": res}


def _agg_resource(rt):
    kind = {"group": rt.group, "version": rt.version, "kind": rt.kind}
    r = {"resource": rt.plural, "responseKind": kind,
         "scope": "Namespaced" if rt.namespaced else "Cluster",
         "singularResource": rt.singular, "verbs": VERBS}
    if rt.short:
        r["shortNames"] = rt.short
    if rt.categories:
        r["categories"] = rt.categories
    if rt.status:
        r["subresources"] = [{"subresource": "status", "responseKind": kind,
                              "verbs": SUB_VERBS}]
    return r


def _agg(state, core, ver):
    items = []
    for g, versions, types in _groups(state):
        if (g == "") != core:
            continue
        items.append({"metadata": {"name": g, "creationTimestamp": None}, "versions": [
            {"version": v, "resources": [_agg_resource(rt) for rt in types[v]],
             "freshness": "Current"} for v in versions]})
    return {"kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/" + ver,
            "metadata": {}, "items": items}


def _agg_version(accept):
    """The aggregated discovery version the client asked for first, or None."""
    for part in accept.split(","):
        if "as=APIGroupDiscoveryList" in part and "g=apidiscovery.k8s.io" in part:
            m = re.search(r"v=(v2beta1|v2)\b", part)
            if m:
                return m.group(1)
    return None


def _gv(g, v):
    return {"groupVersion": g + "/" + v, "version": v}


def _gv_path(g, v):
    return "api/" + v if not g else "apis/%s/%s" % (g, v)


def _openapi_gv(g, v, types):
    """Just enough OpenAPI v3 for kubectl: the PATCH operations and their query
    parameters, so it leaves validation to the server (fieldValidation)."""
    params = [{"name": n, "in": "query", "schema": {"type": "string", "uniqueItems": True}}
              for n in ("dryRun", "fieldManager", "fieldValidation", "force")]
    paths = {}
    for rt in types:
        base = "/" + _gv_path(g, v) + ("/namespaces/{namespace}" if rt.namespaced else "")
        gvk = {"group": g, "version": v, "kind": rt.kind}
        paths["%s/%s/{name}" % (base, rt.plural)] = {"patch": {
            "operationId": "patch" + rt.kind, "parameters": params,
            "responses": {"200": {"description": "OK"}},
            "x-kubernetes-action": "patch", "x-kubernetes-group-version-kind": gvk}}
    return {"openapi": "3.0.0", "info": {"title": "Kubernetes", "version": "v1.32.3"},
            "paths": paths, "components": {}}


def openapi(state, path):
    if path == "/openapi/v3":
        return 200, {"paths": {_gv_path(g, v): {"serverRelativeURL": "/openapi/v3/%s?hash=%s"
                                                % (_gv_path(g, v), state.rv)}
                               for g, vs, _ in _groups(state) for v in vs}}, "application/json"
    for g, vs, types in _groups(state):
        for v in vs:
            if path == "/openapi/v3/" + _gv_path(g, v):
                return 200, _openapi_gv(g, v, types[v]), "application/json"
    return None


def discovery(state, path, accept, port):
    """(code, body, content type) for a discovery path, else None."""
    if path.startswith("/openapi/v3"):
        return openapi(state, path)
    if path in ("/healthz", "/livez", "/readyz"):
        return 200, "ok", "text/plain; charset=utf-8"
    if path == "/version":
        return 200, {"major": "1", "minor": "32", "gitVersion": "v1.32.3",
                     "gitCommit": "0000000000000000000000000000000000000000",
                     "gitTreeState": "clean", "buildDate": "2025-03-11T00:00:00Z",
                     "goVersion": "go1.23.6", "compiler": "gc",
                     "platform": "linux/amd64"}, "application/json"
    ver = _agg_version(accept)
    if path in ("/api", "/apis") and ver:
        return 200, _agg(state, path == "/api", ver), AGG % ver
    if path == "/api":
        return 200, {"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": [
            {"clientCIDR": "0.0.0.0/0", "serverAddress": "127.0.0.1:%d" % port}]}, \
            "application/json"
    if path == "/apis":
        groups = [{"name": g, "versions": [_gv(g, v) for v in vs],
                   "preferredVersion": _gv(g, vs[0])}
                  for g, vs, _ in _groups(state) if g]
        return 200, {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}, \
            "application/json"
    if path == "/api/v1":
        for g, _, types in _groups(state):
            if g == "":
                return 200, _resource_list("v1", types["v1"]), "application/json"
    parts = path.strip("/").split("/")
    if parts[0] == "apis" and len(parts) in (2, 3):
        for g, vs, types in _groups(state):
            if g != parts[1]:
                continue
            if len(parts) == 2:
                return 200, {"kind": "APIGroup", "apiVersion": "v1", "name": g,
                             "versions": [_gv(g, v) for v in vs],
                             "preferredVersion": _gv(g, vs[0])}, "application/json"
            if parts[2] in types:
                return 200, _resource_list(g + "/" + parts[2], types[parts[2]]), \
                    "application/json"
    return None

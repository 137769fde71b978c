"""In-memory cluster state of the fake API server: objects, writes, watch
history, the workload controller and the test controls."""
import collections
import json
import random
import re
import string
import threading
import time
import uuid

import apiserver_kinds as kinds
import apiserver_pods as pods
import apiserver_schema as schema
from apiserver_schema import type_of
from apiserver_merge import (changed_paths, drop_empty_maps, drop_nulls, field_paths,
                             fields_to_paths, jcopy,
                             get_path, json_patch, merge, path_str, paths_to_fields,
                             remove_path)
from apiserver_types import (ApiError, RType, already_exists, bad_request, builtin_types,
                             conflict, invalid, namespace_not_found, not_found)

WORKLOADS = ("Deployment", "DaemonSet", "StatefulSet")
Event = collections.namedtuple("Event", "rv type gr ns name obj")


def now():
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def spec_of(obj):
    """What a generation covers: everything but metadata and status."""
    return {k: v for k, v in obj.items() if k not in ("metadata", "status", "apiVersion", "kind")}


def _strip_times(mf):
    return [{k: v for k, v in e.items() if k != "time"} for e in mf or []]


def _same(a, b):
    ma, mb = dict(a.get("metadata") or {}), dict(b.get("metadata") or {})
    fa, fb = ma.pop("managedFields", None), mb.pop("managedFields", None)
    return (ma == mb and _strip_times(fa) == _strip_times(fb)
            and {k: v for k, v in a.items() if k not in ("metadata", "apiVersion")}
            == {k: v for k, v in b.items() if k not in ("metadata", "apiVersion")})


# ---------------------------------------------------------------- selectors

_REQ = re.compile(r"\s*(!?)\s*([A-Za-z0-9._/-]+)\s*(?:(==|=|!=)\s*([A-Za-z0-9._-]*)|"
                  r"\s+(in|notin)\s*\(([^)]*)\))?\s*(?:,|$)")


def parse_label_selector(s):
    reqs, pos = [], 0
    s = s or ""
    while pos < len(s):
        m = _REQ.match(s, pos)
        if not m or m.end() == pos:
            raise bad_request("unable to parse requirement: invalid label selector %r" % s)
        neg, key, op, val, setop, vals = m.groups()
        if op:
            reqs.append((key, "!=" if op == "!=" else "=", [val]))
        elif setop:
            reqs.append((key, setop, [v.strip() for v in vals.split(",") if v.strip()]))
        else:
            reqs.append((key, "!exists" if neg else "exists", []))
        pos = m.end()
    return reqs


def labels_match(reqs, labels):
    labels = labels or {}
    for key, op, vals in reqs:
        has, v = key in labels, labels.get(key)
        if op == "=" and v != vals[0]:
            return False
        if op == "!=" and has and v == vals[0]:
            return False
        if op == "in" and v not in vals:
            return False
        if op == "notin" and has and v in vals:
            return False
        if op == "exists" and not has:
            return False
        if op == "!exists" and has:
            return False
    return True


def parse_field_selector(s):
    out = []
    for part in (s or "").split(","):
        if not part.strip():
            continue
        m = re.match(r"\s*([A-Za-z0-9_.]+)\s*(==|=|!=)\s*(.*?)\s*$", part)
        if not m:
            raise bad_request('invalid selector: \'%s\'; can\'t understand \'%s\'' % (s, part))
        out.append((m.group(1), m.group(2) != "!=", m.group(3)))
    return out


def fields_match(reqs, obj):
    for path, eq, want in reqs:
        cur = obj
        for p in path.split("."):
            cur = cur.get(p) if isinstance(cur, dict) else None
        have = "" if cur is None else (json.dumps(cur) if not isinstance(cur, str) else cur)
        if (have == want) != eq:
            return False
    return True


# ---------------------------------------------------------------- state

# who made the objects of a seed that carry no managedFields
SYSTEM_MADE = {"Node": "kubelet", "Pod": "kube-controller-manager",
               "ReplicaSet": "kube-controller-manager",
               "ControllerRevision": "kube-controller-manager",
               "Endpoints": "kube-controller-manager",
               "EndpointSlice": "kube-controller-manager",
               "Event": "kube-controller-manager",
               "PersistentVolume": "kube-controller-manager"}
CLIENT_SIDE_APPLY = "kubectl-client-side-apply"
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


class State:
    def __init__(self, node_name, arch, rollout_delay=0.2, history=1000, broken=None):
        self.lock = threading.RLock()
        self.cond = threading.Condition(self.lock)
        self.node_name, self.arch = node_name, arch
        self.default_delay = rollout_delay
        self.history_len = history
        self.broken = broken
        self.requests = collections.deque(maxlen=10000)
        self.counts = collections.Counter()
        self.reset()

    # ---- setup
    def reset(self):
        with self.lock:
            self.types = {}
            for rt in builtin_types():
                self.types[(rt.group, rt.version, rt.plural)] = rt
            self.objects = collections.defaultdict(dict)
            self.rv = getattr(self, "rv", 0)   # never goes back: a stale RV stays stale
            self.events = collections.deque()
            self.floor = self.rv
            self.stalled = {}          # (kind, ns, name) -> "stall" or "fail"
            self._seeding_status = False
            self._seeding = False
            self.pods = pods.Controller(self)
            self.faults = []
            self.force_gone = []
            self.watch_epoch = getattr(self, "watch_epoch", 0) + 1
            self.rollout_delay = self.default_delay
            self.ips = set()
            self.node_ports = set()
            self.requests.clear()
            self.counts.clear()
            self._seed_defaults()
            self.cond.notify_all()

    def _seed_defaults(self):
        for ns in ("default", "kube-system", "kube-public", "kube-node-lease"):
            self._put_direct({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        self._put_direct({"apiVersion": "v1", "kind": "Service", "metadata": {
            "name": "kubernetes", "namespace": "default",
            "labels": {"component": "apiserver", "provider": "kubernetes"}},
            "spec": {"clusterIP": "10.152.183.1", "ports": [
                {"name": "https", "port": 443, "targetPort": 16443}]}})
        n = self.node_name
        self._put_direct({"apiVersion": "v1", "kind": "Node", "metadata": {"name": n, "labels": {
            "beta.kubernetes.io/arch": self.arch, "beta.kubernetes.io/os": "linux",
            "kubernetes.io/arch": self.arch, "kubernetes.io/hostname": n,
            "kubernetes.io/os": "linux", "microk8s.io/cluster": "true",
            "node.kubernetes.io/microk8s-controlplane": "microk8s-controlplane"}},
            "spec": {}, "status": {
                "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                                "message": "kubelet is posting ready status",
                                "lastHeartbeatTime": now(), "lastTransitionTime": now()}],
                "addresses": [{"type": "InternalIP", "address": "127.0.0.1"},
                              {"type": "Hostname", "address": n}],
                "capacity": {"cpu": "2", "memory": "4Gi", "pods": "110"},
                "allocatable": {"cpu": "2", "memory": "4Gi", "pods": "110"},
                "nodeInfo": {"kubeletVersion": "v1.32.3", "kubeProxyVersion": "v1.32.3",
                             "architecture": self.arch, "operatingSystem": "linux",
                             "osImage": "Ubuntu 24.04 LTS",
                             "containerRuntimeVersion": "containerd://1.7.27",
                             "kernelVersion": "6.8.0"}}}, keep_status=True)

    def _put_direct(self, obj, keep_status=False):
        rt = self.type_for(obj["apiVersion"], obj["kind"])
        ns = obj["metadata"].get("namespace", "") if rt.namespaced else ""
        self.create(rt, ns, obj, manager="fake-apiserver", keep_status=keep_status,
                    check_ns=False)

    def allocate_ip(self):
        for i in range(2, 255):
            ip = "10.152.183.%d" % i
            if ip not in self.ips:
                self.ips.add(ip)
                return ip
        raise ApiError(500, "InternalError", "Internal error occurred: range is full")

    def allocate_node_port(self):
        for p in range(30000, 32768):
            if p not in self.node_ports:
                self.node_ports.add(p)
                return p
        raise ApiError(500, "InternalError", "Internal error occurred: range is full")

    # ---- types
    def find_type(self, group, version, plural):
        return self.types.get((group, version, plural))

    def type_for(self, api_version, kind):
        g, _, v = api_version.rpartition("/")
        for rt in self.types.values():
            if rt.group == g and rt.version == v and rt.kind == kind:
                return rt
        raise ApiError(404, "NotFound", 'no matches for kind "%s" in version "%s"'
                       % (kind, api_version))

    def served(self):
        out = list(self.types.values())
        if self.broken == "discovery":
            out = [rt for rt in out if rt.group != "apps"]
        return out

    # ---- reads
    def present(self, rt, obj):
        o = jcopy(obj)
        o["apiVersion"], o["kind"] = rt.gv, rt.kind
        return o

    def get(self, rt, ns, name):
        with self.lock:
            obj = self.objects[rt.gr].get((ns, name))
            if obj is None:
                raise not_found(rt, name)
            return self.present(rt, obj)

    def list(self, rt, ns, label_sel=None, field_sel=None):
        lreqs, freqs = parse_label_selector(label_sel), parse_field_selector(field_sel)
        with self.lock:
            items = [self.present(rt, o) for (ons, _), o in sorted(self.objects[rt.gr].items())
                     if (not ns or ons == ns)
                     and labels_match(lreqs, o["metadata"].get("labels"))
                     and fields_match(freqs, o)]
            return items, str(self.rv)

    # ---- writes
    def _key(self, rt, ns, obj, url_name=None):
        md = obj.setdefault("metadata", {})
        if not isinstance(md, dict):
            raise bad_request("metadata must be an object")
        if rt.namespaced:
            ons = md.get("namespace")
            if ons and ns and ons != ns:
                raise bad_request("the namespace of the provided object does not match the "
                                  "namespace sent on the request")
            ns = ns or ons or "default"
            md["namespace"] = ns
        else:
            md.pop("namespace", None)
            ns = ""
        if url_name is not None:
            if md.get("name") and md["name"] != url_name:
                raise bad_request("the name of the object (%s) does not match the name on the "
                                  "URL (%s)" % (md["name"], url_name))
            md["name"] = url_name
        if not md.get("name") and md.get("generateName"):
            md["name"] = md["generateName"] + "".join(
                random.choice(string.ascii_lowercase + string.digits) for _ in range(5))
        return ns, md.get("name") or ""

    def _check_kind(self, rt, obj):
        if not isinstance(obj, dict):
            raise bad_request("the body of the request was in an unknown format")
        av, kind = obj.get("apiVersion"), obj.get("kind")
        if kind and kind != rt.kind:
            raise bad_request('the server rejected our request: kind "%s" does not match the '
                              'expected kind "%s"' % (kind, rt.kind))
        if av and av.rpartition("/")[0] != rt.group:
            raise bad_request("the API version in the data (%s) does not match the expected "
                              "API version (%s)" % (av, rt.gv))

    def create(self, rt, ns, body, dry=False, manager=None, keep_status=False, check_ns=True,
               managed=None):
        self._check_kind(rt, body)
        obj = drop_nulls(jcopy(body))
        if not rt.crd:
            drop_empty_maps(obj, type_of(rt))            # omitempty
        with self.lock:
            ns, name = self._key(rt, ns, obj)
            if name and (ns, name) in self.objects[rt.gr]:
                raise already_exists(rt, name)
            if check_ns and rt.namespaced and ("", ns) not in self.objects[("", "namespaces")]:
                raise namespace_not_found(ns)
            md = obj["metadata"]
            for f in ("resourceVersion", "uid", "creationTimestamp", "generation",
                      "deletionTimestamp", "selfLink"):
                md.pop(f, None)
            if rt.status and not keep_status:
                obj.pop("status", None)
            kinds.default(self, rt, obj, None)
            errs = kinds.validate(rt, obj, None)
            if rt.kind == "CustomResourceDefinition":
                errs += self._crd_errors(obj)
            if errs:
                raise invalid(rt, name, errs)
            md["uid"] = str(uuid.uuid4())
            md["creationTimestamp"] = now()
            md["generation"] = 1
            if managed is not None:
                md["managedFields"] = managed
            elif manager:
                md["managedFields"] = [self._mf_entry(rt, manager, "Update",
                                                      field_paths(obj, typ=type_of(rt)))]
            if rt.kind == "CustomResourceDefinition":
                self._crd_status(obj)
            ip = obj["spec"].get("clusterIP") if rt.kind == "Service" else None
            if ip and ip != "None":
                (self.ips.discard if dry else self.ips.add)(ip)
            return 201, self._commit(rt, ns, name, None, obj, dry)

    def _commit(self, rt, ns, name, old, new, dry):
        """Store new (old is the current object or None); returns what to answer."""
        if old is not None and _same(old, new):
            return self.present(rt, old)
        if dry:
            return self.present(rt, new)
        self.rv += 1
        new["metadata"]["resourceVersion"] = str(self.rv)
        new["apiVersion"], new["kind"] = rt.gv, rt.kind
        self.objects[rt.gr][(ns, name)] = new
        self._event("ADDED" if old is None else "MODIFIED", rt, ns, name, new)
        self._after_write(rt, ns, name, old, new)
        return self.present(rt, new)

    def _event(self, typ, rt, ns, name, obj):
        if len(self.events) >= self.history_len:
            self.floor = self.events.popleft().rv
        self.events.append(Event(self.rv, typ, rt.gr, ns, name, jcopy(obj)))
        self.cond.notify_all()

    def _merge_for_update(self, rt, old, new, sub):
        """What a write through the main resource or /status may change."""
        if sub == "status":
            out = jcopy(old)
            if "status" in new:
                out["status"] = new["status"]
            else:
                out.pop("status", None)
            return out
        if rt.status:
            new = dict(new)
            if "status" in old:
                new["status"] = jcopy(old["status"])
            else:
                new.pop("status", None)
        return new

    def update(self, rt, ns, name, body, dry=False, manager=None, sub=None, op="Update",
               managed=None, precondition=True):
        self._check_kind(rt, body)
        new = drop_nulls(jcopy(body))
        if not rt.crd:
            drop_empty_maps(new, type_of(rt))            # omitempty
        with self.lock:
            ns, _ = self._key(rt, ns, new, url_name=name)
            old = self.objects[rt.gr].get((ns, name))
            if old is None:
                raise not_found(rt, name)
            want = (new.get("metadata") or {}).get("resourceVersion")
            if precondition and want and want != old["metadata"]["resourceVersion"]:
                raise conflict(rt, name)
            new = self._merge_for_update(rt, old, new, sub)
            md, omd = new["metadata"], old["metadata"]
            for f in ("uid", "creationTimestamp", "generation"):
                md[f] = omd[f]
            md["resourceVersion"] = omd["resourceVersion"]
            kinds.default(self, rt, new, old)
            if spec_of(new) != spec_of(old):
                md["generation"] = omd["generation"] + 1
            errs = [] if sub == "status" else kinds.validate(rt, new, old)
            if rt.kind == "CustomResourceDefinition" and sub != "status":
                errs += self._crd_errors(new)
            if errs:
                raise invalid(rt, name, errs)
            if sub != "status":
                kinds.admit_update(self, rt, old, new)
            if managed is not None:
                md["managedFields"] = managed
            elif sub != "status":
                md["managedFields"] = self._record_update(rt, old, new, manager or "unknown")
            else:
                md["managedFields"] = omd.get("managedFields", [])
            if rt.kind == "CustomResourceDefinition" and sub != "status":
                self._crd_status(new)
            return 200, self._commit(rt, ns, name, old, new, dry)

    def patch(self, rt, ns, name, ptype, body, dry=False, manager=None, force=False, sub=None):
        if ptype == "apply":
            return self.apply(rt, ns, name, body, dry, manager, force, sub)
        with self.lock:
            old = self.objects[rt.gr].get((ns if rt.namespaced else "", name))
            if old is None:
                raise not_found(rt, name)
            cur = self.present(rt, old)
            if ptype == "json":
                new = json_patch(cur, body)
            else:
                if not isinstance(body, dict):
                    raise bad_request("patch body must be a JSON object")
                new = merge(cur, body, keyed=(ptype == "strategic"))
            return self.update(rt, ns, name, new, dry, manager, sub)

    def apply(self, rt, ns, name, body, dry, manager, force, sub):
        if not manager:
            raise ApiError(422, "Invalid", 'PatchOptions.meta.k8s.io "" is invalid: '
                           'fieldManager: Required value: is required for apply patch')
        if not isinstance(body, dict):
            raise bad_request("error decoding YAML: the body is not an object")
        if not body.get("apiVersion") or not body.get("kind"):
            raise bad_request("Object 'Kind' is missing in '%s'" % json.dumps(body))
        self._check_kind(rt, body)
        with self.lock:
            cfg = jcopy(body)
            ns, _ = self._key(rt, ns, cfg, url_name=name)
            old = self.objects[rt.gr].get((ns, name))
            typ = type_of(rt)
            paths = field_paths(cfg, skip_status=(sub != "status"), typ=typ)
            if old is None:
                if sub:
                    raise not_found(rt, name)
                entry = self._mf_entry(rt, manager, "Apply", paths)
                return self.create(rt, ns, cfg, dry, managed=[entry])
            # a resourceVersion in the patch is a precondition, for an
            # apply as for any patch (kubernetes/kubernetes#63104)
            want = (cfg.get("metadata") or {}).get("resourceVersion")
            if want and want != old["metadata"]["resourceVersion"]:
                raise conflict(rt, name)
            mf = jcopy(old["metadata"].get("managedFields") or [])
            mine = [e for e in mf if e.get("manager") == manager and e.get("operation") == "Apply"
                    and e.get("subresource", "") == (sub or "")]
            others = [e for e in mf if e not in mine]
            prev = set().union(*[fields_to_paths(e.get("fieldsV1")) for e in mine])
            other_paths = set().union(*[fields_to_paths(e.get("fieldsV1")) for e in others])
            base = self.present(rt, old)
            if rt.status and sub != "status":
                cfg.pop("status", None)
            if not force:
                self._check_conflicts(rt, name, base, cfg, paths, others, sub)
            new = merge(base, cfg, keyed=True, typ=typ)
            removed = []
            for p in sorted(prev - paths, key=len):
                if any(p[:len(r)] == r for r in removed):
                    continue
                if any(o[:len(p)] == p for o in other_paths):
                    continue
                if remove_path(new, p):
                    removed.append(p)
            kept = []
            # force: the applied fields whose value changes become this
            # manager's; a field applied with the value it has is shared
            taken = paths & changed_paths(base, new, typ=typ)
            for e in others:
                left = fields_to_paths(e.get("fieldsV1")) - taken
                if left:
                    e["fieldsV1"] = paths_to_fields(left)
                    kept.append(e)
            entry = self._mf_entry(rt, manager, "Apply", paths, sub)
            if mine and fields_to_paths(mine[0].get("fieldsV1")) == paths:
                entry["time"] = mine[0].get("time", entry["time"])
            new.setdefault("metadata", {})["resourceVersion"] = None
            return self.update(rt, ns, name, new, dry, sub=sub, managed=kept + [entry],
                               precondition=False)

    def _check_conflicts(self, rt, name, base, cfg, paths, others, sub):
        """409 like the real server when another manager owns a field this
        apply sets to a different value (only without force=true)."""
        leaves = {p for p in paths if not any(q[:len(p)] == p and q != p for q in paths)
                  and (not isinstance(get_path(cfg, p), dict) or self._atomic_at(rt, p))}
        found = []
        for e in others:
            if e.get("subresource", "") != (sub or ""):
                continue
            for p in sorted(fields_to_paths(e.get("fieldsV1")) & leaves):
                if get_path(base, p) != get_path(cfg, p):
                    who = '"%s"' % e.get("manager")
                    if e.get("operation") == "Update":
                        who += " using " + e.get("apiVersion", rt.gv)
                    found.append((who, path_str(p)))
        if not found:
            return
        if len(found) == 1:
            msg = "Apply failed with 1 conflict: conflict with %s: %s" % found[0]
        else:
            lines = []
            for who in sorted({w for w, _ in found}):
                lines.append("conflicts with %s:" % who)
                lines += ["- " + p for w, p in found if w == who]
            msg = "Apply failed with %d conflicts: %s" % (len(found), "\n".join(lines))
        raise ApiError(409, "Conflict", msg, {"causes": [
            {"reason": "FieldManagerConflict", "message": "conflict with " + w, "field": p}
            for w, p in found]})

    def _atomic_at(self, rt, path):
        """Is the field at path an atomic map or struct by the schema?"""
        t = type_of(rt)
        for seg in path:
            t = schema.field_type(t, seg[2:]) if seg.startswith("f:") else schema.item_type(t)
        return bool(t.get("ma"))

    def _mf_entry(self, rt, manager, op, paths, sub=None):
        e = {"manager": manager, "operation": op, "apiVersion": rt.gv, "time": now(),
             "fieldsType": "FieldsV1", "fieldsV1": paths_to_fields(paths)}
        if sub:
            e["subresource"] = sub
        return e

    def _record_update(self, rt, old, new, manager):
        changed = changed_paths(old, new, typ=type_of(rt))
        # a field the update removed is nobody's (structured-merge-diff
        # merge/update.go: every manager's set loses compare.Removed)
        removed = field_paths(old, typ=type_of(rt)) - field_paths(new, typ=type_of(rt))
        # managedFields the request sets are taken as given (client-go's
        # csaupgrade sends them as a JSON patch); else the stored ones
        given = (new.get("metadata") or {}).get("managedFields")
        mf = jcopy(given or old["metadata"].get("managedFields") or [])
        if not changed and not removed:
            return mf
        out, mine = [], set()
        for e in mf:
            ps = fields_to_paths(e.get("fieldsV1"))
            if e.get("manager") == manager and e.get("operation") == "Update" \
                    and not e.get("subresource"):
                mine |= ps
                continue
            left = ps - changed - removed
            if left:
                e["fieldsV1"] = paths_to_fields(left)
                out.append(e)
        mine = (mine | changed) - removed
        if mine:
            out.append(self._mf_entry(rt, manager, "Update", mine))
        return out

    def delete(self, rt, ns, name, dry=False):
        with self.lock:
            key = (ns if rt.namespaced else "", name)
            old = self.objects[rt.gr].get(key)
            if old is None:
                raise not_found(rt, name)
            if dry:
                return self.present(rt, old)
            self._remove(rt, key)
            return self.present(rt, old)

    def _remove(self, rt, key):
        old = self.objects[rt.gr].pop(key, None)
        if old is None:                 # gone with its owner already
            return
        self.rv += 1
        gone = jcopy(old)
        gone["metadata"]["resourceVersion"] = str(self.rv)
        self._event("DELETED", rt, key[0], key[1], gone)
        if rt.kind == "Namespace":
            seen = set()
            for t in list(self.types.values()):
                if t.namespaced and t.gr not in seen:
                    seen.add(t.gr)
                    for k in [k for k in self.objects[t.gr] if k[0] == key[1]]:
                        self._remove(t, k)
        elif rt.kind == "CustomResourceDefinition":
            self._crd_unregister(old)
        elif rt.kind == "Service":
            self.ips.discard((old.get("spec") or {}).get("clusterIP"))
        self.pods.removed(rt, old)

    # ---- CRDs
    def _crd_errors(self, obj):
        from apiserver_types import FieldError
        spec = obj.get("spec") or {}
        names = spec.get("names") or {}
        want = "%s.%s" % (names.get("plural"), spec.get("group"))
        errs = []
        if obj["metadata"].get("name") != want:
            errs.append(FieldError("metadata.name", "Invalid",
                                   'must be spec.names.plural+"."+spec.group',
                                   value=obj["metadata"].get("name")))
        if not spec.get("versions"):
            errs.append(FieldError("spec.versions", "Invalid", "must have exactly one version "
                                   "marked as storage version", value=[]))
        return errs

    def _crd_status(self, obj):
        spec = obj["spec"]
        names = dict(spec.get("names") or {})
        names.setdefault("singular", names.get("kind", "").lower())
        names.setdefault("listKind", names.get("kind", "") + "List")
        storage = [v["name"] for v in spec.get("versions") or [] if v.get("storage")]
        st = obj.get("status") or {}
        ts = now()
        obj["status"] = {
            "acceptedNames": names,
            "conditions": [
                {"type": "NamesAccepted", "status": "True", "reason": "NoConflicts",
                 "message": "no conflicts found", "lastTransitionTime": ts},
                {"type": "Established", "status": "True", "reason": "InitialNamesAccepted",
                 "message": "the initial names have been accepted", "lastTransitionTime": ts}],
            "storedVersions": sorted(set((st.get("storedVersions") or []) + storage))}
        spec.setdefault("conversion", {"strategy": "None"})

    def _crd_register(self, obj):
        spec, name = obj["spec"], obj["metadata"]["name"]
        self._crd_unregister(obj, keep_objects=True)
        n = spec.get("names") or {}
        for v in spec.get("versions") or []:
            if not v.get("served", True):
                continue
            rt = RType(spec["group"], v["name"], n["plural"], n["kind"],
                       spec.get("scope", "Namespaced") == "Namespaced",
                       short=n.get("shortNames") or (), categories=n.get("categories") or (),
                       singular=n.get("singular"),
                       status="status" in (v.get("subresources") or {}), crd=name)
            rt.openapi = (v.get("schema") or {}).get("openAPIV3Schema")
            self.types[(rt.group, rt.version, rt.plural)] = rt

    def _crd_unregister(self, obj, keep_objects=False):
        name = obj["metadata"]["name"]
        for key, rt in list(self.types.items()):
            if rt.crd == name:
                del self.types[key]
                if not keep_objects:
                    for k in list(self.objects[rt.gr]):
                        self._remove(rt, k)

    # ---- workload controller
    def _after_write(self, rt, ns, name, old, new):
        if rt.kind == "CustomResourceDefinition":
            self._crd_register(new)
        if rt.kind == "Node" and not rt.crd:
            self._refresh_workloads()
        if rt.kind in WORKLOADS + ("Job",) and not self._seeding_status and (old is None or old["metadata"]["generation"] !=
                                     new["metadata"]["generation"]):
            self.schedule_rollout(rt, ns, name)
        if rt.kind in WORKLOADS and not rt.crd and not self._seeding:
            st = new.get("status") or {}
            if st.get("observedGeneration") == new["metadata"]["generation"] and \
                    st != (old or {}).get("status"):
                self.pods.sync(self.present(rt, new))

    def _refresh_workloads(self):
        """A Node changed: the DaemonSets' controller counts again, and a
        Deployment's or StatefulSet's pods may (no longer) have a Ready node."""
        for kind in ("DaemonSet", "Deployment", "StatefulSet"):
            self._refresh_kind(self.type_for("apps/v1", kind))

    def _refresh_kind(self, rt):
        def counts(st):
            return {k: v for k, v in st.items() if k != "conditions"}
        for (ns, name), obj in list(self.objects[rt.gr].items()):
            st = obj.get("status") or {}
            if st.get("observedGeneration") != obj["metadata"]["generation"] \
                    or self.broken == "rollout" or (rt.kind, ns, name) in self.stalled:
                continue
            want = self.workload_status(rt.kind, obj, False)
            if want is not None and counts(want) != counts(st):
                new = jcopy(obj)
                new["status"] = want
                self._commit(rt, ns, name, obj, new, False)

    def schedule_rollout(self, rt, ns, name):
        gen = self.objects[rt.gr][(ns, name)]["metadata"]["generation"]
        t = threading.Timer(self.rollout_delay, self._rollout, (rt, ns, name, gen))
        t.daemon = True
        t.start()

    def _rollout(self, rt, ns, name, gen):
        with self.lock:
            obj = self.objects[rt.gr].get((ns, name))
            if obj is None or obj["metadata"]["generation"] != gen:
                return
            stalled = self.broken == "rollout" or self.stalled.get((rt.kind, ns, name), False)
            st = self.workload_status(rt.kind, obj, stalled)
            if st is None or st == obj.get("status"):
                return
            new = jcopy(obj)
            new["status"] = st
            self._commit(rt, ns, name, obj, new, False)

    def workload_status(self, kind, obj, stalled):
        return pods.workload_status(kind, obj, stalled,
                                    list(self.objects[("", "nodes")].values()))

    # ---- controls
    def _workload(self, kind, ns, name):
        for rt in self.types.values():
            if rt.kind == kind and rt.kind in WORKLOADS + ("Job",) and not rt.crd:
                return rt
        raise bad_request("stall: kind must be Deployment, DaemonSet, StatefulSet or Job")

    def stall(self, kind, ns, name, on=True, fail=False):
        with self.lock:
            rt = self._workload(kind, ns, name)
            key = (kind, ns or "default", name)
            if on:
                self.stalled[key] = "fail" if fail and kind == "Job" else "stall"
                return
            self.stalled.pop(key, None)
            if (key[1], name) in self.objects[rt.gr]:
                self.schedule_rollout(rt, key[1], name)

    def seed(self, objs):
        with self.lock:
            top = not self._seeding
            self._seeding = True
            try:
                out = self._seed_objects(objs)
            finally:
                self._seeding = not top
            if top:
                self.pods.seeded(out)
        return out

    def _seed_objects(self, objs):
        out = []
        for obj in objs:
            if not isinstance(obj, dict) or not obj.get("kind"):
                continue
            if obj["kind"].endswith("List") and isinstance(obj.get("items"), list):
                out += self._seed_objects(obj["items"])
                continue
            rt = self.type_for(obj.get("apiVersion", ""), obj["kind"])
            md = obj.setdefault("metadata", {})
            ns = md.get("namespace") or ("default" if rt.namespaced else "")
            if rt.namespaced and ("", ns) not in self.objects[("", "namespaces")]:
                self._put_direct({"apiVersion": "v1", "kind": "Namespace",
                                  "metadata": {"name": ns}})
            has_status = "status" in obj
            key = (ns, md.get("name"))
            if key in self.objects[rt.gr]:
                self._remove(rt, key)
            self._seeding_status = has_status
            managed = self._seed_owner(rt, obj)
            try:
                _, res = self.create(rt, ns, obj, manager="seed", keep_status=has_status,
                                     check_ns=False, managed=managed)
            finally:
                self._seeding_status = False
            out.append({"kind": rt.kind, "namespace": ns, "name": res["metadata"]["name"],
                        "resourceVersion": res["metadata"]["resourceVersion"]})
        return out

    def _seed_owner(self, rt, obj):
        """A seeded object's managedFields, as the mock's fixtures have them
        (lua/backend/mock/cluster.lua _seed_owner): the ones it carries (`kubectl
        get -o yaml`), else those `kubectl apply` (client side, as `microk8s
        enable` runs it) leaves, with its last-applied-configuration; what
        controllers and kubelet make is theirs."""
        md = obj["metadata"]
        if md.get("managedFields"):
            return jcopy(md["managedFields"])
        who = SYSTEM_MADE.get(rt.kind) if not rt.crd else None
        if who is None:
            who = CLIENT_SIDE_APPLY
            ann = md.setdefault("annotations", {})
            if LAST_APPLIED not in ann:
                cfg = {k: v for k, v in obj.items() if k != "status"}
                cfg["metadata"] = {k: v for k, v in md.items()
                                   if k in ("name", "namespace", "labels", "annotations")}
                ann[LAST_APPLIED] = json.dumps(cfg, sort_keys=True,
                                               separators=(",", ":")) + "\n"
        return [self._mf_entry(rt, who, "Update", field_paths(obj, typ=type_of(rt)))]

    def compact(self):
        with self.lock:
            self.events.clear()
            self.floor = self.rv

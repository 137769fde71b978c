"""The objects the fake API server's workload controllers make: a
Deployment's ReplicaSets and Pods, a DaemonSet's and a StatefulSet's Pods.

The same rules as the mock's (lua/backend/mock/controllers.lua `pods`,
lua/backend/mock/cluster.lua `_sync_pods`), written again in Python (docs/mock.md,
"One implementation or two"):

- a Deployment owns a ReplicaSet `<name>-<pod-template-hash>` per template
  it ran; the current one has its replicas, the older ones 0 (kept up to
  spec.revisionHistoryLimit, default 10). Its Pods are `<rs>-<5 chars>`,
  owned by that ReplicaSet, labelled `pod-template-hash`;
- a DaemonSet has one Pod `<name>-<5 chars>` on each Node it schedules on
  (`ds_schedules`), spec.nodeName set, labelled `controller-revision-hash`;
- a StatefulSet's Pods are `<name>-0`.., labelled `controller-revision-hash`;
- a Deployment's or StatefulSet's Pods go to one Ready Node the scheduler
  can place them on (this node when it is one, else the first by name);
  with none they are Pending (no spec.nodeName);
- a Pod is Ready unless its node is NotReady or the rollout has not made
  it available yet; new template, new Pods; a deleted workload's go with
  it (the garbage collector, at once);
- a fixture (/_fake/seed) that lists Pods of a workload keeps just those.

The pod-template-hash is computed as kube-controller-manager does
(kubernetes/kubernetes@v1.32.3 pkg/controller/controller_utils.go
ComputeHash: FNV-32a of the template, the decimal digits mapped by
apimachinery's rand.SafeEncodeString), over the template's JSON rather
than Go's %#v, so the value differs from a real cluster's but looks alike.
"""
import copy
import json
import time

import apiserver_kinds as kinds

ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"       # apimachinery util/rand
MANAGER = "kube-controller-manager"
REVISION = "deployment.kubernetes.io/revision"


def fnv32a(s):
    h = 2166136261
    for b in s.encode():
        h = ((h ^ b) * 16777619) & 0xffffffff
    return h


def template_hash(obj):
    t = (obj.get("spec") or {}).get("template")
    s = str(fnv32a(json.dumps(t, sort_keys=True, separators=(",", ":"))))
    return "".join(ALPHANUMS[ord(c) % len(ALPHANUMS)] for c in s)


def suffix(seed):
    """5 characters of the alphabet generateName uses, fixed by seed (as the
    mock's lua/backend/mock/controllers.lua suffix)."""
    h, out = fnv32a(seed), []
    for i in range(1, 6):
        out.append(ALPHANUMS[h % len(ALPHANUMS)])
        h = (h // len(ALPHANUMS)) ^ ((i * 2654435761) & 0xffffffff)
    return "".join(out)


def placement(obj, nodes, this_node):
    """(node name or None, placed): as lua/backend/mock/controllers.lua placement."""
    if not nodes:
        return this_node, True
    best = None
    for n in nodes:
        if kinds.node_ready(n) and kinds.ds_schedules(obj, n, False):
            nn = n["metadata"]["name"]
            if nn == this_node:
                return nn, True
            if best is None or nn < best:
                best = nn
    return best, best is not None


def owned_by(o, w):
    """Is o (a Pod or ReplicaSet) the workload w's? By its controller's kind
    and name, as the mock's owned_by (a fixture's uids are not the stored
    ones): a Deployment's Pods through its ReplicaSets <name>-<hash>."""
    md = o["metadata"]
    if md.get("namespace") != w["metadata"].get("namespace"):
        return False
    refs = md.get("ownerReferences") or []
    ref = refs[0] if refs and isinstance(refs[0], dict) else None
    if ref is None:
        return False
    name = w["metadata"]["name"]
    if w["kind"] == "Deployment" and o.get("kind") == "Pod":
        return ref.get("kind") == "ReplicaSet" and \
            str(ref.get("name")).rpartition("-")[0] == name
    return ref.get("kind") == w["kind"] and ref.get("name") == name


def has_pods(pods, w):
    """A fixture lists Pods of w: owned by it or matching its matchLabels."""
    sel = ((w.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}
    for p in pods:
        if owned_by(p, w):
            return True
        labels = p["metadata"].get("labels") or {}
        if sel and p["metadata"].get("namespace") == w["metadata"].get("namespace") and \
                all(labels.get(k) == v for k, v in sel.items()):
            return True
    return False


def _owner(obj, kind=None, name=None, uid=None):
    return {"apiVersion": "apps/v1", "kind": kind or obj["kind"],
            "name": name or obj["metadata"]["name"],
            "uid": uid or obj["metadata"]["uid"], "controller": True,
            "blockOwnerDeletion": True}


def want_pods(w, nodes, this_node, owner):
    """The Pods w's controller keeps: [(name, node or None, ready)] and the
    labels and owner reference they carry."""
    md, spec = w["metadata"], w.get("spec") or {}
    st = w.get("status") or {}
    labels = dict(((spec.get("template") or {}).get("metadata") or {}).get("labels") or {})
    h = template_hash(w)
    places = []
    if w["kind"] == "DaemonSet":
        labels["controller-revision-hash"] = h
        for n in nodes:
            if kinds.ds_schedules(w, n):
                nn = n["metadata"]["name"]
                places.append((md["name"] + "-" + suffix(md["name"] + h + nn), nn,
                               kinds.node_ready(n)))
        if not nodes:
            places.append((md["name"] + "-" + suffix(md["name"] + h), this_node, True))
        places.sort()
        return places, labels
    r = spec.get("replicas", 1)
    on, placed = placement(w, nodes, this_node)
    if w["kind"] == "StatefulSet" and not placed:
        r = min(r, st.get("replicas", r))
    avail = st.get("availableReplicas") or st.get("readyReplicas") or 0
    if w["kind"] == "Deployment":
        labels["pod-template-hash"] = h
        rs = md["name"] + "-" + h
        names = [rs + "-" + suffix(rs + str(i)) for i in range(1, r + 1)]
    else:
        labels["controller-revision-hash"] = md["name"] + "-" + h
        names = ["%s-%d" % (md["name"], i) for i in range(r)]
    return [(nm, on, placed and i < avail) for i, nm in enumerate(names)], labels


def pod(w, name, node, ready, labels, owner):
    spec = copy.deepcopy(((w.get("spec") or {}).get("template") or {}).get("spec") or {})
    kinds.pod_spec_defaults(spec)
    if node:
        spec["nodeName"] = node
    running = node is not None
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {
        "name": name, "namespace": w["metadata"]["namespace"], "labels": dict(labels),
        "ownerReferences": [owner]}, "spec": spec,
        "status": {"phase": "Running" if running else "Pending",
                   "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}}


def job_status(obj, stalled, ts):
    """A Job's status as lua/mock/controllers.lua's: complete, or still
    running when stalled, or failed (stalled == "fail") as the Job
    controller of Kubernetes 1.32 leaves a Job past its backoffLimit."""
    if stalled == "fail":
        why = ("BackoffLimitExceeded", "Job has reached the specified backoff limit")
        failed = ((obj.get("spec") or {}).get("backoffLimit", 6)) + 1
        return {"failed": failed, "startTime": ts, "ready": 0, "terminating": 0,
                "uncountedTerminatedPods": {}, "conditions": [
                    {"type": t, "status": "True", "reason": why[0], "message": why[1],
                     "lastProbeTime": ts, "lastTransitionTime": ts}
                    for t in ("FailureTarget", "Failed")]}
    if stalled:
        return {"active": 1, "startTime": ts, "ready": 0}
    why = ("CompletionsReached", "Reached expected number of succeeded pods")
    return {"succeeded": (obj.get("spec") or {}).get("completions", 1), "startTime": ts,
            "completionTime": ts, "ready": 0, "terminating": 0,
            "uncountedTerminatedPods": {}, "conditions": [
                {"type": t, "status": "True", "reason": why[0], "message": why[1],
                 "lastProbeTime": ts, "lastTransitionTime": ts}
                for t in ("SuccessCriteriaMet", "Complete")]}


def workload_status(kind, obj, stalled, nodes):
    """A workload's status after its rollout (stalled: in progress, updated
    but none available), as lua/backend/mock/controllers.lua's."""
    spec, md = obj.get("spec") or {}, obj["metadata"]
    gen = md["generation"]
    rev = "%s-%s" % (md["name"], template_hash(obj))    # the ReplicaSet's name
    ts = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    if kind == "Job":
        return job_status(obj, stalled, ts)
    if kind == "DaemonSet":
        # one pod per Node it schedules on; one on a NotReady node is
        # never available (as the mock's, lua/backend/mock/controllers.lua)
        on = [x for x in nodes if kinds.ds_schedules(obj, x)]
        n = len(on) if nodes else 1
        ready = 0 if stalled else (sum(1 for x in on if kinds.node_ready(x))
                                   if nodes else 1)
        return {"observedGeneration": gen, "currentNumberScheduled": n,
                "desiredNumberScheduled": n, "numberMisscheduled": 0,
                "numberReady": ready, "updatedNumberScheduled": n,
                "numberAvailable": ready,
                **({"numberUnavailable": n - ready} if n - ready else {})}
    r = spec.get("replicas", 1)
    if stalled and r == 0:
        return None
    made = r
    if r and not kinds.placeable(obj, nodes):
        # its pods can go to no Ready node: Pending, never available; an
        # OrderedReady StatefulSet makes pod 0 only and waits for it
        stalled = True
        if kind == "StatefulSet" and spec.get("podManagementPolicy") != "Parallel":
            made = 1
    ready = 0 if stalled else r
    if kind == "StatefulSet":
        st = {"observedGeneration": gen, "replicas": made, "readyReplicas": ready,
              "currentReplicas": r if not stalled else 0, "updatedReplicas": made,
              "availableReplicas": ready, "updateRevision": rev,
              "currentRevision": rev if not stalled else
              ((obj.get("status") or {}).get("currentRevision") or rev + "-old"),
              "collisionCount": 0}
        return st
    old = {c.get("type"): c for c in (obj.get("status") or {}).get("conditions") or []}

    def cond(typ, status, reason, msg):
        c = {"type": typ, "status": status, "lastUpdateTime": ts, "lastTransitionTime": ts,
             "reason": reason, "message": msg}
        o = old.get(typ)
        if o and o.get("status") == status:
            c["lastTransitionTime"] = o.get("lastTransitionTime", ts)
        return c
    if stalled:
        conds = [cond("Available", "False", "MinimumReplicasUnavailable",
                      "Deployment does not have minimum availability."),
                 cond("Progressing", "True", "ReplicaSetUpdated",
                      'ReplicaSet "%s" is progressing.' % rev)]
        return {"observedGeneration": gen, "replicas": r, "updatedReplicas": r,
                "readyReplicas": 0, "availableReplicas": 0, "unavailableReplicas": r,
                "conditions": conds}
    conds = [cond("Available", "True", "MinimumReplicasAvailable",
                  "Deployment has minimum availability."),
             cond("Progressing", "True", "NewReplicaSetAvailable",
                  'ReplicaSet "%s" has successfully progressed.' % rev)]
    return {"observedGeneration": gen, "replicas": r, "updatedReplicas": r,
            "readyReplicas": r, "availableReplicas": r, "conditions": conds}


class Controller:
    """Keeps the Pods and ReplicaSets of the State's workloads (its lock held)."""

    def __init__(self, state):
        self.s = state
        self.own = {}         # (kind, ns, name) -> generation: a fixture's Pods kept

    def rt(self, kind):
        return self.s.type_for("apps/v1" if kind == "ReplicaSet" else "v1", kind)

    def objects(self, kind, ns):
        rt = self.rt(kind)
        return [self.s.present(rt, o) for (ons, _), o in list(self.s.objects[rt.gr].items())
                if ons == ns]

    def seeded(self, made):
        """After a seed (made: its answer's list): a workload whose Pods the
        fixture lists keeps them; the others get theirs."""
        for m in made:
            if m["kind"] not in ("Deployment", "DaemonSet", "StatefulSet"):
                continue
            rt = self.s.type_for("apps/v1", m["kind"])
            cur = self.s.objects[rt.gr].get((m["namespace"], m["name"]))
            if cur is None:
                continue
            cur = self.s.present(rt, cur)
            if has_pods(self.objects("Pod", m["namespace"]), cur):
                self.own[(m["kind"], m["namespace"], m["name"])] = cur["metadata"]["generation"]
            elif cur.get("status"):
                self.sync(cur)

    def sync(self, w):
        key = (w["kind"], w["metadata"]["namespace"], w["metadata"]["name"])
        if self.own.get(key) == w["metadata"]["generation"]:
            return
        self.own.pop(key, None)
        nodes = list(self.s.objects[("", "nodes")].values())
        owner = _owner(w)
        if w["kind"] == "Deployment":
            owner = self.replicasets(w)
        places, labels = want_pods(w, nodes, self.s.node_name, owner)
        ns, prt = key[1], self.rt("Pod")
        want = {nm: pod(w, nm, node, ready, labels, owner) for nm, node, ready in places}
        for p in self.objects("Pod", ns):
            name = p["metadata"]["name"]
            if not owned_by(p, w):
                continue
            new = want.pop(name, None)
            if new is None or new["spec"] != p.get("spec"):
                self.s.delete(prt, ns, name)
                if new is not None:
                    want[name] = new
            elif new["status"]["conditions"] != (p.get("status") or {}).get("conditions") or \
                    new["status"]["phase"] != (p.get("status") or {}).get("phase"):
                p["status"].update(new["status"])
                self.s.update(prt, ns, name, p, manager="kubelet", sub="status")
        for name in sorted(want):
            self.s.create(prt, ns, want[name], manager=MANAGER, keep_status=True,
                          check_ns=False)

    def replicasets(self, d):
        """Make d's current ReplicaSet have its replicas, the older ones 0;
        the owner reference its Pods carry."""
        rt, ns = self.rt("ReplicaSet"), d["metadata"]["namespace"]
        h = template_hash(d)
        name = d["metadata"]["name"] + "-" + h
        spec = d.get("spec") or {}
        mine = [rs for rs in self.objects("ReplicaSet", ns) if owned_by(rs, d)]
        revs = [_rev(rs) for rs in mine]
        cur = next((rs for rs in mine if rs["metadata"]["name"] == name), None)
        top = max(revs) if revs else 0
        rev = top if cur is not None and _rev(cur) == top else top + 1
        st = d.get("status") or {}
        r = spec.get("replicas", 1)
        for rs in mine:
            if rs["metadata"]["name"] != name and rs["spec"].get("replicas") != 0:
                rs["spec"]["replicas"] = 0
                rs = self.s.update(rt, ns, rs["metadata"]["name"], rs, manager=MANAGER)[1]
                self._rs_status(rt, rs, 0, 0)
        tmpl = copy.deepcopy(spec.get("template") or {})
        tmpl.setdefault("metadata", {}).setdefault("labels", {})["pod-template-hash"] = h
        sel = copy.deepcopy(spec.get("selector") or {})
        sel.setdefault("matchLabels", {})["pod-template-hash"] = h
        ann = {REVISION: str(rev), "deployment.kubernetes.io/desired-replicas": str(r),
               "deployment.kubernetes.io/max-replicas": str(r + (1 if r else 0))}
        body = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {
            "name": name, "namespace": ns, "labels": dict(tmpl["metadata"]["labels"]),
            "annotations": ann, "ownerReferences": [_owner(d)]},
            "spec": {"replicas": r, "minReadySeconds": spec.get("minReadySeconds", 0),
                     "selector": sel, "template": tmpl}}
        if cur is None:
            rs = self.s.create(rt, ns, body, manager=MANAGER, check_ns=False)[1]
        else:
            new = copy.deepcopy(cur)
            new["metadata"]["annotations"] = {**(cur["metadata"].get("annotations") or {}),
                                              **ann}
            new["spec"] = body["spec"]
            rs = self.s.update(rt, ns, name, new, manager=MANAGER)[1]
        ready = st.get("availableReplicas") or 0
        rs = self._rs_status(rt, rs, r, min(ready, r))
        self._prune(rt, ns, d, name)
        return _owner(rs, "ReplicaSet")

    def _rs_status(self, rt, rs, replicas, ready):
        st = {"observedGeneration": rs["metadata"]["generation"], "replicas": replicas}
        if replicas:
            st.update(fullyLabeledReplicas=replicas)
        if ready:
            st.update(readyReplicas=ready, availableReplicas=ready)
        if rs.get("status") == st:
            return rs
        rs["status"] = st
        return self.s.update(rt, rs["metadata"]["namespace"], rs["metadata"]["name"], rs,
                             manager=MANAGER, sub="status")[1]

    def _prune(self, rt, ns, d, current):
        limit = (d.get("spec") or {}).get("revisionHistoryLimit", 10)
        old = sorted((rs for rs in self.objects("ReplicaSet", ns)
                      if owned_by(rs, d) and rs["metadata"]["name"] != current),
                     key=_rev)
        for rs in old[:max(len(old) - limit, 0)]:
            self.s.delete(rt, ns, rs["metadata"]["name"])

    def removed(self, rt, old):
        """The garbage collector, at once: a deleted workload's ReplicaSets and
        Pods, a deleted ReplicaSet's Pods (what these controllers make)."""
        if rt.crd or rt.kind not in ("Deployment", "DaemonSet", "StatefulSet", "ReplicaSet"):
            return
        ns, uid = old["metadata"].get("namespace"), old["metadata"].get("uid")
        for kind in ("ReplicaSet", "Pod"):
            krt = self.rt(kind)
            for o in self.objects(kind, ns):
                refs = o["metadata"].get("ownerReferences") or []
                if owned_by(o, old) or any(r.get("uid") == uid for r in refs
                                           if isinstance(r, dict)):
                    if (ns, o["metadata"]["name"]) in self.s.objects[krt.gr]:
                        self.s.delete(krt, ns, o["metadata"]["name"])
        self.own.pop((rt.kind, ns, old["metadata"]["name"]), None)


def _rev(rs):
    try:
        return int((rs["metadata"].get("annotations") or {}).get(REVISION, "0"))
    except ValueError:
        return 0



# ------------------------------------------------- kubectl get's columns

def _age(o):
    try:
        t = time.mktime(time.strptime(o["metadata"]["creationTimestamp"],
                                      "%Y-%m-%dT%H:%M:%SZ")) - time.timezone
    except (KeyError, ValueError):
        return "<unknown>"
    s = max(int(time.time() - t), 0)
    return "%ds" % s if s < 120 else ("%dm" % (s // 60) if s < 7200 else "%dh" % (s // 3600))


def _pod_cells(o):
    st = o.get("status") or {}
    n = len((o.get("spec") or {}).get("containers") or [])
    ready = any(c.get("type") == "Ready" and c.get("status") == "True"
                for c in st.get("conditions") or [])
    return [o["metadata"]["name"], "%d/%d" % (n if ready else 0, n),
            st.get("phase", "Pending"), 0, _age(o)]


def _rs_cells(o):
    sp, st = o.get("spec") or {}, o.get("status") or {}
    return [o["metadata"]["name"], sp.get("replicas", 1), st.get("replicas", 0),
            st.get("readyReplicas", 0), _age(o)]


def _deploy_cells(o):
    sp, st = o.get("spec") or {}, o.get("status") or {}
    return [o["metadata"]["name"], "%d/%d" % (st.get("readyReplicas", 0), sp.get("replicas", 1)),
            st.get("updatedReplicas", 0), st.get("availableReplicas", 0), _age(o)]


def _columns(*names):
    return [{"name": n, "type": "integer" if n in ("Restarts", "Desired", "Current",
                                                   "Up-to-date", "Available") else "string",
             "format": "name" if n == "Name" else "", "priority": 0, "description": n}
            for n in names]


# the columns kube-apiserver's printers (pkg/printers/internalversion) give
TABLES = {"Pod": (_columns("Name", "Ready", "Status", "Restarts", "Age"), _pod_cells),
          "ReplicaSet": (_columns("Name", "Desired", "Current", "Ready", "Age"), _rs_cells),
          "Deployment": (_columns("Name", "Ready", "Up-to-date", "Available", "Age"),
                         _deploy_cells)}

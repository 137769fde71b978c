#!/usr/bin/env python3
"""Protocol checks of the fake API server that kubectl does not reach: watch
and 410, conflicts, patch types, dry run, field removal by server-side apply,
workload statuses and the /_fake/ controls.  Prints "ok - ..." lines and
"N passed, N failed"."""
import http.client
import json
import os
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True
sys.path.insert(0, HERE)
from testlib import check, finish, send  # noqa: E402


class Client:
    def __init__(self, d, port):
        self.port = port
        self.ctx = ssl.create_default_context(cafile=os.path.join(d, "ca.crt"))
        self.ctx.load_cert_chain(os.path.join(d, "client.crt"), os.path.join(d, "client.key"))

    def conn(self, timeout=10):
        return http.client.HTTPSConnection("127.0.0.1", self.port, context=self.ctx,
                                           timeout=timeout)

    def req(self, method, path, body=None, ctype="application/json", accept=None):
        c = self.conn()
        headers = {"Content-Type": ctype}
        if accept:
            headers["Accept"] = accept
        if body is not None and not isinstance(body, (str, bytes)):
            body = json.dumps(body)
        return send(c, method, path, body, headers)

    def apply(self, path, obj, manager="uphook", extra=""):
        return self.req("PATCH", path + "?fieldManager=%s&force=true%s" % (manager, extra),
                        json.dumps(obj), "application/apply-patch+yaml")

    def watch(self, path, timeout=5):
        """Events of a watch until the stream ends (or timeout)."""
        c = self.conn(timeout)
        c.request("GET", path)
        r = c.getresponse()
        evs = []
        try:
            if r.status != 200:
                return r.status, json.loads(r.read())
            for line in r:
                if line.strip():
                    evs.append(json.loads(line))
        except socket.timeout:
            pass
        finally:
            c.close()
        return 200, evs

    def ctl(self, method, path, body=None):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        c.request(method, path, body=json.dumps(body) if isinstance(body, (dict, list))
                  else body)
        r = c.getresponse()
        data = r.read()
        c.close()
        return r.status, json.loads(data)


DEPLOY = {"apiVersion": "apps/v1", "kind": "Deployment",
          "metadata": {"name": "web", "namespace": "default", "labels": {"app": "web"}},
          "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
                   "template": {"metadata": {"labels": {"app": "web"}}, "spec": {
                       "containers": [{"name": "web", "image": "nginx:1",
                                       "env": [{"name": "A", "value": "1"},
                                               {"name": "B", "value": "2"}]}]}}}}
D_PATH = "/apis/apps/v1/namespaces/default/deployments"


def wait_for(fn, timeout=5):
    end = time.time() + timeout
    while time.time() < end:
        v = fn()
        if v:
            return v
        time.sleep(0.05)
    return fn()


def main():
    d = tempfile.mkdtemp(prefix="apiserver_test.")
    p = subprocess.Popen([sys.executable, os.path.join(HERE, "apiserver.py"), "--dir", d,
                          "--quiet", "--history", "50"], stdout=subprocess.PIPE, text=True)
    try:
        line = p.stdout.readline()
        check("server ready", line.startswith("ready "), line)
        if not line.startswith("ready "):
            return
        run(Client(d, int(line.split()[1])))
    finally:
        p.kill()
        p.wait()
        shutil.rmtree(d, ignore_errors=True)


def run(k):
    # discovery
    agg = "application/json;g=apidiscovery.k8s.io;v=%s;as=APIGroupDiscoveryList,application/json"
    for v in ("v2", "v2beta1"):
        code, body, r = k.req("GET", "/apis", accept=agg % v)
        groups = [i["metadata"]["name"] for i in body.get("items", [])]
        check("aggregated discovery %s on /apis" % v, code == 200 and "apps" in groups and
              r.getheader("Content-Type") == agg.split(",")[0] % v, (code, groups))
    code, body, r = k.req("GET", "/api", accept=agg % "v2")
    res = [x["resource"] for x in body["items"][0]["versions"][0]["resources"]]
    check("aggregated /api lists core resources", "configmaps" in res and "nodes" in res)
    code, body, _ = k.req("GET", "/apis/apps/v1")
    check("legacy /apis/apps/v1", code == 200 and any(
        x["name"] == "deployments/status" for x in body["resources"]))
    code, body, _ = k.req("GET", "/apis")
    check("legacy /apis group list", body.get("kind") == "APIGroupList")

    # errors look like the real server's
    code, body, _ = k.req("GET", D_PATH + "/nope")
    check("404 Status", code == 404 and body["message"] == 'deployments.apps "nope" not found'
          and body["details"] == {"name": "nope", "group": "apps", "kind": "deployments"}, body)
    code, body, _ = k.req("GET", "/api/v1/namespaces/default/configmaps/nope")
    check("core 404 message", body.get("message") == 'configmaps "nope" not found', body)
    code, body, _ = k.apply(D_PATH + "/web", DEPLOY)
    check("apply creates (201)", code == 201 and body["metadata"]["generation"] == 1, body)
    code, body, _ = k.req("POST", D_PATH, DEPLOY)
    check("POST existing: 409 AlreadyExists", code == 409 and body["reason"] == "AlreadyExists"
          and body["message"] == 'deployments.apps "web" already exists', body)
    code, body, _ = k.req("PATCH", D_PATH + "/web", json.dumps(DEPLOY),
                          "application/apply-patch+yaml")
    check("apply without fieldManager is rejected", code == 422 and "fieldManager" in
          body["message"], body)
    code, body, _ = k.req("POST", "/api/v1/namespaces/ghost/configmaps",
                          {"metadata": {"name": "x"}})
    check("create in a missing namespace", code == 404 and
          body["message"] == 'namespaces "ghost" not found', body)

    # controller
    dep = wait_for(lambda: (lambda b: b if b.get("status", {}).get("availableReplicas") == 1
                            else None)(k.req("GET", D_PATH + "/web")[1]))
    check("deployment rolls out", dep and dep["status"]["observedGeneration"] == 1, dep)
    conds = {c["type"]: c["status"] for c in (dep or {}).get("status", {}).get("conditions", [])}
    check("deployment conditions", conds == {"Available": "True", "Progressing": "True"}, conds)

    # PUT with a stale resourceVersion
    stale = dict(dep, metadata=dict(dep["metadata"], resourceVersion="1"))
    code, body, _ = k.req("PUT", D_PATH + "/web", stale)
    check("PUT stale resourceVersion: 409 Conflict", code == 409 and body["reason"] ==
          "Conflict" and body["message"].startswith(
              'Operation cannot be fulfilled on deployments.apps "web": the object has been '
              'modified'), body)

    # a metadata-only LIST, as client-go's metadata client asks it
    meta = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"
    code, body, _ = k.req("GET", D_PATH, accept=meta)
    items = body.get("items", [])
    check("PartialObjectMetadataList: metadata only", code == 200 and
          body.get("kind") == "PartialObjectMetadataList" and
          body.get("apiVersion") == "meta.k8s.io/v1" and len(items) == 1 and
          items[0]["kind"] == "PartialObjectMetadata" and
          set(items[0]) == {"kind", "apiVersion", "metadata"} and
          items[0]["metadata"]["resourceVersion"] == dep["metadata"]["resourceVersion"], body)

    # one object, and the answer of a write, as metadata only
    one = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"
    cm_path = "/api/v1/namespaces/default/configmaps/meta"
    code, made, _ = k.apply(cm_path, {"apiVersion": "v1", "kind": "ConfigMap",
                                      "metadata": {"name": "meta"}, "data": {"a": "1"}})
    code, body, _ = k.req("GET", cm_path, accept=one)
    check("PartialObjectMetadata of a GET", code == 200 and
          body.get("kind") == "PartialObjectMetadata" and set(body) == {
              "kind", "apiVersion", "metadata"} and
          body["metadata"]["resourceVersion"] == made["metadata"]["resourceVersion"], body)
    code, body, _ = k.req("PATCH", cm_path + "?fieldManager=uphook",
                          [{"op": "add", "path": "/metadata/labels", "value": {"meta": "only"}}],
                          "application/json-patch+json", accept=one)
    check("PartialObjectMetadata of a PATCH's answer", code == 200 and
          body.get("kind") == "PartialObjectMetadata" and "data" not in body and
          body["metadata"]["labels"] == {"meta": "only"}, body)
    code, body, _ = k.req("GET", cm_path)
    check("... which changed the object", body["metadata"]["labels"] == {"meta": "only"}
          and body["data"] == {"a": "1"}, body)

    # a server-side apply carrying a stale resourceVersion: 409 Conflict
    code, body, _ = k.apply(D_PATH + "/web", stale)
    check("apply stale resourceVersion: 409 Conflict", code == 409 and
          body["reason"] == "Conflict", body)

    # SSA removes fields this manager stopped applying, keeps keyed list items merged
    two = json.loads(json.dumps(DEPLOY))
    two["spec"]["template"]["spec"]["containers"][0]["env"] = [{"name": "A", "value": "9"}]
    code, body, _ = k.apply(D_PATH + "/web", two)
    env = body["spec"]["template"]["spec"]["containers"][0]["env"]
    check("apply drops an env var the manager no longer applies", env == [
        {"name": "A", "value": "9"}], env)
    check("generation advances on spec change", body["metadata"]["generation"] == 2)
    rv = body["metadata"]["resourceVersion"]
    code, body, _ = k.apply(D_PATH + "/web", two)
    check("identical apply is a no-op (same resourceVersion)",
          code == 200 and body["metadata"]["resourceVersion"] == rv)
    other = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
             "spec": {"template": {"spec": {"containers": [
                 {"name": "side", "image": "busybox"}]}}}}
    code, body, _ = k.apply(D_PATH + "/web", other, manager="other")
    names = [c["name"] for c in body["spec"]["template"]["spec"]["containers"]]
    check("another manager's container merges by name", names == ["web", "side"], names)
    clash = json.loads(json.dumps(other))
    clash["spec"]["template"]["spec"]["containers"][0]["image"] = "busybox:2"
    code, body2, _ = k.req("PATCH", D_PATH + "/web?fieldManager=third", json.dumps(clash),
                           "application/apply-patch+yaml")
    check("apply without force over another manager's field: 409 conflict", code == 409 and
          body2["message"] == 'Apply failed with 1 conflict: conflict with "other": '
          '.spec.template.spec.containers[name="side"].image', body2)
    mgrs = sorted(m["manager"] for m in body["metadata"]["managedFields"])
    check("managedFields record both managers", mgrs == ["other", "uphook"], mgrs)

    # immutable selector
    bad = json.loads(json.dumps(DEPLOY))
    bad["spec"]["selector"]["matchLabels"]["app"] = "x"
    bad["spec"]["template"]["metadata"]["labels"]["app"] = "x"
    code, body, _ = k.apply(D_PATH + "/web", bad)
    check("immutable selector: 422 with causes", code == 422 and body["details"]["causes"][0][
        "field"] == "spec.selector" and body["message"].startswith(
            'Deployment.apps "web" is invalid: spec.selector: Invalid value: v1.LabelSelector{'),
        body)

    # dry run
    code, body, _ = k.req("POST", "/api/v1/namespaces/default/configmaps?dryRun=All",
                          {"metadata": {"name": "dry"}, "data": {"a": "1"}})
    check("dry-run create answers 201", code == 201 and body["metadata"]["name"] == "dry")
    code, _, _ = k.req("GET", "/api/v1/namespaces/default/configmaps/dry")
    check("dry-run create stored nothing", code == 404)
    code, body, _ = k.req("DELETE", D_PATH + "/web?dryRun=All")
    code2, _, _ = k.req("GET", D_PATH + "/web")
    check("dry-run delete keeps the object", code == 200 and code2 == 200)

    # patches
    cm = "/api/v1/namespaces/default/configmaps"
    k.req("POST", cm, {"metadata": {"name": "c1", "labels": {"tier": "a"}},
                       "data": {"x": "1", "y": "2"}})
    code, body, _ = k.req("PATCH", cm + "/c1", {"data": {"x": None, "z": "3"}},
                          "application/merge-patch+json")
    check("merge patch (null deletes)", body.get("data") == {"y": "2", "z": "3"}, body)
    code, body, _ = k.req("PATCH", cm + "/c1", [{"op": "replace", "path": "/data/y",
                                                 "value": "7"}], "application/json-patch+json")
    check("json patch", body.get("data", {}).get("y") == "7", body)
    code, body, _ = k.req("PATCH", D_PATH + "/web", {"spec": {"template": {"spec": {
        "containers": [{"name": "web", "image": "nginx:2"}]}}}},
        "application/strategic-merge-patch+json")
    imgs = {c["name"]: c["image"] for c in body["spec"]["template"]["spec"]["containers"]}
    check("strategic merge patch keys containers by name",
          imgs == {"web": "nginx:2", "side": "busybox"}, imgs)

    # list selectors
    k.req("POST", cm, {"metadata": {"name": "c2", "labels": {"tier": "b"}}})
    code, body, _ = k.req("GET", cm + "?labelSelector=tier%20in%20(a,b),tier!=b")
    check("set-based label selector", [i["metadata"]["name"] for i in body["items"]] == ["c1"])
    code, body, _ = k.req("GET", cm + "?fieldSelector=metadata.name%3Dc2")
    check("fieldSelector metadata.name", [i["metadata"]["name"] for i in body["items"]] ==
          ["c2"])

    # chunking: limit and continue, each object once, in order
    k.req("POST", cm, {"metadata": {"name": "c3"}})
    code, whole, _ = k.req("GET", cm)
    names, path, pages = [], cm + "?limit=2", 0
    while path and pages < 10:
        code, body, _ = k.req("GET", path)
        pages += 1
        names += [i["metadata"]["name"] for i in body["items"]]
        token = body["metadata"].get("continue")
        left = body["metadata"].get("remainingItemCount")
        check("a page holds at most limit items", len(body["items"]) <= 2, body)
        check("remainingItemCount with each continue", (token is None) == (left is None), body)
        path = token and cm + "?limit=2&continue=" + urllib.parse.quote(token)
    check("the pages of limit=2 are the whole list",
          names == [i["metadata"]["name"] for i in whole["items"]] and pages == 2,
          (names, pages))
    code, body, _ = k.req("GET", cm + "?limit=2&continue=notatoken")
    check("a bad continue is 400", code == 400, (code, body))
    k.req("DELETE", cm + "/c3")

    # watch
    code, lst, _ = k.req("GET", cm)
    rv = lst["metadata"]["resourceVersion"]
    k.req("PATCH", cm + "/c2", {"data": {"k": "v"}}, "application/merge-patch+json")
    k.req("DELETE", cm + "/c2")
    code, evs = k.watch(cm + "?watch=1&resourceVersion=%s&timeoutSeconds=1" % rv)
    types = [(e["type"], e["object"]["metadata"]["name"]) for e in evs]
    check("watch from a resourceVersion replays MODIFIED, DELETED",
          types == [("MODIFIED", "c2"), ("DELETED", "c2")], types)
    code, evs = k.watch(cm + "?watch=1&fieldSelector=metadata.name%3Dc1&timeoutSeconds=1")
    check("watch without resourceVersion starts with ADDED",
          [e["type"] for e in evs] == ["ADDED"], evs)
    for i in range(60):      # history is 50 events: rv is now too old
        k.req("PATCH", cm + "/c1", {"data": {"n": str(i)}}, "application/merge-patch+json")
    code, evs = k.watch(cm + "?watch=1&resourceVersion=%s&timeoutSeconds=1" % rv)
    check("too old resourceVersion: ERROR event with 410 Expired",
          len(evs) == 1 and evs[0]["type"] == "ERROR" and evs[0]["object"]["code"] == 410
          and evs[0]["object"]["message"].startswith("too old resource version"), evs)
    _, lst, _ = k.req("GET", cm)
    fresh = lst["metadata"]["resourceVersion"]
    k.ctl("POST", "/_fake/gone", {"count": 1, "mode": "http"})
    code, body = k.watch(cm + "?watch=1&resourceVersion=%s&timeoutSeconds=1" % fresh)
    check("forced 410 as HTTP status", code == 410 and body["reason"] == "Expired", body)
    code, evs = k.watch(cm + "?watch=1&resourceVersion=%s&timeoutSeconds=1" % fresh)
    check("next watch is normal again", code == 200 and evs == [], evs)

    # faults
    k.ctl("POST", "/_fake/faults", [{"method": "GET", "path": "/configmaps/c1$", "status": 429,
                                     "count": 2}])
    codes = [k.req("GET", cm + "/c1")[0] for _ in range(3)]
    check("429 for the next 2 matching requests, then normal", codes == [429, 429, 200], codes)
    k.ctl("POST", "/_fake/faults", {"method": "PUT", "path": "/configmaps/", "status": 409})
    _, c1, _ = k.req("GET", cm + "/c1")
    code, body, _ = k.req("PUT", cm + "/c1", c1)
    check("injected 409 is a Conflict Status", code == 409 and body["kind"] == "Status")
    k.ctl("POST", "/_fake/faults", {"path": "/configmaps/c1$", "action": "drop"})
    try:
        k.req("GET", cm + "/c1")
        dropped = False
    except (http.client.HTTPException, ConnectionError, OSError):
        dropped = True
    check("drop closes the connection without an answer", dropped)
    k.ctl("POST", "/_fake/faults", {"query": "watch=1", "path": "/configmaps$",
                                    "action": "slow-watch", "delay": 0.6})
    _, lst, _ = k.req("GET", cm)
    rv = lst["metadata"]["resourceVersion"]
    k.req("PATCH", cm + "/c1", {"data": {"slow": "1"}}, "application/merge-patch+json")
    t0 = time.time()
    code, evs = k.watch(cm + "?watch=1&resourceVersion=%s&timeoutSeconds=2" % rv)
    check("slow-watch delays events", len(evs) == 1 and time.time() - t0 >= 0.6, evs)
    k.ctl("POST", "/_fake/faults", {"query": "watch=1", "action": "cut-watch", "events": 0})
    t0 = time.time()
    code, evs = k.watch(cm + "?watch=1&resourceVersion=%s&timeoutSeconds=5" % rv)
    check("cut-watch ends the stream at once", evs == [] and time.time() - t0 < 2)
    _, log = k.ctl("GET", "/_fake/requests")
    check("request log counts", log["counts"].get("GET /api/v1/namespaces/default/"
                                                  "configmaps/c1", 0) >= 4, log["counts"])

    # stall, DaemonSet and StatefulSet
    ds = {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "agent"},
          "spec": {"selector": {"matchLabels": {"a": "b"}}, "template": {
              "metadata": {"labels": {"a": "b"}},
              "spec": {"containers": [{"name": "c", "image": "i"}]}}}}
    k.ctl("POST", "/_fake/stall?kind=DaemonSet&namespace=default&name=agent")
    k.apply("/apis/apps/v1/namespaces/default/daemonsets/agent", ds)
    time.sleep(0.5)
    st = k.req("GET", "/apis/apps/v1/namespaces/default/daemonsets/agent")[1].get("status", {})
    check("stalled DaemonSet is not available", st.get("numberAvailable") == 0, st)
    k.ctl("POST", "/_fake/unstall", {"kind": "DaemonSet", "namespace": "default",
                                     "name": "agent"})
    st = wait_for(lambda: (lambda s: s if s.get("numberAvailable") == 1 else None)(
        k.req("GET", "/apis/apps/v1/namespaces/default/daemonsets/agent")[1].get("status", {})))
    check("unstalled DaemonSet rolls out", st and st["desiredNumberScheduled"] == 1 and
          st["updatedNumberScheduled"] == 1, st)
    sts = dict(ds, kind="StatefulSet", metadata={"name": "db"})
    k.apply("/apis/apps/v1/namespaces/default/statefulsets/db", sts)
    st = wait_for(lambda: (lambda s: s if s.get("readyReplicas") == 1 else None)(
        k.req("GET", "/apis/apps/v1/namespaces/default/statefulsets/db")[1].get("status", {})))
    check("StatefulSet revisions", st and st["currentRevision"] == st["updateRevision"], st)
    sts2 = json.loads(json.dumps(sts))
    sts2["spec"]["serviceName"] = "changed"
    code, body, _ = k.apply("/apis/apps/v1/namespaces/default/statefulsets/db", sts2)
    check("StatefulSet forbidden spec update", code == 422 and
          "updates to statefulset spec for fields other than" in body["message"], body)

    # Jobs: complete after the delay; stalled, still running; stalled with
    # fail, failed past their backoffLimit
    jobs = "/apis/batch/v1/namespaces/default/jobs/"
    k.ctl("POST", "/_fake/stall", {"kind": "Job", "namespace": "default", "name": "stuck"})
    k.ctl("POST", "/_fake/stall", {"kind": "Job", "namespace": "default", "name": "bad",
                                   "fail": True})
    got = {}
    for name in ("ok", "stuck", "bad"):
        job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
               "spec": {"backoffLimit": 1, "template": {"spec": {
                   "restartPolicy": "Never", "containers": [{"name": "c", "image": "i"}]}}}}
        k.apply(jobs + name, job)
        got[name] = wait_for(lambda: k.req("GET", jobs + name)[1].get("status"))
    conds = {n: [(c["type"], c.get("reason")) for c in (st or {}).get("conditions", [])]
             for n, st in got.items()}
    check("a Job completes", conds["ok"] == [("SuccessCriteriaMet", "CompletionsReached"),
                                             ("Complete", "CompletionsReached")] and
          got["ok"]["succeeded"] == 1, got["ok"])
    check("a stalled Job stays active", got["stuck"] == {"active": 1, "ready": 0,
                                                         "startTime": got["stuck"]["startTime"]},
          got["stuck"])
    check("a Job stalled with fail fails (BackoffLimitExceeded)",
          conds["bad"] == [("FailureTarget", "BackoffLimitExceeded"),
                           ("Failed", "BackoffLimitExceeded")] and got["bad"]["failed"] == 2,
          got["bad"])

    # StorageClass, Lease, Secret, CRD
    sc = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
          "metadata": {"name": "s"}, "provisioner": "a", "parameters": {"x": "1"}}
    k.apply("/apis/storage.k8s.io/v1/storageclasses/s", sc)
    code, body, _ = k.apply("/apis/storage.k8s.io/v1/storageclasses/s",
                            dict(sc, provisioner="b", parameters={"x": "2"}))
    check("StorageClass: two forbidden fields, aggregated message", code == 422 and
          body["message"] == 'StorageClass.storage.k8s.io "s" is invalid: [parameters: '
          'Forbidden: updates to parameters are forbidden., provisioner: Forbidden: updates '
          'to provisioner are forbidden.]', body)
    lease = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
             "metadata": {"name": "uphook-x", "namespace": "kube-system"},
             "spec": {"holderIdentity": "n1", "leaseDurationSeconds": 30,
                      "renewTime": "2024-01-01T00:00:00.000000Z"}}
    code, body, _ = k.req("POST", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases",
                          lease)
    check("Lease create keeps MicroTime strings",
          code == 201 and body["spec"]["renewTime"] == "2024-01-01T00:00:00.000000Z", body)
    code, body, _ = k.req("POST", "/api/v1/namespaces/default/secrets",
                          {"metadata": {"name": "s"}, "stringData": {"k": "v"}})
    check("Secret stringData becomes data", body.get("data") == {"k": "dg=="} and
          body.get("type") == "Opaque", body)
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "gadgets.example.com"},
           "spec": {"group": "example.com", "scope": "Cluster",
                    "names": {"plural": "gadgets", "kind": "Gadget"},
                    "versions": [{"name": "v1beta1", "served": True, "storage": False},
                                 {"name": "v1", "served": True, "storage": True}]}}
    crd_path = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.example.com"
    k.apply(crd_path, crd, extra="&dryRun=All")
    code, _, _ = k.req("GET", "/apis/example.com/v1/gadgets")
    check("dry-run CRD serves nothing", code == 404)
    code, body, _ = k.apply(crd_path, crd)
    conds = {c["type"]: c["status"] for c in body.get("status", {}).get("conditions", [])}
    check("CRD gets Established=True", conds.get("Established") == "True", body)
    code, body, _ = k.req("GET", "/apis/example.com")
    check("CRD group preferred version is v1", body.get("preferredVersion", {}).get(
        "version") == "v1", body)
    k.apply("/apis/example.com/v1beta1/gadgets/g1",
            {"apiVersion": "example.com/v1beta1", "kind": "Gadget", "metadata": {"name": "g1"}})
    code, body, _ = k.req("GET", "/apis/example.com/v1/gadgets/g1")
    check("custom resource served in both versions", code == 200 and
          body["apiVersion"] == "example.com/v1", body)

    # seed and reset
    code, body = k.ctl("POST", "/_fake/seed", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n"
                       "  name: seeded\n  namespace: newns\ndata: {a: 'yes'}\n")
    code2, got, _ = k.req("GET", "/api/v1/namespaces/newns/configmaps/seeded")
    check("seed creates objects (and their namespace)", code == 200 and code2 == 200 and
          got["data"] == {"a": "yes"}, (body, got))
    k.ctl("POST", "/_fake/reset")
    code, _, _ = k.req("GET", "/api/v1/namespaces/newns")
    code2, _, _ = k.req("GET", "/apis/example.com/v1/gadgets")
    check("reset forgets objects and CRD types", code == 404 and code2 == 404)


if __name__ == "__main__":
    main()
    finish()

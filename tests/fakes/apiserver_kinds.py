"""Per-kind defaulting and validation, as the real API server does it (the
parts a hook can tell apart)."""
import base64
import copy
import json
import re

from apiserver_types import ApiError, FieldError, go_map, go_selector, go_value


def pod_spec_defaults(ps):
    ps.setdefault("restartPolicy", "Always")
    ps.setdefault("dnsPolicy", "ClusterFirst")
    ps.setdefault("schedulerName", "default-scheduler")
    ps.setdefault("terminationGracePeriodSeconds", 30)
    ps.setdefault("securityContext", {})
    for key in ("containers", "initContainers"):
        for c in ps.get(key) or []:
            if not isinstance(c, dict):
                continue
            img = c.get("image", "")
            tag = img.rsplit("/", 1)[-1]
            latest = "@" not in tag and (":" not in tag or tag.endswith(":latest"))
            c.setdefault("imagePullPolicy", "Always" if latest else "IfNotPresent")
            c.setdefault("terminationMessagePath", "/dev/termination-log")
            c.setdefault("terminationMessagePolicy", "File")
            c.setdefault("resources", {})
            for p in c.get("ports") or []:
                if isinstance(p, dict):
                    p.setdefault("protocol", "TCP")


def _template_defaults(spec):
    t = spec.get("template")
    if isinstance(t, dict) and isinstance(t.get("spec"), dict):
        t.setdefault("metadata", {})
        pod_spec_defaults(t["spec"])


def default(state, rt, obj, old):
    """Fill in defaults in place (create and update)."""
    k, md = rt.kind, obj.setdefault("metadata", {})
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else None
    if k == "Deployment" and spec is not None:
        spec.setdefault("replicas", 1)
        spec.setdefault("strategy", {"type": "RollingUpdate", "rollingUpdate": {
            "maxUnavailable": "25%", "maxSurge": "25%"}})
        spec.setdefault("revisionHistoryLimit", 10)
        spec.setdefault("progressDeadlineSeconds", 600)
        _template_defaults(spec)
    elif k == "DaemonSet" and spec is not None:
        spec.setdefault("updateStrategy", {"type": "RollingUpdate", "rollingUpdate": {
            "maxUnavailable": 1, "maxSurge": 0}})
        spec.setdefault("revisionHistoryLimit", 10)
        _template_defaults(spec)
    elif k == "StatefulSet" and spec is not None:
        spec.setdefault("replicas", 1)
        spec.setdefault("podManagementPolicy", "OrderedReady")
        spec.setdefault("updateStrategy", {"type": "RollingUpdate",
                                           "rollingUpdate": {"partition": 0}})
        spec.setdefault("revisionHistoryLimit", 10)
        spec.setdefault("persistentVolumeClaimRetentionPolicy", {
            "whenDeleted": "Retain", "whenScaled": "Retain"})
        _template_defaults(spec)
    elif k in ("ReplicaSet", "Job") and spec is not None:
        _template_defaults(spec)
    elif k == "Pod" and spec is not None:
        pod_spec_defaults(spec)
        obj.setdefault("status", {"phase": "Pending"})
    elif k == "Service":
        if old is not None:
            drop_type_dependent(old, obj)
        _service_defaults(state, obj.setdefault("spec", {}), old)
        obj.setdefault("status", {"loadBalancer": {}})
    elif k == "StorageClass":
        obj.setdefault("reclaimPolicy", "Delete")
        obj.setdefault("volumeBindingMode", "Immediate")
    elif k == "Namespace":
        md.setdefault("labels", {})["kubernetes.io/metadata.name"] = md.get("name")
        obj.setdefault("spec", {"finalizers": ["kubernetes"]})
        obj["status"] = {"phase": "Active"}
    elif k == "Secret":
        obj.setdefault("type", "Opaque")
        sd = obj.pop("stringData", None)
        if isinstance(sd, dict):
            data = obj.setdefault("data", {})
            for key, v in sd.items():
                data[key] = base64.b64encode(str(v).encode()).decode()
    elif k == "PersistentVolumeClaim" and spec is not None:
        spec.setdefault("volumeMode", "Filesystem")
        obj.setdefault("status", {"phase": "Pending"})
    elif k == "PersistentVolume" and spec is not None:
        spec.setdefault("persistentVolumeReclaimPolicy", "Retain")
        spec.setdefault("volumeMode", "Filesystem")
        obj.setdefault("status", {"phase": "Available"})


def _same_node_ports(a, b):
    had = {p.get("nodePort") for p in a.get("ports") or [] if isinstance(p, dict)}
    return all(p.get("nodePort") in had for p in b.get("ports") or []
               if isinstance(p, dict) and p.get("nodePort"))


def drop_type_dependent(old, obj):
    """The Service strategy before validation (kubernetes/kubernetes@v1.32.3
    pkg/registry/core/service/strategy.go dropTypeDependentFields): a type
    change drops the fields the new type has no use for, when the request
    left them as they were. As lua/backend/mock/validate.lua drop_type_dependent."""
    a, b = old.get("spec") or {}, obj.get("spec")
    if not isinstance(b, dict):
        return
    ta, tb = a.get("type") or "ClusterIP", b.get("type") or "ClusterIP"
    if ta == tb:
        return
    if ta != "ExternalName" and tb == "ExternalName":
        if a.get("clusterIP") == b.get("clusterIP") and a.get("clusterIPs") == b.get("clusterIPs"):
            b.pop("clusterIP", None)
            b.pop("clusterIPs", None)
        for f in ("ipFamilies", "ipFamilyPolicy"):
            if a.get(f) == b.get(f):
                b.pop(f, None)
    if ta in ("NodePort", "LoadBalancer") and tb not in ("NodePort", "LoadBalancer"):
        if _same_node_ports(a, b):
            for p in b.get("ports") or []:
                if isinstance(p, dict):
                    p.pop("nodePort", None)
        if a.get("externalTrafficPolicy") == b.get("externalTrafficPolicy") and not b.get(
                "externalIPs"):
            b.pop("externalTrafficPolicy", None)
    if ta == "LoadBalancer" and tb != "LoadBalancer":
        for f in ("healthCheckNodePort", "allocateLoadBalancerNodePorts", "loadBalancerClass"):
            if a.get(f) == b.get(f):
                b.pop(f, None)
        obj["status"] = {"loadBalancer": {}}


def _service_defaults(state, spec, old):
    ospec = (old or {}).get("spec") or {}
    typ = spec.setdefault("type", "ClusterIP")
    spec.setdefault("sessionAffinity", "None")
    for p in spec.get("ports") or []:
        if isinstance(p, dict):
            p.setdefault("protocol", "TCP")
            if "port" in p:
                p.setdefault("targetPort", p["port"])
    if typ == "ExternalName":
        return
    ip = spec.get("clusterIP")
    if not ip and ospec.get("clusterIP"):
        ip = spec["clusterIP"] = ospec["clusterIP"]
        if "clusterIPs" not in spec and ospec.get("clusterIPs"):
            spec["clusterIPs"] = list(ospec["clusterIPs"])
    if not ip:
        ip = spec["clusterIP"] = state.allocate_ip()
    ips = spec.get("clusterIPs")
    if not ips or (ospec.get("clusterIP") != ip and ips == ospec.get("clusterIPs")):
        spec["clusterIPs"] = [ip]
    spec.setdefault("ipFamilies", ["IPv4"])
    spec.setdefault("ipFamilyPolicy", "SingleStack")
    spec.setdefault("internalTrafficPolicy", "Cluster")
    if typ in ("NodePort", "LoadBalancer"):
        spec.setdefault("externalTrafficPolicy", "Cluster")
        oldports = {(p.get("port"), p.get("protocol", "TCP")): p.get("nodePort")
                    for p in ospec.get("ports") or [] if isinstance(p, dict)}
        for p in spec.get("ports") or []:
            if isinstance(p, dict) and "nodePort" not in p:
                p["nodePort"] = oldports.get((p.get("port"), p.get("protocol"))) \
                    or state.allocate_node_port()


def _labels_match(sel, labels):
    labels = labels or {}
    for k, v in ((sel or {}).get("matchLabels") or {}).items():
        if labels.get(k) != v:
            return False
    for e in (sel or {}).get("matchExpressions") or []:
        op, key, vals = e.get("operator"), e.get("key"), e.get("values") or []
        if op == "In" and labels.get(key) not in vals:
            return False
        if op == "NotIn" and key in labels and labels[key] in vals:
            return False
        if op == "Exists" and key not in labels:
            return False
        if op == "DoesNotExist" and key in labels:
            return False
    return True


def _workload_errors(obj):
    spec = obj.get("spec") or {}
    errs = []
    sel = spec.get("selector")
    if not sel:
        errs.append(FieldError("spec.selector", "Required", ""))
    else:
        labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels")
        if not _labels_match(sel, labels):
            errs.append(FieldError("spec.template.metadata.labels", "Invalid",
                                   "`selector` does not match template `labels`",
                                   govalue=go_map(labels)))
    return errs


STS_MUTABLE = ("replicas", "ordinals", "template", "updateStrategy",
               "persistentVolumeClaimRetentionPolicy", "minReadySeconds")


# Fields that may not change once set (Kubernetes 1.32's update validation,
# kubernetes/kubernetes@v1.32.3 pkg/apis/<group>/validation/validation.go;
# the mock's copy of these facts is lua/backend/mock/validate.lua IMMUTABLE, and
# tests/fidelity/fidelity_test.sh checks both give the same answers):
# kind -> [(path, detail)]; detail None = "Invalid value: <new>: field is
# immutable" (ValidateImmutableField), else a Forbidden with that detail.
# ELASTIC: batch validateCompletions, an Indexed Job's completions may change in
# tandem with parallelism (ElasticIndexedJob, GA in 1.31).
ELASTIC = "elastic"
IMMUTABLE = {
    "IngressClass": [(("spec", "controller"), None)],
    "CSIDriver": [(("spec", "attachRequired"), None)],
    "VolumeAttachment": [(("spec",), None)],
    "Secret": [(("type",), None)],
    "PriorityClass": [(("value",), "may not be changed in an update.")],
    "PersistentVolume": [(("spec", "volumeMode"), None)],
    "Job": [(("spec", "completions"), ELASTIC),
            (("spec", "completionMode"), None), (("spec", "podFailurePolicy"), None),
            (("spec", "backoffLimitPerIndex"), None)],
}
PV_SOURCE_SKIP = {"capacity", "accessModes", "claimRef", "persistentVolumeReclaimPolicy",
                  "storageClassName", "mountOptions", "volumeMode", "nodeAffinity",
                  "volumeAttributesClassName"}


def _at(obj, path):
    for p in path:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(p)
    return obj


def _immutable_errors(k, old, obj):
    errs = []
    for path, detail in IMMUTABLE.get(k, []):
        a, b = _at(old, path), _at(obj, path)
        if a != b:
            f = ".".join(path)
            if detail == ELASTIC and _at(obj, ("spec", "completionMode")) == "Indexed":
                par = _at(obj, ("spec", "parallelism"))
                if b is not None and b != (1 if par is None else par):
                    errs.append(FieldError(f, "Invalid", "can only be modified in tandem with "
                                           "spec.parallelism", value=b))
            elif detail == ELASTIC:
                errs.append(FieldError(f, "Invalid", "field is immutable", value=b))
            elif detail:
                errs.append(FieldError(f, "Forbidden", detail))
            else:
                errs.append(FieldError(f, "Invalid", "field is immutable", value=b))
    if k == "PersistentVolume":
        def src(spec):
            return {x: y for x, y in (spec or {}).items() if x not in PV_SOURCE_SKIP}
        if src(old.get("spec")) != src(obj.get("spec")):
            errs.append(FieldError("spec.persistentvolumesource", "Forbidden",
                                   "spec.persistentvolumesource is immutable after creation"))
    if k in ("RoleBinding", "ClusterRoleBinding") and old.get("roleRef") != obj.get("roleRef"):
        r = obj.get("roleRef") or {}
        errs.append(FieldError("roleRef", "Invalid", "cannot change roleRef",
                               govalue='rbac.RoleRef{APIGroup:"%s", Kind:"%s", Name:"%s"}'
                               % (r.get("apiGroup", ""), r.get("kind", ""), r.get("name", ""))))
    return errs


# Taints a DaemonSet's pods tolerate without saying so (the DaemonSet
# controller adds them: kubernetes/kubernetes@v1.32.3
# pkg/controller/daemon/util/daemonset_util.go), as lua/backend/mock/controllers.lua.
DS_TOLERATED = {"node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable",
                "node.kubernetes.io/disk-pressure", "node.kubernetes.io/memory-pressure",
                "node.kubernetes.io/pid-pressure", "node.kubernetes.io/unschedulable"}


def _tolerates(tolerations, taint, daemon=True):
    if daemon and taint.get("key") in DS_TOLERATED:
        return True
    for t in tolerations or []:
        if not isinstance(t, dict) or t.get("effect") not in (None, "", taint.get("effect")):
            continue
        if not t.get("key") and t.get("operator") == "Exists":
            return True
        if t.get("key") == taint.get("key") and (
                t.get("operator") == "Exists" or t.get("value") == taint.get("value")):
            return True
    return False


def ds_schedules(ds, node, daemon=True):
    """Does the DaemonSet run a pod on the node (nodeSelector, taints)? With
    daemon False, the scheduler's view for other workloads: only the template's
    own tolerations count, and a cordoned node takes no pods."""
    ps = ((ds.get("spec") or {}).get("template") or {}).get("spec") or {}
    if not daemon and (node.get("spec") or {}).get("unschedulable") is True:
        return False
    labels = (node.get("metadata") or {}).get("labels") or {}
    if any(labels.get(k) != v for k, v in (ps.get("nodeSelector") or {}).items()):
        return False
    for taint in (node.get("spec") or {}).get("taints") or []:
        if taint.get("effect") in ("NoSchedule", "NoExecute") and not _tolerates(
                ps.get("tolerations"), taint, daemon):
            return False
    return True


def placeable(obj, nodes):
    """Can a Deployment's or StatefulSet's pods run anywhere: no Nodes at all,
    or a Ready one the scheduler places them on (a NotReady node is tainted
    node.kubernetes.io/not-ready:NoSchedule, and its kubelet runs nothing).
    As lua/backend/mock/controllers.lua placement."""
    return not nodes or any(node_ready(n) and ds_schedules(obj, n, False) for n in nodes)


def node_ready(node):
    for c in (node.get("status") or {}).get("conditions") or []:
        if c.get("type") == "Ready":
            return c.get("status") == "True"
    return True


def validate(rt, obj, old):
    """Field errors for a create (old is None) or an update."""
    k = rt.kind
    errs = []
    md = obj.get("metadata") or {}
    if not md.get("name"):
        errs.append(FieldError("metadata.name", "Required", "name or generateName is required"))
        return errs
    if k in ("Deployment", "DaemonSet", "StatefulSet", "ReplicaSet"):
        errs += _workload_errors(obj)
    if k in ("Secret", "ConfigMap"):
        errs += _size_errors(k, obj)
    if k == "Service" and old is None:
        errs += _service_type_errors(obj.get("spec") or {})
    if old is None:
        return errs
    ospec, nspec = old.get("spec") or {}, obj.get("spec") or {}
    if k in ("Deployment", "DaemonSet", "ReplicaSet") and ospec.get("selector") != nspec.get(
            "selector"):
        errs.append(FieldError("spec.selector", "Invalid", "field is immutable",
                               govalue=go_selector(nspec.get("selector"))))
    if k == "StatefulSet":
        a = {x: y for x, y in ospec.items() if x not in STS_MUTABLE}
        b = {x: y for x, y in nspec.items() if x not in STS_MUTABLE}
        if a != b:
            errs.append(FieldError("spec", "Forbidden", "updates to statefulset spec for fields "
                                   "other than 'replicas', 'ordinals', 'template', "
                                   "'updateStrategy', 'persistentVolumeClaimRetentionPolicy' "
                                   "and 'minReadySeconds' are forbidden"))
    if k == "StorageClass":
        if (old.get("parameters") or {}) != (obj.get("parameters") or {}):
            errs.append(FieldError("parameters", "Forbidden",
                                   "updates to parameters are forbidden."))
        if old.get("provisioner") != obj.get("provisioner"):
            errs.append(FieldError("provisioner", "Forbidden",
                                   "updates to provisioner are forbidden."))
        if old.get("reclaimPolicy") != obj.get("reclaimPolicy"):
            errs.append(FieldError("reclaimPolicy", "Forbidden",
                                   "updates to reclaimPolicy are forbidden."))
        if old.get("volumeBindingMode") != obj.get("volumeBindingMode"):
            errs.append(FieldError("volumeBindingMode", "Invalid", "field is immutable",
                                   value=obj.get("volumeBindingMode")))
    if k == "Service":
        errs += _service_update_errors(ospec, nspec)
    if k == "Job":
        if ospec.get("selector") != nspec.get("selector"):
            errs.append(FieldError("spec.selector", "Invalid", "field is immutable",
                                   govalue=go_selector(nspec.get("selector"))))
        if ospec.get("template") != nspec.get("template"):
            errs.append(FieldError("spec.template", "Invalid", "field is immutable",
                                   govalue="core.PodTemplateSpec" + json.dumps(
                                       nspec.get("template"), sort_keys=True,
                                       separators=(",", ":"))))
    if k == "CustomResourceDefinition":
        for f in ("scope", "group"):
            if ospec.get(f) != nspec.get(f):
                errs.append(FieldError("spec." + f, "Invalid", "field is immutable",
                                       value=nspec.get(f)))
    if k == "PersistentVolumeClaim":
        errs += _pvc_update_errors(old, obj)
    if k == "Pod":
        errs += _pod_update_errors(ospec, nspec)
    errs += _immutable_errors(k, old, obj)
    if k in ("ConfigMap", "Secret") and old.get("immutable"):
        for f in ("data", "binaryData"):
            if old.get(f) != obj.get(f):
                errs.append(FieldError(f, "Forbidden", "field is immutable when `immutable` "
                                       "is set"))
    return errs


# core.MaxSecretSize: what a Secret's data, or a ConfigMap's data and
# binaryData together, may hold (ValidateSecret, ValidateConfigMap)
MAX_SECRET_SIZE = 1024 * 1024


def _size_errors(kind, obj):
    """Too long, as Kubernetes 1.32 says it: the ConfigMap's error is on the
    empty path, which Go prints as "[]"."""
    if kind == "Secret":
        size = sum(len(base64.b64decode(v or "")) for v in (obj.get("data") or {}).values())
        field = "data"
    else:
        size = sum(len((v or "").encode()) for v in (obj.get("data") or {}).values()) + sum(
            len(base64.b64decode(v or "")) for v in (obj.get("binaryData") or {}).values())
        field = "[]"
    if size <= MAX_SECRET_SIZE:
        return []
    return [FieldError(field, "Too long", "may not be more than %d bytes" % MAX_SECRET_SIZE)]


def _family(ip):
    return "IPv6" if ":" in ip else "IPv4"


def _go_families(fams):
    return "[]core.IPFamily{" + ", ".join('"%s"' % f for f in fams) + "}"


SUBDOMAIN = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
             "characters, '-' or '.', and must start and end with an alphanumeric character "
             "(e.g. 'example.com', regex used for validation is "
             "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
EXT = "may not be set for ExternalName services"


def _external_name_errors(nspec):
    """core ValidateService's ExternalName case (kubernetes/kubernetes@v1.32.3
    pkg/apis/core/validation/validation.go): no cluster IPs or IP families,
    an externalName that is a DNS-1123 subdomain (a trailing dot allowed).
    As lua/backend/mock/validate.lua external_name_errors."""
    errs = []
    if nspec.get("clusterIPs") or nspec.get("clusterIP"):
        errs.append(FieldError("spec.clusterIPs", "Forbidden", EXT))
    if nspec.get("ipFamilies"):
        errs.append(FieldError("spec.ipFamilies", "Forbidden", EXT))
    if nspec.get("ipFamilyPolicy") is not None:
        errs.append(FieldError("spec.ipFamilyPolicy", "Forbidden", EXT))
    name = nspec.get("externalName") if isinstance(nspec.get("externalName"), str) else ""
    clean = name[:-1] if name.endswith(".") else name
    if not clean:
        errs.append(FieldError("spec.externalName", "Required", ""))
    elif len(clean) > 253 or not _SUBDOMAIN.match(clean):
        errs.append(FieldError("spec.externalName", "Invalid", SUBDOMAIN, value=name))
    return errs


def _service_type_errors(nspec):
    """ValidateService's checks that depend on the type (create and update)."""
    errs = []
    if nspec.get("type") == "ExternalName":
        errs += _external_name_errors(nspec)
    if (nspec.get("type") or "ClusterIP") == "ClusterIP":
        for i, p in enumerate(nspec.get("ports") or []):
            if isinstance(p, dict) and p.get("nodePort"):
                errs.append(FieldError("spec.ports[%d].nodePort" % i, "Forbidden",
                                       "may not be used when `type` is 'ClusterIP'"))
    return errs


def _service_update_errors(ospec, nspec):
    """core ValidateServiceUpdate (kubernetes/kubernetes@v1.32.3
    pkg/apis/core/validation/validation.go), in its order: cluster IPs, IP
    families, loadBalancerClass, then ValidateService's type and family checks.
    As lua/backend/mock/validate.lua update.Service."""
    errs = _service_ip_errors(ospec, nspec)
    ext = "ExternalName" in (ospec.get("type"), nspec.get("type"))
    headless = "None" in (ospec.get("clusterIP"), nspec.get("clusterIP"))
    a, b = ospec.get("ipFamilies") or [], nspec.get("ipFamilies")
    if not ext and not headless and isinstance(b, list):
        changed = (len(a) == len(b) and a != b) or (len(a) > len(b) > 0 and a[0] != b[0])
        if changed:
            errs.append(FieldError("spec.ipFamilies[0]", "Invalid", "may not change once set",
                                   govalue=_go_families(b)))
    if ospec.get("type") == "LoadBalancer" and nspec.get("type") == "LoadBalancer" and \
            ospec.get("loadBalancerClass") != nspec.get("loadBalancerClass"):
        errs.append(FieldError("spec.loadBalancerClass", "Invalid", "may not change once set",
                               value=nspec.get("loadBalancerClass")))
    errs += _service_type_errors(nspec)
    if not ext and nspec.get("clusterIP") != "None" and isinstance(b, list):
        for i, ip in enumerate(nspec.get("clusterIPs") or []):
            if i < len(b) and b[i] != _family(ip):
                errs.append(FieldError("spec.clusterIPs[%d]" % i, "Invalid",
                                       "expected an %s value as indicated by `ipFamilies[%d]`"
                                       % (b[i], i), value=ip))
    return errs


def _service_ip_errors(ospec, nspec):
    if "ExternalName" in (ospec.get("type"), nspec.get("type")):
        return []
    o, n = ospec.get("clusterIPs") or [], nspec.get("clusterIPs") or []
    if o == ["None"] and n == ["None"]:
        return []
    errs = []
    if len(o) == len(n):
        for i, ip in enumerate(o):
            if ip != n[i]:
                errs.append(FieldError("spec.clusterIPs[%d]" % i, "Invalid",
                                       "may not change once set", value=n))
    elif len(o) > len(n):
        if not n:
            errs.append(FieldError("spec.clusterIPs[0]", "Invalid",
                                   "primary clusterIP can not be unset", value=n))
        elif n[0] != o[0]:
            errs.append(FieldError("spec.clusterIPs[0]", "Invalid",
                                   "may not change once set", value=n))
    return errs


# ------------------------------------------------- PersistentVolumeClaims

QUANTITY = {"": 1, "m": 1e-3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15,
            "E": 1e18, "Ki": 2 ** 10, "Mi": 2 ** 20, "Gi": 2 ** 30, "Ti": 2 ** 40,
            "Pi": 2 ** 50, "Ei": 2 ** 60}


def quantity(q):
    """A Kubernetes quantity ("10Gi", "500M", "1.5") as a number, or None
    (as lua/backend/mock/validate.lua quantity)."""
    if isinstance(q, (int, float)) and not isinstance(q, bool):
        return q
    if not isinstance(q, str):
        return None
    m = re.match(r"^([+-]?[\d.]+)([A-Za-z]*)$", q)
    if m and m.group(2) in QUANTITY:
        try:
            return float(m.group(1)) * QUANTITY[m.group(2)]
        except ValueError:
            return None
    try:
        return float(q)
    except ValueError:
        return None


PVC_SPEC = ("spec is immutable after creation except resources.requests and "
            "volumeAttributesClassName for bound claims")


def _spec_diff(go_type, a, b):
    """The tail of an immutable-spec message, as lua/backend/mock/validate.lua
    spec_diff: the fields that differ, a "-" line of the old value and a
    "+" line of the new, in key order (the API server's cmp.Diff)."""
    diff = ["\n  %s{" % go_type]
    for k in sorted(set(a) | set(b)):
        if a.get(k) != b.get(k):
            f = k[:1].upper() + k[1:]
            diff += ["- \t%s: %s," % (f, go_value(a.get(k))),
                     "+ \t%s: %s," % (f, go_value(b.get(k)))]
    diff.append("  }\n")
    return "\n".join(diff)


def _pvc_update_errors(old, obj):
    """core ValidatePersistentVolumeClaimUpdate (kubernetes/kubernetes@v1.32.3
    pkg/apis/core/validation/validation.go), as lua/backend/mock/validate.lua
    update.PersistentVolumeClaim: the spec may not change but a bound
    claim's resources.requests and volumeAttributesClassName (volumeName
    once, when it binds; storageClassName once, from unset); requests may
    not go below status.capacity (or below the old request, without one)."""
    a, b = copy.deepcopy(old.get("spec") or {}), copy.deepcopy(obj.get("spec") or {})
    bound = (old.get("status") or {}).get("phase") == "Bound"
    old_req = _at(a, ("resources", "requests", "storage"))
    new_req = _at(b, ("resources", "requests", "storage"))
    if bound:
        for x in (a, b):
            if isinstance(x.get("resources"), dict):
                x["resources"].pop("requests", None)
                if not x["resources"]:
                    x.pop("resources")
    for x in (a, b):
        x.pop("volumeAttributesClassName", None)
    if not a.get("volumeName"):
        a["volumeName"] = b.get("volumeName")
    if a.get("storageClassName") is None:
        a["storageClassName"] = b.get("storageClassName")
    a = {k: v for k, v in a.items() if v is not None}
    b = {k: v for k, v in b.items() if v is not None}
    errs = []
    if a != b:
        errs.append(FieldError("spec", "Forbidden",
                               PVC_SPEC + _spec_diff("core.PersistentVolumeClaimSpec", a, b)))
    o, n = quantity(old_req), quantity(new_req)
    if o is not None and n is not None and n < o:
        cap = quantity(_at(old, ("status", "capacity", "storage")))
        if cap is not None and n <= cap:
            errs.append(FieldError("spec.resources.requests.storage", "Forbidden",
                                   "field can not be less than status.capacity"))
        elif cap is None:
            errs.append(FieldError("spec.resources.requests.storage", "Forbidden",
                                   "field can not be less than previous value"))
    return errs


def admit_update(state, rt, old, obj):
    """Admission after validation: PersistentVolumeClaimResize
    (kubernetes/kubernetes@v1.32.3 plugin/pkg/admission/storage/
    persistentvolume/resize/admission.go): a claim grows only when its
    StorageClass has allowVolumeExpansion (as lua/backend/mock/cluster.lua
    _admit_update)."""
    if rt.kind != "PersistentVolumeClaim":
        return
    a = quantity(_at(old, ("spec", "resources", "requests", "storage")))
    b = quantity(_at(obj, ("spec", "resources", "requests", "storage")))
    if a is None or b is None or b <= a:
        return
    sc = state.objects[("storage.k8s.io", "storageclasses")].get(
        ("", _at(obj, ("spec", "storageClassName")) or ""))
    if not (sc and sc.get("allowVolumeExpansion") is True):
        raise ApiError(403, "Forbidden", '%s "%s" is forbidden: only dynamically provisioned '
                       "pvc can be resized and the storageclass that provisions the pvc "
                       "must support resize" % (rt.plural, obj["metadata"].get("name")),
                       {"name": obj["metadata"].get("name"), "kind": rt.plural})


# ------------------------------------------------- Pods

POD_UPDATABLE = ("pod updates may not change fields other than `spec.containers[*].image`,"
                 "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` "
                 "(only additions to existing tolerations),`spec.terminationGracePeriodSeconds` "
                 "(allow it to be set to 1 if it was previously negative)")


def _pod_update_errors(a, b):
    """core ValidatePodUpdate (kubernetes/kubernetes@v1.32.3
    pkg/apis/core/validation/validation.go), as lua/backend/mock/validate.lua
    update.Pod: no container added or removed; the spec may not change but
    the (init) containers' images, activeDeadlineSeconds, tolerations,
    schedulingGates, a negative terminationGracePeriodSeconds set to 1."""
    b = copy.deepcopy(b)
    for f in ("containers", "initContainers"):
        oc, nc = a.get(f) or [], b.get(f) or []
        if len(oc) != len(nc):
            return [FieldError("spec." + f, "Forbidden",
                               "pod updates may not add or remove containers")]
        for c, o in zip(nc, oc):
            if isinstance(c, dict) and isinstance(o, dict):
                if "image" in o:
                    c["image"] = o["image"]
                else:
                    c.pop("image", None)
    for f in ("activeDeadlineSeconds", "tolerations", "schedulingGates"):
        if f in a:
            b[f] = a[f]
        else:
            b.pop(f, None)
    tg = a.get("terminationGracePeriodSeconds")
    if isinstance(tg, int) and tg < 0 and b.get("terminationGracePeriodSeconds") == 1:
        b["terminationGracePeriodSeconds"] = tg
    if a == b:
        return []
    return [FieldError("spec", "Forbidden", POD_UPDATABLE + _spec_diff("core.PodSpec", a, b))]

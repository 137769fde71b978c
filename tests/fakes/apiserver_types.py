"""Resource types, Status errors and Go-style error text for the fake API server."""
import json

VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]
SUB_VERBS = ["get", "patch", "update"]


class RType:
    def __init__(self, group, version, plural, kind, namespaced, short=(), status=False,
                 categories=(), singular=None, crd=None):
        self.group, self.version, self.plural, self.kind = group, version, plural, kind
        self.namespaced = namespaced
        self.short = list(short)
        self.status = status
        self.categories = list(categories)
        self.singular = singular or kind.lower()
        self.crd = crd          # name of the defining CRD, for custom resources

    @property
    def gv(self):
        return self.group + "/" + self.version if self.group else self.version

    @property
    def gr(self):
        """group/resource: the storage key shared by all versions."""
        return (self.group, self.plural)

    def qualified_resource(self):
        return self.plural + "." + self.group if self.group else self.plural

    def qualified_kind(self):
        return self.kind + "." + self.group if self.group else self.kind


_ALL = ("all",)
# group, version, plural, Kind, namespaced, shortNames, status subresource, categories
BUILTIN = [
    ("", "v1", "namespaces", "Namespace", False, ["ns"], True, ()),
    ("", "v1", "configmaps", "ConfigMap", True, ["cm"], False, ()),
    ("", "v1", "secrets", "Secret", True, [], False, ()),
    ("", "v1", "services", "Service", True, ["svc"], True, _ALL),
    ("", "v1", "serviceaccounts", "ServiceAccount", True, ["sa"], False, ()),
    ("", "v1", "pods", "Pod", True, ["po"], True, _ALL),
    ("", "v1", "nodes", "Node", False, ["no"], True, ()),
    ("", "v1", "persistentvolumes", "PersistentVolume", False, ["pv"], True, ()),
    ("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", True, ["pvc"], True, ()),
    ("", "v1", "endpoints", "Endpoints", True, ["ep"], False, ()),
    ("", "v1", "events", "Event", True, ["ev"], False, ()),
    ("", "v1", "limitranges", "LimitRange", True, ["limits"], False, ()),
    ("", "v1", "resourcequotas", "ResourceQuota", True, ["quota"], True, ()),
    ("apps", "v1", "deployments", "Deployment", True, ["deploy"], True, _ALL),
    ("apps", "v1", "daemonsets", "DaemonSet", True, ["ds"], True, _ALL),
    ("apps", "v1", "statefulsets", "StatefulSet", True, ["sts"], True, _ALL),
    ("apps", "v1", "replicasets", "ReplicaSet", True, ["rs"], True, _ALL),
    ("apps", "v1", "controllerrevisions", "ControllerRevision", True, [], False, ()),
    ("batch", "v1", "jobs", "Job", True, [], True, _ALL),
    ("batch", "v1", "cronjobs", "CronJob", True, ["cj"], True, _ALL),
    ("rbac.authorization.k8s.io", "v1", "roles", "Role", True, [], False, ()),
    ("rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding", True, [], False, ()),
    ("rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole", False, [], False, ()),
    ("rbac.authorization.k8s.io", "v1", "clusterrolebindings", "ClusterRoleBinding", False, [],
     False, ()),
    ("storage.k8s.io", "v1", "storageclasses", "StorageClass", False, ["sc"], False, ()),
    ("storage.k8s.io", "v1", "csidrivers", "CSIDriver", False, [], False, ()),
    ("storage.k8s.io", "v1", "csinodes", "CSINode", False, [], False, ()),
    ("storage.k8s.io", "v1", "volumeattachments", "VolumeAttachment", False, [], True, ()),
    ("coordination.k8s.io", "v1", "leases", "Lease", True, [], False, ()),
    ("apiextensions.k8s.io", "v1", "customresourcedefinitions", "CustomResourceDefinition",
     False, ["crd", "crds"], True, ()),
    ("apiregistration.k8s.io", "v1", "apiservices", "APIService", False, [], True, ()),
    ("admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations",
     "ValidatingWebhookConfiguration", False, [], False, ()),
    ("admissionregistration.k8s.io", "v1", "mutatingwebhookconfigurations",
     "MutatingWebhookConfiguration", False, [], False, ()),
    ("policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", True, ["pdb"], True, ()),
    ("networking.k8s.io", "v1", "ingresses", "Ingress", True, ["ing"], True, ()),
    ("networking.k8s.io", "v1", "ingressclasses", "IngressClass", False, [], False, ()),
    ("networking.k8s.io", "v1", "networkpolicies", "NetworkPolicy", True, ["netpol"], False, ()),
    ("scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", False, ["pc"], False, ()),
    ("node.k8s.io", "v1", "runtimeclasses", "RuntimeClass", False, [], False, ()),
    ("discovery.k8s.io", "v1", "endpointslices", "EndpointSlice", True, [], False, ()),
    ("autoscaling", "v2", "horizontalpodautoscalers", "HorizontalPodAutoscaler", True, ["hpa"],
     True, _ALL),
]


def builtin_types():
    return [RType(g, v, p, k, ns, short=s, status=st, categories=c)
            for g, v, p, k, ns, s, st, c in BUILTIN]


# ---------------------------------------------------------------- errors

class ApiError(Exception):
    def __init__(self, code, reason, message, details=None):
        Exception.__init__(self, message)
        self.code, self.reason, self.message, self.details = code, reason, message, details

    def status(self):
        return status_obj(self.code, self.reason, self.message, self.details)


def status_obj(code, reason, message, details=None):
    s = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
         "message": message, "reason": reason, "code": code}
    if details is not None:
        s["details"] = details
    return s


def _details(rt, name, kind=None):
    d = {"name": name}
    if rt.group:
        d["group"] = rt.group
    d["kind"] = kind or rt.plural
    return d


def not_found(rt, name):
    return ApiError(404, "NotFound", '%s "%s" not found' % (rt.qualified_resource(), name),
                    _details(rt, name))


def already_exists(rt, name):
    return ApiError(409, "AlreadyExists",
                    '%s "%s" already exists' % (rt.qualified_resource(), name), _details(rt, name))


def conflict(rt, name, why="the object has been modified; please apply your changes to the "
             "latest version and try again"):
    return ApiError(409, "Conflict", 'Operation cannot be fulfilled on %s "%s": %s'
                    % (rt.qualified_resource(), name, why), _details(rt, name))


def bad_request(msg):
    return ApiError(400, "BadRequest", msg)


def namespace_not_found(ns):
    return ApiError(404, "NotFound", 'namespaces "%s" not found' % ns,
                    {"name": ns, "kind": "namespaces"})


def resource_not_found():
    return ApiError(404, "NotFound", "the server could not find the requested resource",
                    {})


def gone(asked, floor):
    return ApiError(410, "Expired", "too old resource version: %s (%s)" % (asked, floor))


class FieldError:
    """One field.Error: Type is Invalid, Forbidden, Required..."""
    REASONS = {"Invalid": "FieldValueInvalid", "Forbidden": "FieldValueForbidden",
               "Required": "FieldValueRequired", "Duplicate": "FieldValueDuplicate",
               "Too long": "FieldValueTooLong"}

    def __init__(self, field, typ, detail, value=None, govalue=None):
        self.field, self.typ, self.detail = field, typ, detail
        self.govalue = govalue if govalue is not None else go_value(value)

    def body(self):
        if self.typ == "Invalid":
            return "Invalid value: %s: %s" % (self.govalue, self.detail)
        if self.typ == "Required":
            return "Required value" + (": " + self.detail if self.detail else "")
        if self.typ == "Duplicate":
            return "Duplicate value: %s" % self.govalue
        return "%s: %s" % (self.typ, self.detail)

    def __str__(self):
        return "%s: %s" % (self.field, self.body())


def invalid(rt, name, errs):
    agg = str(errs[0]) if len(errs) == 1 else "[" + ", ".join(str(e) for e in errs) + "]"
    details = _details(rt, name, kind=rt.kind)
    details["causes"] = [{"reason": FieldError.REASONS.get(e.typ, "FieldValueInvalid"),
                          "message": e.body(), "field": e.field} for e in errs]
    return ApiError(422, "Invalid", '%s "%s" is invalid: %s'
                    % (rt.qualified_kind(), name, agg), details)


# ------------------------------------------------- Go %#v / %q formatting

def go_quote(s):
    return json.dumps(s, ensure_ascii=False)


def go_value(v):
    """How field.Invalid prints a value (Kubernetes 1.32)."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return str(v)
    if isinstance(v, str):
        return go_quote(v)
    if isinstance(v, list) and all(isinstance(x, str) for x in v):
        return "[]string{" + ", ".join(go_quote(x) for x in v) + "}"
    if isinstance(v, dict) and all(isinstance(x, str) for x in v.values()):
        return go_map(v)
    return json.dumps(v, sort_keys=True)


def go_map(m):
    if m is None:
        return "map[string]string(nil)"
    return "map[string]string{" + ", ".join(
        "%s:%s" % (go_quote(k), go_quote(m[k])) for k in sorted(m)) + "}"


def go_selector(sel):
    """%#v of a metav1.LabelSelector."""
    sel = sel or {}
    exprs = sel.get("matchExpressions")
    if exprs:
        parts = []
        for e in exprs:
            vals = e.get("values")
            vs = "[]string(nil)" if vals is None else \
                "[]string{" + ", ".join(go_quote(x) for x in vals) + "}"
            parts.append('v1.LabelSelectorRequirement{Key:%s, Operator:%s, Values:%s}'
                         % (go_quote(e.get("key", "")), go_quote(e.get("operator", "")), vs))
        ex = "[]v1.LabelSelectorRequirement{" + ", ".join(parts) + "}"
    else:
        ex = "[]v1.LabelSelectorRequirement(nil)"
    return "v1.LabelSelector{MatchLabels:%s, MatchExpressions:%s}" % (
        go_map(sel.get("matchLabels")), ex)

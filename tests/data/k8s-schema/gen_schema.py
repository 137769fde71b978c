#!/usr/bin/env python3
"""Generate lua/backend/mock/schema.lua: the structure of the built-in kinds as
server-side apply sees it (structs, maps and their atomicity; lists as
atomic, sets or maps with keys), for the mock cluster's field manager.

Source: the structured-merge-diff schema that applyconfiguration-gen
derives from the OpenAPI spec and its +listType/+mapType/+structType
markers, at Kubernetes 1.32.3 (Apache-2.0):

  kubernetes/client-go@c106b23895edc59ff05c65770a17e6a6d3caee66
    (tag v0.32.3):applyconfigurations/internal/internal.go
  kubernetes/apiextensions-apiserver@0350e46ec6f2c9fdb42bf74aa2da55fa8164150e
    (tag v0.32.3):pkg/client/applyconfiguration/internal/internal.go

and, by hand below (applyconfiguration-gen does not cover them), CRDs and
APIService from the +listType markers of
  kubernetes/apiextensions-apiserver@0350e46ec6f2c9fdb42bf74aa2da55fa8164150e
    (tag v0.32.3):pkg/apis/apiextensions/v1/types.go
  kubernetes/kube-aggregator@b83046e6768aee897740107dd245e2c71ef2a049
    (tag v0.32.3):pkg/apis/apiregistration/v1/types.go

Usage: gen_schema.py CLIENT_GO_INTERNAL.go > lua/backend/mock/schema.lua
(the file as `git show v0.32.3:applyconfigurations/internal/internal.go`
prints it).
"""
import sys

import yaml

SOURCES = [
    "kubernetes/client-go@c106b23895edc59ff05c65770a17e6a6d3caee66:"
    "applyconfigurations/internal/internal.go (v0.32.3)",
    "kubernetes/apiextensions-apiserver@0350e46ec6f2c9fdb42bf74aa2da55fa8164150e:"
    "pkg/apis/apiextensions/v1/types.go (v0.32.3, +listType markers)",
    "kubernetes/kube-aggregator@b83046e6768aee897740107dd245e2c71ef2a049:"
    "pkg/apis/apiregistration/v1/types.go (v0.32.3, +listType markers)",
]

# apiVersion, Kind, OpenAPI type name: the kinds the mock serves
KINDS = [
    ("v1", k, "io.k8s.api.core.v1." + k) for k in (
        "Namespace ConfigMap Secret Service ServiceAccount Pod Node "
        "PersistentVolume PersistentVolumeClaim Endpoints Event "
        "ResourceQuota LimitRange").split()
] + [
    ("apps/v1", k, "io.k8s.api.apps.v1." + k) for k in
    "Deployment DaemonSet StatefulSet ReplicaSet ControllerRevision".split()
] + [
    ("batch/v1", "Job", "io.k8s.api.batch.v1.Job"),
    ("batch/v1", "CronJob", "io.k8s.api.batch.v1.CronJob"),
] + [
    ("rbac.authorization.k8s.io/v1", k, "io.k8s.api.rbac.v1." + k) for k in
    "Role RoleBinding ClusterRole ClusterRoleBinding".split()
] + [
    ("storage.k8s.io/v1", k, "io.k8s.api.storage.v1." + k) for k in
    "StorageClass CSIDriver CSINode VolumeAttachment".split()
] + [
    ("coordination.k8s.io/v1", "Lease", "io.k8s.api.coordination.v1.Lease"),
    ("apiextensions.k8s.io/v1", "CustomResourceDefinition",
     "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1."
     "CustomResourceDefinition"),
    ("apiregistration.k8s.io/v1", "APIService",
     "io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.APIService"),
    ("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration",
     "io.k8s.api.admissionregistration.v1.ValidatingWebhookConfiguration"),
    ("admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration",
     "io.k8s.api.admissionregistration.v1.MutatingWebhookConfiguration"),
    ("policy/v1", "PodDisruptionBudget",
     "io.k8s.api.policy.v1.PodDisruptionBudget"),
    ("networking.k8s.io/v1", "Ingress", "io.k8s.api.networking.v1.Ingress"),
    ("networking.k8s.io/v1", "NetworkPolicy",
     "io.k8s.api.networking.v1.NetworkPolicy"),
    ("networking.k8s.io/v1", "IngressClass",
     "io.k8s.api.networking.v1.IngressClass"),
    ("scheduling.k8s.io/v1", "PriorityClass",
     "io.k8s.api.scheduling.v1.PriorityClass"),
    ("discovery.k8s.io/v1", "EndpointSlice",
     "io.k8s.api.discovery.v1.EndpointSlice"),
    ("autoscaling/v2", "HorizontalPodAutoscaler",
     "io.k8s.api.autoscaling.v2.HorizontalPodAutoscaler"),
]

META = "io.k8s.apimachinery.pkg.apis.meta.v1."
AGG = "io.k8s.kube-aggregator.pkg.apis.apiregistration.v1."
S = {"scalar": "string"}
# APIService (kube-aggregator types.go: conditions +listType=map
# +listMapKey=type; caBundle is []byte, a base64 string in JSON)
APISERVICE = [
    {"name": AGG + "APIService", "map": {"fields": [
        {"name": "apiVersion", "type": S}, {"name": "kind", "type": S},
        {"name": "metadata", "type": {"namedType": META + "ObjectMeta"}},
        {"name": "spec", "type": {"namedType": AGG + "APIServiceSpec"}},
        {"name": "status", "type": {"namedType": AGG + "APIServiceStatus"}}]}},
    {"name": AGG + "APIServiceSpec", "map": {"fields": [
        {"name": "caBundle", "type": S}, {"name": "group", "type": S},
        {"name": "groupPriorityMinimum", "type": {"scalar": "numeric"}},
        {"name": "insecureSkipTLSVerify", "type": {"scalar": "boolean"}},
        {"name": "service", "type": {"namedType": AGG + "ServiceReference"}},
        {"name": "version", "type": S},
        {"name": "versionPriority", "type": {"scalar": "numeric"}}]}},
    {"name": AGG + "ServiceReference", "map": {"fields": [
        {"name": "name", "type": S}, {"name": "namespace", "type": S},
        {"name": "port", "type": {"scalar": "numeric"}}]}},
    {"name": AGG + "APIServiceStatus", "map": {"fields": [
        {"name": "conditions", "type": {"list": {
            "elementType": {"namedType": AGG + "APIServiceCondition"},
            "elementRelationship": "associative", "keys": ["type"]}}}]}},
    {"name": AGG + "APIServiceCondition", "map": {"fields": [
        {"name": "lastTransitionTime", "type": {"namedType": META + "Time"}},
        {"name": "message", "type": S}, {"name": "reason", "type": S},
        {"name": "status", "type": S, "default": ""},
        {"name": "type", "type": S, "default": ""}]}},
]

EXT = "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1."


def struct(name, fields):
    return {"name": name, "map": {"fields": [
        {"name": n, "type": t} for n, t in fields]}}


def named(n):
    return {"namedType": n}


def atomic_list(t):
    return {"list": {"elementType": t, "elementRelationship": "atomic"}}


# CustomResourceDefinition (apiextensions types.go): versions, shortNames,
# categories, storedVersions, conversionReviewVersions are
# +listType=atomic; status.conditions +listType=map +listMapKey=type; a
# version (with its schema) is one atomic item of `versions`
CRD = [
    struct(EXT + "CustomResourceDefinition", [
        ("apiVersion", S), ("kind", S), ("metadata", named(META + "ObjectMeta")),
        ("spec", named(EXT + "CustomResourceDefinitionSpec")),
        ("status", named(EXT + "CustomResourceDefinitionStatus"))]),
    struct(EXT + "CustomResourceDefinitionSpec", [
        ("conversion", named(EXT + "CustomResourceConversion")), ("group", S),
        ("names", named(EXT + "CustomResourceDefinitionNames")),
        ("preserveUnknownFields", {"scalar": "boolean"}), ("scope", S),
        ("versions", atomic_list(named("__untyped_atomic_")))]),
    struct(EXT + "CustomResourceConversion", [
        ("strategy", S), ("webhook", named(EXT + "WebhookConversion"))]),
    struct(EXT + "WebhookConversion", [
        ("clientConfig", named(EXT + "WebhookClientConfig")),
        ("conversionReviewVersions", atomic_list(S))]),
    struct(EXT + "WebhookClientConfig", [
        ("caBundle", S), ("service", named(EXT + "ServiceReference")),
        ("url", S)]),
    struct(EXT + "ServiceReference", [
        ("name", S), ("namespace", S), ("path", S),
        ("port", {"scalar": "numeric"})]),
    struct(EXT + "CustomResourceDefinitionNames", [
        ("categories", atomic_list(S)), ("kind", S), ("listKind", S),
        ("plural", S), ("shortNames", atomic_list(S)), ("singular", S)]),
    struct(EXT + "CustomResourceDefinitionStatus", [
        ("acceptedNames", named(EXT + "CustomResourceDefinitionNames")),
        ("conditions", {"list": {
            "elementType": named(EXT + "CustomResourceDefinitionCondition"),
            "elementRelationship": "associative", "keys": ["type"]}}),
        ("storedVersions", atomic_list(S))]),
    struct(EXT + "CustomResourceDefinitionCondition", [
        ("lastTransitionTime", named(META + "Time")), ("message", S),
        ("reason", S), ("status", S), ("type", S)]),
]

PREFIXES = [
    ("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.", "apiext."),
    ("io.k8s.kube-aggregator.pkg.apis.apiregistration.", "apireg."),
    ("io.k8s.apimachinery.pkg.apis.meta.", "meta."),
    ("io.k8s.apimachinery.pkg.", ""),
    ("io.k8s.api.", ""),
]


def short(name):
    for p, r in PREFIXES:
        if name.startswith(p):
            return r + name[len(p):]
    return name


def load(path):
    s = open(path).read()
    y = s[s.index("typed.YAMLObject(`") + len("typed.YAMLObject(`"):]
    return yaml.safe_load(y[:y.index("`)")])["types"]


def lua_str(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def key(k):
    return k if k.isidentifier() and k not in LUA_KEYWORDS else "[%s]" % lua_str(k)


LUA_KEYWORDS = {"and", "break", "do", "else", "elseif", "end", "false", "for",
                "function", "goto", "if", "in", "local", "nil", "not", "or",
                "repeat", "return", "then", "true", "until", "while"}


class Gen:
    def __init__(self, types):
        self.types = {t["name"]: t for t in types}
        self.used = {}

    def ref(self, tr):
        """A type reference: 1 (a scalar), a named type's short name, or
        an inline atom."""
        if "namedType" in tr:
            self.need(tr["namedType"])
            return lua_str(short(tr["namedType"]))
        if set(tr) == {"scalar"}:
            return "1"
        return self.atom(tr)

    def need(self, name):
        if name in self.used:
            return
        self.used[name] = None
        t = self.types[name]
        self.used[name] = self.atom(t)

    def atom(self, t):
        parts = []
        if "scalar" in t:
            parts.append("s = true")
        if "map" in t:
            m = t["map"]
            fields, defaults = [], []
            for f in m.get("fields") or []:
                fields.append("%s = %s" % (key(f["name"]), self.ref(f["type"])))
                if "default" in f and isinstance(f["default"], (str, int)) \
                        and not isinstance(f["default"], bool):
                    d = f["default"]
                    defaults.append("%s = %s" % (key(f["name"]), lua_str(d)
                                                  if isinstance(d, str) else str(d)))
            if fields:
                parts.append("f = { %s }" % ", ".join(fields))
            if defaults:
                parts.append("d = { %s }" % ", ".join(defaults))
            if "elementType" in m:
                parts.append("m = %s" % self.ref(m["elementType"]))
            elif not fields:
                parts.append("m = 1")
            if m.get("elementRelationship") == "atomic":
                parts.append("ma = true")
        if "list" in t:
            lst = t["list"]
            parts.append("l = %s" % self.ref(lst["elementType"]))
            if lst.get("elementRelationship") == "associative":
                if lst.get("keys"):
                    parts.append("lk = { %s }" % ", ".join(lua_str(k) for k in lst["keys"]))
                else:
                    parts.append("ls = true")
        return "{ " + ", ".join(parts) + " }"


def main():
    types = load(sys.argv[1]) + CRD + APISERVICE
    g = Gen(types)
    kinds = []
    for av, kind, name in KINDS:
        g.need(name)
        kinds.append('  [%s] = %s,' % (lua_str(av + "/" + kind), lua_str(short(name))))
    out = ["--- uphook.backend.mock.schema: the built-in kinds as server-side apply sees",
           "--- them (GENERATED by tests/data/k8s-schema/gen_schema.py; do not edit).",
           "---",
           "--- From the structured-merge-diff schema Kubernetes derives from its",
           "--- OpenAPI spec and +listType/+mapType/+structType markers (1.32.3,",
           "--- Apache-2.0):"]
    out += ["---   " + s for s in SOURCES]
    out += ["---",
            "--- A type is an atom: f = struct fields, m = map values (ma: the map",
            "--- or struct is atomic), l = list items (lk: a map keyed by these",
            "--- fields, ls: a set, neither: atomic), s = a scalar is allowed,",
            "--- d = the defaults of key fields. A reference is 1 (a scalar), a",
            "--- type's name, or an atom.",
            "return {",
            "kinds = {"]
    out += kinds
    out += ["},", "types = {"]
    for name in sorted(g.used):
        out.append("  [%s] = %s," % (lua_str(short(name)), g.used[name]))
    out += ["},", "}", ""]
    sys.stdout.write("\n".join(out))


if __name__ == "__main__":
    main()

"""Protobuf request bodies (Content-Type application/vnd.kubernetes.protobuf),
as client-go's typed clients send them: Helm's release storage writes its
Secrets (or ConfigMaps) that way.

The body is the Kubernetes envelope: the 4 bytes "k8s\\0", then a
runtime.Unknown {typeMeta = 1 {apiVersion = 1, kind = 2}, raw = 2,
contentEncoding = 3, contentType = 4} whose raw is the object's message.
The messages are read by the field numbers of the generated.proto files of
k8s.io/api (core/v1, coordination/v1) and k8s.io/apimachinery (meta/v1,
runtime) and turned into the JSON the same Go struct would print: a field
left at its zero value is dropped (omitempty) unless it is a pointer in Go
(written only when set), bytes become base64, Time and MicroTime RFC 3339.
Kinds decoded: Secret, ConfigMap, Namespace, Event (core/v1) and Lease
(coordination.k8s.io/v1); the fake answers 415 for the others.
"""
import base64
import datetime
import json

MAGIC = b"k8s\x00"
MEDIA = "application/vnd.kubernetes.protobuf"


class ProtoError(ValueError):
    pass


def _varint(buf, i):
    shift = out = 0
    while True:
        if i >= len(buf) or shift > 63:
            raise ProtoError("truncated varint")
        b = buf[i]
        i += 1
        out |= (b & 0x7F) << shift
        if b < 0x80:
            return out, i
        shift += 7


def wire_fields(buf):
    """(field number, value) for each field: an int for a varint, bytes for
    a length-delimited field (fixed32/64 are skipped: no kind here has them)."""
    i = 0
    while i < len(buf):
        key, i = _varint(buf, i)
        num, wt = key >> 3, key & 7
        if wt == 0:
            v, i = _varint(buf, i)
        elif wt == 2:
            n, i = _varint(buf, i)
            if i + n > len(buf):
                raise ProtoError("truncated field %d" % num)
            v, i = buf[i:i + n], i + n
        elif wt in (1, 5):
            i += 8 if wt == 1 else 4
            continue
        else:
            raise ProtoError("wire type %d of field %d" % (wt, num))
        yield num, v


def _signed(v):
    return v - (1 << 64) if v >= 1 << 63 else v


def _time(buf, micro):
    """meta/v1 Time or MicroTime {seconds = 1, nanos = 2}; a zero time is
    written empty and is null in JSON."""
    secs = nanos = 0
    for num, v in wire_fields(buf):
        if num == 1:
            secs = _signed(v)
        elif num == 2:
            nanos = _signed(v)
    if not buf:
        return None
    t = datetime.datetime(1970, 1, 1) + datetime.timedelta(seconds=secs)
    if micro:
        return t.strftime("%Y-%m-%dT%H:%M:%S") + ".%06dZ" % (nanos // 1000)
    return t.strftime("%Y-%m-%dT%H:%M:%SZ")


def _scalar(kind, v):
    if kind == "string":
        return v.decode("utf-8", "replace")
    if kind == "bytes":
        return base64.b64encode(v).decode()
    if kind == "int":
        return _signed(v)
    if kind == "bool":
        return bool(v)
    if kind in ("time", "microtime"):
        return _time(v, kind == "microtime")
    if kind == "fieldsV1":           # FieldsV1 {Raw = 1}: JSON as is
        raw = b"".join(x for n, x in wire_fields(v) if n == 1)
        return json.loads(raw) if raw else {}
    if isinstance(kind, dict):
        return decode(kind, v)
    raise ProtoError("unknown kind %r" % (kind,))


def _map_entry(vkind, buf):
    key, val = "", _scalar(vkind, b"")
    for num, v in wire_fields(buf):
        if num == 1:
            key = v.decode("utf-8", "replace")
        elif num == 2:
            val = _scalar(vkind, v)
    return key, val


def _zero(v):
    return v is None or v is False or v == 0 or v == "" or v == {} or v == []


def decode(spec, buf):
    """The JSON form of a message. spec: {number: (json name, kind, mode)},
    kind a scalar name or a nested spec, mode "" (omitempty), "ptr" (kept
    when written), "list" (repeated) or "map" (map<string, kind>)."""
    out = {}
    for num, v in wire_fields(buf):
        f = spec.get(num)
        if f is None:
            continue                     # a field this fake does not know
        name, kind, mode = f
        if mode == "map":
            k, val = _map_entry(kind, v)
            out.setdefault(name, {})[k] = val
        elif mode == "list":
            out.setdefault(name, []).append(_scalar(kind, v))
        else:
            out[name] = _scalar(kind, v)
            if mode != "ptr" and _zero(out[name]):
                del out[name]
    return out


def _f(name, kind="string", mode=""):
    return (name, kind, mode)


OWNER_REF = {1: _f("kind"), 3: _f("name"), 4: _f("uid"), 5: _f("apiVersion"),
             6: _f("controller", "bool", "ptr"), 7: _f("blockOwnerDeletion", "bool", "ptr")}
MANAGED = {1: _f("manager"), 2: _f("operation"), 3: _f("apiVersion"), 4: _f("time", "time"),
           6: _f("fieldsType"), 7: _f("fieldsV1", "fieldsV1", "ptr"), 8: _f("subresource")}
OBJECT_META = {
    1: _f("name"), 2: _f("generateName"), 3: _f("namespace"), 4: _f("selfLink"),
    5: _f("uid"), 6: _f("resourceVersion"), 7: _f("generation", "int"),
    8: _f("creationTimestamp", "time"), 9: _f("deletionTimestamp", "time"),
    10: _f("deletionGracePeriodSeconds", "int", "ptr"),
    11: _f("labels", "string", "map"), 12: _f("annotations", "string", "map"),
    13: _f("ownerReferences", OWNER_REF, "list"), 14: _f("finalizers", "string", "list"),
    17: _f("managedFields", MANAGED, "list")}
SECRET = {1: _f("metadata", OBJECT_META), 2: _f("data", "bytes", "map"), 3: _f("type"),
          4: _f("stringData", "string", "map"), 5: _f("immutable", "bool", "ptr")}
CONFIG_MAP = {1: _f("metadata", OBJECT_META), 2: _f("data", "string", "map"),
              3: _f("binaryData", "bytes", "map"), 4: _f("immutable", "bool", "ptr")}
NS_CONDITION = {1: _f("type"), 2: _f("status"), 4: _f("lastTransitionTime", "time"),
                5: _f("reason"), 6: _f("message")}
NAMESPACE = {1: _f("metadata", OBJECT_META),
             2: _f("spec", {1: _f("finalizers", "string", "list")}),
             3: _f("status", {1: _f("phase"), 2: _f("conditions", NS_CONDITION, "list")})}
OBJECT_REF = {1: _f("kind"), 2: _f("namespace"), 3: _f("name"), 4: _f("uid"),
              5: _f("apiVersion"), 6: _f("resourceVersion"), 7: _f("fieldPath")}
EVENT = {1: _f("metadata", OBJECT_META), 2: _f("involvedObject", OBJECT_REF),
         3: _f("reason"), 4: _f("message"),
         5: _f("source", {1: _f("component"), 2: _f("host")}),
         6: _f("firstTimestamp", "time"), 7: _f("lastTimestamp", "time"), 8: _f("count", "int"),
         9: _f("type"), 10: _f("eventTime", "microtime"),
         11: _f("series", {1: _f("count", "int"), 2: _f("lastObservedTime", "microtime")},
                "ptr"),
         12: _f("action"), 13: _f("related", OBJECT_REF, "ptr"),
         14: _f("reportingComponent"), 15: _f("reportingInstance")}
LEASE = {1: _f("metadata", OBJECT_META),
         2: _f("spec", {1: _f("holderIdentity", "string", "ptr"),
                        2: _f("leaseDurationSeconds", "int", "ptr"),
                        3: _f("acquireTime", "microtime", "ptr"),
                        4: _f("renewTime", "microtime", "ptr"),
                        5: _f("leaseTransitions", "int", "ptr"),
                        6: _f("strategy", "string", "ptr"),
                        7: _f("preferredHolder", "string", "ptr")})}
KINDS = {("v1", "Secret"): SECRET, ("v1", "ConfigMap"): CONFIG_MAP,
         ("v1", "Namespace"): NAMESPACE, ("v1", "Event"): EVENT,
         ("coordination.k8s.io/v1", "Lease"): LEASE}


def decodable(gv, kind):
    return (gv, kind) in KINDS


def decode_body(body):
    """The object (a dict, as its JSON would read) a protobuf body holds."""
    if not body.startswith(MAGIC):
        raise ProtoError("provided data does not appear to be a protobuf message, "
                         "expected prefix [107 56 115 0]")
    api_version = kind = ""
    raw = b""
    for num, v in wire_fields(body[len(MAGIC):]):
        if num == 1:
            for n, x in wire_fields(v):
                if n == 1:
                    api_version = x.decode()
                elif n == 2:
                    kind = x.decode()
        elif num == 2:
            raw = v
        elif num == 3 and v:
            raise ProtoError("content encoding %r is not supported" % v.decode())
    spec = KINDS.get((api_version, kind))
    if spec is None:
        raise ProtoError("no kind %r is registered for version %r" % (kind, api_version))
    obj = {"apiVersion": api_version, "kind": kind}
    obj.update(decode(spec, raw))
    return obj

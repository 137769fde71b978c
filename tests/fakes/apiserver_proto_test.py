#!/usr/bin/env python3
"""Protobuf bodies and size limits of the fake API server
(apiserver_proto.py, tests/fakes/README.md "Protobuf"): the decoder
against messages written here field by field as client-go's generated
marshalling writes them (every non-pointer field, zero or not), then the
server: a protobuf Secret and ConfigMap created and updated, 415 for the
kinds it does not decode, 400 for a body without the envelope, and the
real server's 1 MiB Secret/ConfigMap and 3 MiB request limits.
Prints "ok - ..." lines and "N passed, N failed"."""
import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.dont_write_bytecode = True

import apiserver_proto as proto  # noqa: E402
from apiserver_test import Client  # noqa: E402
from testlib import check, finish  # noqa: E402

PB = proto.MEDIA


# ---- a protobuf writer (proto2 wire format), for the messages below
def varint(n):
    n &= (1 << 64) - 1
    out = b""
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


def vi(num, n):
    return varint(num << 3) + varint(n)


def ld(num, data):
    if isinstance(data, str):
        data = data.encode()
    return varint(num << 3 | 2) + varint(len(data)) + data


def entry(num, k, v):
    return ld(num, ld(1, k) + ld(2, v))


def envelope(api_version, kind, raw):
    return proto.MAGIC + ld(1, ld(1, api_version) + ld(2, kind)) + ld(2, raw) + ld(3, b"") + \
        ld(4, b"")


def meta(name, ns="default", rv="", extra=b""):
    # client-go writes every string and int of ObjectMeta, empty or not,
    # and an unset creationTimestamp as an empty message
    return ld(1, name) + ld(2, "") + ld(3, ns) + ld(4, "") + ld(5, "") + ld(6, rv) + \
        vi(7, 0) + ld(8, b"") + extra


def decoder_cases():
    mf = ld(1, "helm") + ld(2, "Update") + ld(3, "v1") + ld(4, vi(1, 1796601600)) + \
        ld(6, "FieldsV1") + ld(7, ld(1, '{"f:data":{".":{}}}')) + ld(8, "")
    owner = ld(1, "Deployment") + ld(3, "web") + ld(4, "u-1") + ld(5, "apps/v1") + vi(6, 1)
    md = meta("s", extra=entry(11, "owner", "helm") + entry(12, "note", "a b") +
              ld(13, owner) + ld(17, mf))
    raw = ld(1, md) + entry(2, "bin", b"\x00\xff\n") + ld(3, "Opaque") + \
        entry(4, "plain", "text") + vi(5, 0)
    got = proto.decode_body(envelope("v1", "Secret", raw))
    want = {"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "s", "namespace": "default", "labels": {"owner": "helm"},
                         "annotations": {"note": "a b"},
                         "ownerReferences": [{"kind": "Deployment", "name": "web", "uid": "u-1",
                                              "apiVersion": "apps/v1", "controller": True}],
                         "managedFields": [{"manager": "helm", "operation": "Update",
                                            "apiVersion": "v1", "time": "2026-12-07T00:00:00Z",
                                            "fieldsType": "FieldsV1",
                                            "fieldsV1": {"f:data": {".": {}}}}]},
            "data": {"bin": base64.b64encode(b"\x00\xff\n").decode()}, "type": "Opaque",
            "stringData": {"plain": "text"}, "immutable": False}
    check("decode: a Secret as client-go writes it (bytes in base64, empty fields dropped, "
          "a pointer's false kept)", got == want, json.dumps(got))

    raw = ld(1, meta("c")) + entry(2, "k", "v") + entry(3, "b", b"\x01")
    got = proto.decode_body(envelope("v1", "ConfigMap", raw))
    check("decode: a ConfigMap's data and binaryData",
          got.get("data") == {"k": "v"} and got.get("binaryData") == {"b": "AQ=="} and
          "immutable" not in got, got)

    raw = ld(1, meta("team", ns="")) + ld(2, ld(1, "kubernetes")) + ld(3, ld(1, ""))
    got = proto.decode_body(envelope("v1", "Namespace", raw))
    check("decode: a Namespace", got == {"apiVersion": "v1", "kind": "Namespace",
                                         "metadata": {"name": "team"},
                                         "spec": {"finalizers": ["kubernetes"]}}, got)

    ref = ld(1, "Pod") + ld(2, "default") + ld(3, "p") + ld(4, "") + ld(5, "v1") + \
        ld(6, "") + ld(7, "")
    raw = ld(1, meta("e")) + ld(2, ref) + ld(3, "Pulled") + ld(4, "pulled") + \
        ld(5, ld(1, "kubelet") + ld(2, "")) + ld(6, vi(1, 1796601600)) + ld(7, b"") + \
        vi(8, 2) + ld(9, "Normal") + ld(10, vi(1, 1796601600) + vi(2, 123456000)) + \
        ld(12, "") + ld(14, "") + ld(15, "")
    got = proto.decode_body(envelope("v1", "Event", raw))
    check("decode: an Event (Time in seconds, MicroTime in microseconds)",
          got.get("involvedObject") == {"kind": "Pod", "namespace": "default", "name": "p",
                                        "apiVersion": "v1"} and
          got.get("firstTimestamp") == "2026-12-07T00:00:00Z" and
          got.get("eventTime") == "2026-12-07T00:00:00.123456Z" and got.get("count") == 2 and
          got.get("source") == {"component": "kubelet"} and "lastTimestamp" not in got, got)

    spec = ld(1, "holder-a") + vi(2, 15) + ld(4, vi(1, 1796601600)) + vi(5, 0)
    got = proto.decode_body(envelope("coordination.k8s.io/v1", "Lease",
                                     ld(1, meta("l")) + ld(2, spec)))
    check("decode: a Lease (pointer fields kept at zero)",
          got.get("spec") == {"holderIdentity": "holder-a", "leaseDurationSeconds": 15,
                              "renewTime": "2026-12-07T00:00:00.000000Z",
                              "leaseTransitions": 0}, got)

    for desc, body in (("no k8s envelope", b'{"kind":"Secret"}'),
                       ("a truncated message", proto.MAGIC + b"\x0a\x7f"),
                       ("a kind it does not read",
                        envelope("apps/v1", "Deployment", ld(1, meta("d"))))):
        try:
            proto.decode_body(body)
            check("decode refuses " + desc, False)
        except proto.ProtoError as e:
            check("decode refuses %s (%s)" % (desc, e), True)


def server_cases(k):
    path = "/api/v1/namespaces/default/secrets"
    raw = ld(1, meta("pb")) + entry(2, "release", b"\x1f\x8b") + ld(3, "helm.sh/release.v1")
    code, body, _ = k.req("POST", path, envelope("v1", "Secret", raw), PB,
                          accept=PB + ",application/json")
    check("a protobuf Secret is created (201, answered in JSON)",
          code == 201 and body.get("data") == {"release": "H4s="} and
          body.get("type") == "helm.sh/release.v1", body)
    rv = (body.get("metadata") or {}).get("resourceVersion", "")
    raw = ld(1, meta("pb", rv=rv)) + entry(2, "release", b"\x00") + ld(3, "helm.sh/release.v1")
    code, body, _ = k.req("PUT", path + "/pb", envelope("v1", "Secret", raw), PB)
    check("a protobuf Secret is updated with its resourceVersion (PUT)",
          code == 200 and body.get("data") == {"release": "AA=="} and
          body["metadata"]["resourceVersion"] != rv, body)
    code, body, _ = k.req("PUT", path + "/pb", envelope("v1", "Secret", raw), PB)
    check("a stale resourceVersion in a protobuf PUT is a 409", code == 409, body)

    raw = ld(1, meta("cfg")) + entry(2, "a", "1")
    code, body, _ = k.req("POST", "/api/v1/namespaces/default/configmaps",
                          envelope("v1", "ConfigMap", raw), PB)
    check("a protobuf ConfigMap is created", code == 201 and body.get("data") == {"a": "1"},
          body)

    code, body, _ = k.req("POST", "/apis/apps/v1/namespaces/default/deployments",
                          envelope("apps/v1", "Deployment", ld(1, meta("d"))), PB)
    check("a protobuf Deployment is 415 UnsupportedMediaType",
          code == 415 and body.get("reason") == "UnsupportedMediaType" and
          "accepted media types include: application/json, application/yaml" in
          body.get("message", ""), body)
    code, body, _ = k.req("POST", path, b'{"kind":"Secret"}', PB)
    check("a protobuf body without the k8s envelope is 400", code == 400 and
          "expected prefix" in body.get("message", ""), body)

    mib = 1024 * 1024
    code, body, _ = k.req("POST", path, {"apiVersion": "v1", "kind": "Secret",
                                         "metadata": {"name": "fits"},
                                         "data": {"a": base64.b64encode(b"x" * (mib - 1))
                                                  .decode(), "b": "eA=="}})
    check("a Secret of exactly 1 MiB of data is created", code == 201, body)
    code, body, _ = k.req("POST", path, envelope("v1", "Secret", ld(1, meta("big")) +
                                                 entry(2, "a", b"x" * mib) + entry(2, "b", "y")),
                          PB)
    check("a Secret over 1 MiB is 422, with the real server's message",
          code == 422 and body.get("message") == 'Secret "big" is invalid: data: Too long: '
          'may not be more than 1048576 bytes' and
          body["details"]["causes"][0]["reason"] == "FieldValueTooLong", body)
    code, body, _ = k.req("POST", "/api/v1/namespaces/default/configmaps",
                          {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "big"},
                           "data": {"a": "x" * (mib - 1)}, "binaryData": {"b": "eXk="}})
    check("a ConfigMap whose data and binaryData pass 1 MiB is 422 (field [])",
          code == 422 and body.get("message") == 'ConfigMap "big" is invalid: []: Too long: '
          'may not be more than 1048576 bytes', body)
    code, body, _ = k.req("POST", "/api/v1/namespaces/default/configmaps",
                          {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "huge"},
                           "data": {"a": "x" * (3 * mib)}})
    check("a request body over 3 MiB is 413 RequestEntityTooLarge",
          code == 413 and body.get("message") == "Request entity too large: limit is 3145728",
          body)


def main():
    decoder_cases()
    d = tempfile.mkdtemp(prefix="apiserver_proto_test.")
    p = subprocess.Popen([sys.executable, os.path.join(HERE, "apiserver.py"), "--dir", d,
                          "--quiet"], stdout=subprocess.PIPE, text=True)
    try:
        line = p.stdout.readline()
        check("server ready", line.startswith("ready "), line)
        if line.startswith("ready "):
            server_cases(Client(d, int(line.split()[1])))
    finally:
        p.kill()
        p.wait()
        shutil.rmtree(d, ignore_errors=True)
    finish()


if __name__ == "__main__":
    main()

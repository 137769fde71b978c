"""Print a mock cluster file (or a fixture) as canonical JSON without
server-set fields and controller-made objects, so two worlds can be
compared with cmp.

normalize.py FILE [lease]: with "lease", without uphook's records of runs
either: its Leases uphook-*, and the history of its state ConfigMaps
kube-system/uphook-* (a failed or recovered run adds an entry there,
docs/state.md; a ConfigMap holding nothing else but its repository is
left out).

normalize.py --same BASE FILE...: each FILE normalized as with "lease",
compared with BASE (that output); prints each FILE that differs, and exits
1 when one does (one process for many worlds)."""
import json
import sys

import yaml

SERVER = {"resourceVersion", "uid", "creationTimestamp", "managedFields",
          "generation", "selfLink"}


def clean(o):
    o = dict(o)
    o.pop("status", None)
    md = {k: v for k, v in (o.get("metadata") or {}).items()
          if k not in SERVER}
    o["metadata"] = md
    return o


SKIP_RUNS = "lease"


def controller_made(o):
    """Made by a controller (a Deployment's ReplicaSets and Pods...): they
    differ from run to run on a real cluster, and exact-rollback
    comparisons leave them out (docs/mock.md, env:snapshot())."""
    return any(isinstance(r, dict) and r.get("controller")
               for r in (o.get("metadata") or {}).get("ownerReferences") or [])


def uphooks(o, kind):
    md = o["metadata"]
    return o.get("kind") == kind and md["name"].startswith("uphook-") \
        and md.get("namespace") == "kube-system"


def normalize(path, skip):
    docs = list(yaml.safe_load_all(open(path)))
    if len(docs) == 1 and isinstance(docs[0], dict) and "items" in docs[0]:
        docs = docs[0]["items"]        # the fake API server's /_fake/objects
    objs = [clean(d) for d in docs if isinstance(d, dict) and not controller_made(d)]
    if skip:
        objs = [o for o in objs if not uphooks(o, "Lease")]
        for o in objs:
            if uphooks(o, "ConfigMap") and isinstance(o.get("data"), dict):
                o["data"] = {k: v for k, v in o["data"].items() if k != "history"}
        # a record of runs only names its repository besides (no version)
        objs = [o for o in objs if not (uphooks(o, "ConfigMap")
                                        and not set(o.get("data") or {}) - {"repository"})]
    objs.sort(key=lambda o: (o.get("apiVersion", ""), o.get("kind", ""),
                             o["metadata"].get("namespace", ""),
                             o["metadata"].get("name", "")))
    return json.dumps(objs, indent=1, sort_keys=True)


if sys.argv[1] == "--same":
    base = open(sys.argv[2]).read().rstrip("\n")
    differ = [f for f in sys.argv[3:] if normalize(f, SKIP_RUNS) != base]
    for f in differ:
        print(f)
    sys.exit(1 if differ else 0)
print(normalize(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None))

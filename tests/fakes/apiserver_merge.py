"""Merging for the fake API server: server-side apply, merge patch, strategic
merge patch, JSON patch, and the field sets behind managedFields."""
import copy
import json

import apiserver_schema as schema
from apiserver_types import ApiError, bad_request


def jcopy(v):
    """A deep copy of JSON data (dicts, lists, scalars), as copy.deepcopy
    makes it but several times faster: the fake copies every object it
    stores, serves and records (copy.deepcopy was 60% of its CPU in the
    Helm benchmark, docs/bench.md). Anything else goes to copy.deepcopy."""
    if isinstance(v, dict):
        return {k: jcopy(x) for k, x in v.items()}
    if isinstance(v, list):
        return [jcopy(x) for x in v]
    if v is None or isinstance(v, (str, int, float)):
        return v
    return copy.deepcopy(v)

# Without a type (merge and strategic merge patches): list field name -> key
# fields of its items (lists not named here are atomic). Server-side apply
# and managedFields go by the schema (apiserver_schema: the mock's data).
NAME_KEYED = {"containers", "initContainers", "ephemeralContainers", "volumes", "env",
              "imagePullSecrets", "volumeClaimTemplates"}
NO_DEFAULTS = {"protocol": "TCP"}


def list_keys(field, items):
    """Key fields of a keyed list, or None when the list is atomic."""
    if not items or not all(isinstance(i, dict) for i in items):
        return None
    if field in NAME_KEYED:
        keys = ["name"]
    elif field == "volumeMounts":
        keys = ["mountPath"]
    elif field == "volumeDevices":
        keys = ["devicePath"]
    elif field == "hostAliases":
        keys = ["ip"]
    elif field == "conditions":
        keys = ["type"]
    elif field == "ports":
        if all("containerPort" in i for i in items):
            keys = ["containerPort", "protocol"]
        elif all("port" in i for i in items):
            keys = ["port", "protocol"]
        else:
            return None
    else:
        return None
    if not all(k in i for i in items for k in keys if k != "protocol"):
        return None
    return keys


def _list_kind(typ, field, items):
    """(keys, defaults) of a keyed list, "set", or None (atomic)."""
    if typ is None:
        keys = list_keys(field, items)
        return (keys, NO_DEFAULTS) if keys else None
    lk = schema.list_keys(typ)
    if lk == "set":
        return "set" if all(not isinstance(i, (dict, list)) for i in items) else None
    if lk and all(isinstance(i, dict) for i in items):
        return lk
    return None


def _child(typ, key):
    return None if typ is None else schema.field_type(typ, key)


def _item(typ):
    return None if typ is None else schema.item_type(typ)


def _atomic_map(typ):
    return typ is not None and bool(typ.get("ma"))


def item_key(kind, item):
    if kind == "set":
        return json.dumps(item, sort_keys=True)
    keys, defaults = kind
    return tuple(item.get(k, defaults.get(k)) for k in keys)


def key_str(kind, item):
    if kind == "set":
        return "v:" + json.dumps(item, separators=(",", ":"))
    keys, defaults = kind
    return "k:" + json.dumps(dict(zip(keys, item_key(kind, item))), sort_keys=True,
                             separators=(",", ":"))


def drop_nulls(v):
    if isinstance(v, dict):
        return {k: drop_nulls(x) for k, x in v.items() if x is not None}
    if isinstance(v, list):
        return [drop_nulls(x) for x in v]
    return v


def merge(base, patch, keyed, field=None, typ=None):
    """RFC 7386 merge patch; with keyed=True keyed lists merge item by item
    (strategic merge patch and server-side apply); with a type (apply), by
    the schema: atomic maps and lists are replaced, sets are a union."""
    if isinstance(patch, dict):
        if not isinstance(base, dict) or _atomic_map(typ):
            return drop_nulls(patch)
        out = dict(base)
        for k, pv in patch.items():
            if k.startswith("$"):
                continue
            if pv is None:
                out.pop(k, None)
            elif k in out:
                out[k] = merge(out[k], pv, keyed, k, _child(typ, k))
            else:
                out[k] = drop_nulls(pv)
        return out
    if keyed and isinstance(patch, list) and isinstance(base, list):
        kind = _list_kind(typ, field, base + patch)
        if kind:
            out = list(base)
            index = {item_key(kind, it): n for n, it in enumerate(out)}
            for it in patch:
                if isinstance(it, dict) and it.get("$patch") == "delete":
                    n = index.get(item_key(kind, it))
                    if n is not None:
                        out[n] = None
                    continue
                n = index.get(item_key(kind, it))
                if n is None:
                    index[item_key(kind, it)] = len(out)
                    out.append(drop_nulls(it))
                elif kind != "set":
                    out[n] = merge(out[n], it, keyed, None, _item(typ))
            return [x for x in out if x is not None]
    return jcopy(patch)


# ---------------------------------------------------------------- JSON patch

def _ptr(path):
    if path == "":
        return []
    if not path.startswith("/"):
        raise bad_request("invalid JSON pointer: %s" % path)
    return [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]


def _walk(doc, parts):
    cur = doc
    for p in parts:
        if isinstance(cur, list):
            cur = cur[int(p)]
        elif isinstance(cur, dict):
            cur = cur[p]
        else:
            raise KeyError(p)
    return cur


def json_patch(doc, ops):
    doc = jcopy(doc)
    if not isinstance(ops, list):
        raise bad_request("json patch must be a list of operations")
    for op in ops:
        try:
            kind, parts = op["op"], _ptr(op["path"])
            if kind == "test":
                if _walk(doc, parts) != op.get("value"):
                    raise bad_request("the server rejected our request due to an error in our "
                                      "request: test operation failed")
                continue
            if kind in ("move", "copy"):
                src = _ptr(op["from"])
                val = jcopy(_walk(doc, src))
                if kind == "move":
                    parent = _walk(doc, src[:-1])
                    del parent[int(src[-1]) if isinstance(parent, list) else src[-1]]
                kind, op = "add", {"value": val}
            parent = _walk(doc, parts[:-1])
            last = parts[-1]
            if kind == "remove":
                del parent[int(last) if isinstance(parent, list) else last]
            elif kind in ("add", "replace"):
                if isinstance(parent, list):
                    if last == "-":
                        parent.append(op["value"])
                    elif kind == "add":
                        parent.insert(int(last), op["value"])
                    else:
                        parent[int(last)] = op["value"]
                else:
                    if kind == "replace" and last not in parent:
                        raise KeyError(last)
                    parent[last] = op["value"]
            else:
                raise bad_request("unknown json patch op %r" % kind)
        except (KeyError, IndexError, ValueError, TypeError):
            raise ApiError(422, "Invalid", "the server rejected our request due to an error "
                           "in our request: jsonpatch %s operation does not apply: doc is "
                           "missing path: %s" % (op.get("op"), op.get("path")))
    return doc


# ---------------------------------------------------------------- field sets

SKIP_TOP = {"apiVersion", "kind"}
SKIP_META = {"name", "namespace", "uid", "resourceVersion", "generation", "creationTimestamp",
             "managedFields", "selfLink", "deletionTimestamp"}


def field_paths(obj, skip_status=True, typ=None):
    """The set of field paths an applied configuration sets, as tuples of
    'f:<name>' / 'k:<key json>' / 'v:<value json>' segments (every prefix
    included); an atomic map, struct or list is one path."""
    out = set()

    def walk(v, prefix, field, t):
        if isinstance(v, dict):
            if prefix and _atomic_map(t):
                return
            for k, x in v.items():
                if not prefix and (k in SKIP_TOP or (skip_status and k == "status")):
                    continue
                if prefix == ("f:metadata",) and k in SKIP_META:
                    continue
                p = prefix + ("f:" + k,)
                out.add(p)
                walk(x, p, k, _child(t, k))
        elif isinstance(v, list):
            kind = _list_kind(t, field, v)
            if kind:
                for it in v:
                    p = prefix + (key_str(kind, it),)
                    out.add(p)
                    if kind != "set":
                        walk(it, p, None, _item(t))
    walk(obj, (), None, typ)
    return out


def paths_to_fields(paths):
    tree = {}
    for p in sorted(paths, key=len):
        node = tree
        for seg in p:
            node = node.setdefault(seg, {})
        if p and p[-1].startswith("k:"):
            node.setdefault(".", {})
    return tree


def fields_to_paths(tree, prefix=()):
    out = set()
    for seg, sub in (tree or {}).items():
        if seg == ".":
            continue
        p = prefix + (seg,)
        out.add(p)
        out |= fields_to_paths(sub, p)
    return out


def changed_paths(old, new, prefix=(), field=None, typ=None):
    """Leaf paths whose value differs between old and new (new's side)."""
    out = set()
    if isinstance(new, dict) and isinstance(old, dict) and not (prefix and _atomic_map(typ)):
        for k, x in new.items():
            if not prefix and k in SKIP_TOP | {"status"}:
                continue
            if prefix == ("f:metadata",) and k in SKIP_META:
                continue
            p = prefix + ("f:" + k,)
            t = _child(typ, k)
            if k not in old:
                out |= {p} | field_paths_sub(x, p, k, t)
            elif old[k] != x:
                sub = changed_paths(old[k], x, p, k, t)
                # a map or struct merged by key changed when a field of it did
                if sub or not (isinstance(x, dict) and isinstance(old[k], dict)
                               and not _atomic_map(t)):
                    out.add(p)
                out |= sub
    elif isinstance(new, list) and isinstance(old, list):
        kind = _list_kind(typ, field, new + old)
        if kind:
            olds = {item_key(kind, it): it for it in old}
            for it in new:
                p = prefix + (key_str(kind, it),)
                o = olds.get(item_key(kind, it))
                if o is None:
                    out.add(p)
                    if kind != "set":
                        out |= field_paths_sub(it, p, None, _item(typ))
                elif o != it:
                    out.add(p)
                    out |= changed_paths(o, it, p, None, _item(typ))
    return out


def field_paths_sub(v, prefix, field, typ=None):
    sub = set()
    if isinstance(v, dict) and not _atomic_map(typ):
        for k, x in v.items():
            p = prefix + ("f:" + k,)
            sub.add(p)
            sub |= field_paths_sub(x, p, k, _child(typ, k))
    elif isinstance(v, list):
        kind = _list_kind(typ, field, v)
        if kind:
            for it in v:
                p = prefix + (key_str(kind, it),)
                sub.add(p)
                if kind != "set":
                    sub |= field_paths_sub(it, p, None, _item(typ))
    return sub


def _find_item(cur, seg):
    """Index of the list item a 'k:' or 'v:' segment names, or None."""
    want = json.loads(seg[2:])
    for i, it in enumerate(cur):
        if seg.startswith("v:"):
            if it == want:
                return i
        elif isinstance(it, dict) and all(
                it.get(k, NO_DEFAULTS.get(k)) == w for k, w in want.items()):
            return i
    return None


def remove_path(obj, path):
    """Delete the field or list item at path; True when something went."""
    cur = obj
    for n, seg in enumerate(path):
        last = n == len(path) - 1
        if seg.startswith("f:"):
            name = seg[2:]
            if not isinstance(cur, dict) or name not in cur:
                return False
            if last:
                del cur[name]
                return True
            cur = cur[name]
        else:
            if not isinstance(cur, list):
                return False
            hit = _find_item(cur, seg)
            if hit is None:
                return False
            if last:
                del cur[hit]
                return True
            cur = cur[hit]
    return False


_MISSING = object()


def get_path(obj, path):
    """The value at a field path, or _MISSING."""
    cur = obj
    for seg in path:
        if seg.startswith("f:"):
            if not isinstance(cur, dict) or seg[2:] not in cur:
                return _MISSING
            cur = cur[seg[2:]]
        else:
            if not isinstance(cur, list):
                return _MISSING
            hit = _find_item(cur, seg)
            if hit is None:
                return _MISSING
            cur = cur[hit]
    return cur


def path_str(path):
    """A field path as structured-merge-diff prints it: .spec.containers[name="x"].image"""
    out = ""
    for seg in path:
        if seg.startswith("f:"):
            out += "." + seg[2:]
        elif seg.startswith("v:"):
            out += "[=" + seg[2:] + "]"
        else:
            out += "[" + ",".join("%s=%s" % (k, json.dumps(v))
                                  for k, v in json.loads(seg[2:]).items()) + "]"
    return out


def drop_empty_maps(v, typ):
    """Drop, in place, the empty maps of v where its type has a map (not a
    struct, a deduced or an atomic type): a built-in kind's map fields are
    `omitempty` in Go, so the API server keeps none that is empty (a merge
    patch removing a ConfigMap's last key leaves no `data`). As
    lua/backend/mock/ssa.lua drop_empty_maps."""
    fields_v1 = schema.schema()["types"].get("meta.v1.FieldsV1")
    if typ is None or typ is schema.DEDUCED or typ is fields_v1:
        return
    if isinstance(v, list) and "l" in typ:
        for item in v:
            drop_empty_maps(item, schema.item_type(typ))
        return
    if not isinstance(v, dict) or typ.get("ma"):
        return
    for k in list(v):
        if typ.get("f") is not None and k not in typ["f"]:
            continue
        t = schema.field_type(typ, k)
        if "m" in t and "f" not in t and not t.get("ma") and t is not schema.DEDUCED \
                and v[k] == {}:
            del v[k]
        elif isinstance(v[k], (dict, list)):
            drop_empty_maps(v[k], t)

"""Merging for the fake API server: server-side apply, merge patch, strategic
merge patch, JSON patch, and the field sets behind managedFields."""
import copy
import json

from apiserver_types import ApiError, bad_request

# list field name -> key fields of its items (lists not named here are atomic)
NAME_KEYED = {"containers", "initContainers", "ephemeralContainers", "volumes", "env",
              "imagePullSecrets", "volumeClaimTemplates"}


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


def item_key(keys, item):
    return tuple(item.get(k, "TCP" if k == "protocol" else None) for k in keys)


def key_str(keys, item):
    return "k:" + json.dumps(dict(zip(keys, item_key(keys, item))), sort_keys=True,
                             separators=(",", ":"))


def drop_nulls(v):
    if isinstance(v, dict):
        return {k: drop_nulls(x) for k, x in v.items() if x is not None}
    if isinstance(v, list):
        return [drop_nulls(x) for x in v]
    return v


def merge(base, patch, keyed, field=None):
    """RFC 7386 merge patch; with keyed=True keyed lists merge item by item
    (strategic merge patch and server-side apply)."""
    if isinstance(patch, dict):
        if not isinstance(base, dict):
            return drop_nulls(patch)
        out = dict(base)
        for k, pv in patch.items():
            if k.startswith("$"):
                continue
            if pv is None:
                out.pop(k, None)
            elif k in out:
                out[k] = merge(out[k], pv, keyed, k)
            else:
                out[k] = drop_nulls(pv)
        return out
    if keyed and isinstance(patch, list) and isinstance(base, list):
        keys = list_keys(field, base + patch)
        if keys:
            out = list(base)
            index = {item_key(keys, it): n for n, it in enumerate(out)}
            for it in patch:
                if it.get("$patch") == "delete":
                    n = index.get(item_key(keys, it))
                    if n is not None:
                        out[n] = None
                    continue
                n = index.get(item_key(keys, it))
                if n is None:
                    index[item_key(keys, it)] = len(out)
                    out.append(drop_nulls(it))
                else:
                    out[n] = merge(out[n], it, keyed, None)
            return [x for x in out if x is not None]
    return copy.deepcopy(patch)


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
    doc = copy.deepcopy(doc)
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
                val = copy.deepcopy(_walk(doc, src))
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


def field_paths(obj, skip_status=True):
    """The set of field paths an applied configuration sets, as tuples of
    'f:<name>' / 'k:<key json>' segments (every prefix included)."""
    out = set()

    def walk(v, prefix, field):
        if isinstance(v, dict):
            for k, x in v.items():
                if not prefix and (k in SKIP_TOP or (skip_status and k == "status")):
                    continue
                if prefix == ("f:metadata",) and k in SKIP_META:
                    continue
                p = prefix + ("f:" + k,)
                out.add(p)
                walk(x, p, k)
        elif isinstance(v, list):
            keys = list_keys(field, v)
            if keys:
                for it in v:
                    p = prefix + (key_str(keys, it),)
                    out.add(p)
                    walk(it, p, None)
    walk(obj, (), None)
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


def changed_paths(old, new, prefix=(), field=None):
    """Leaf paths whose value differs between old and new (new's side)."""
    out = set()
    if isinstance(new, dict) and isinstance(old, dict):
        for k, x in new.items():
            if not prefix and k in SKIP_TOP | {"status"}:
                continue
            if prefix == ("f:metadata",) and k in SKIP_META:
                continue
            p = prefix + ("f:" + k,)
            if k not in old:
                out |= {p} | field_paths_sub(x, p, k)
            elif old[k] != x:
                out.add(p)
                out |= changed_paths(old[k], x, p, k)
    elif isinstance(new, list) and isinstance(old, list):
        keys = list_keys(field, new + old)
        if keys:
            olds = {item_key(keys, it): it for it in old}
            for it in new:
                p = prefix + (key_str(keys, it),)
                o = olds.get(item_key(keys, it))
                if o is None:
                    out |= {p} | field_paths_sub(it, p, None)
                elif o != it:
                    out.add(p)
                    out |= changed_paths(o, it, p, None)
    return out


def field_paths_sub(v, prefix, field):
    sub = set()
    if isinstance(v, dict):
        for k, x in v.items():
            p = prefix + ("f:" + k,)
            sub.add(p)
            sub |= field_paths_sub(x, p, k)
    elif isinstance(v, list):
        keys = list_keys(field, v)
        if keys:
            for it in v:
                p = prefix + (key_str(keys, it),)
                sub.add(p)
                sub |= field_paths_sub(it, p, None)
    return sub


def remove_path(obj, path):
    """Delete the field or keyed-list item at path; True when something went."""
    cur, field = obj, None
    for n, seg in enumerate(path):
        last = n == len(path) - 1
        if seg.startswith("f:"):
            name = seg[2:]
            if not isinstance(cur, dict) or name not in cur:
                return False
            if last:
                del cur[name]
                return True
            cur, field = cur[name], name
        else:
            if not isinstance(cur, list):
                return False
            want = json.loads(seg[2:])
            keys = list(want)
            hit = None
            for i, it in enumerate(cur):
                if isinstance(it, dict) and dict(zip(keys, item_key(keys, it))) == want:
                    hit = i
                    break
            if hit is None:
                return False
            if last:
                del cur[hit]
                return True
            cur, field = cur[hit], None
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
            want = json.loads(seg[2:])
            keys = list(want)
            cur = next((it for it in cur if isinstance(it, dict)
                        and dict(zip(keys, item_key(keys, it))) == want), _MISSING)
            if cur is _MISSING:
                return cur
    return cur


def path_str(path):
    """A field path as structured-merge-diff prints it: .spec.containers[name="x"].image"""
    out = ""
    for seg in path:
        if seg.startswith("f:"):
            out += "." + seg[2:]
        else:
            out += "[" + ",".join("%s=%s" % (k, json.dumps(v))
                                  for k, v in json.loads(seg[2:]).items()) + "]"
    return out

"""Watch streaming: chunked JSON events from a resourceVersion, 410 when it is
too old, bookmarks, timeouts, and the slow/cut faults."""
import time

from apiserver_state import fields_match, labels_match, parse_field_selector, \
    parse_label_selector
from apiserver_types import gone

DEFAULT_TIMEOUT = 1800


def _initial(state, rt, ns, lreqs, freqs):
    return [state.present(rt, o) for (ons, _), o in sorted(state.objects[rt.gr].items())
            if (not ns or ons == ns) and labels_match(lreqs, o["metadata"].get("labels"))
            and fields_match(freqs, o)]


def _bookmark(rt, rv, initial_end=False):
    md = {"resourceVersion": str(rv)}
    if initial_end:
        md["annotations"] = {"k8s.io/initial-events-end": "true"}
    return {"type": "BOOKMARK", "object": {"kind": rt.kind, "apiVersion": rt.gv,
                                           "metadata": md}}


def run_watch(h, state, rt, ns, q, fault):
    lreqs = parse_label_selector(q.get("labelSelector"))
    freqs = parse_field_selector(q.get("fieldSelector"))
    timeout = float(q.get("timeoutSeconds") or DEFAULT_TIMEOUT)
    deadline = time.monotonic() + timeout
    asked = q.get("resourceVersion", "")
    initial_events = q.get("sendInitialEvents") == "true"
    bookmarks = q.get("allowWatchBookmarks") == "true"
    slow = fault.get("delay", 1) if fault and fault["action"] == "slow-watch" else 0
    cut = int(fault.get("events", 0)) if fault and fault["action"] == "cut-watch" else None
    with state.lock:
        err = None
        if state.force_gone:
            mode = state.force_gone.pop(0)
            err = (gone(asked or 0, state.rv), mode)
        elif asked not in ("", "0") and not initial_events:
            try:
                n = int(asked)
            except ValueError:
                n = -1
            if n < state.floor:
                err = (gone(asked, state.floor + 1), "event")
        if err and err[1] == "http":
            raise err[0]
        if err is None:
            if asked in ("", "0") or initial_events:
                first = [{"type": "ADDED", "object": o}
                         for o in _initial(state, rt, ns, lreqs, freqs)]
                last = state.rv
            else:
                first, last = [], int(asked)
        epoch = state.watch_epoch
    h.start_chunked()
    if err:
        h.chunk({"type": "ERROR", "object": err[0].status()})
        return h.end_chunked()
    sent = 0
    if state.broken == "watch":
        first = []
    for ev in first:
        if cut is not None and sent >= cut:
            return h.end_chunked()
        h.chunk(ev)
        sent += 1
    if initial_events and bookmarks:
        h.chunk(_bookmark(rt, last, True))
    while True:
        with state.cond:
            while True:
                if state.watch_epoch != epoch:
                    return h.end_chunked()
                left = deadline - time.monotonic()
                if left <= 0:
                    return h.end_chunked()
                evs = [e for e in state.events if e.rv > last and e.gr == rt.gr
                       and (not ns or e.ns == ns)
                       and labels_match(lreqs, e.obj["metadata"].get("labels"))
                       and fields_match(freqs, e.obj)]
                if state.broken == "watch":
                    evs = []
                if evs:
                    break
                state.cond.wait(min(left, 30))
            out = [(e.rv, {"type": e.type, "object": state.present(rt, e.obj)}) for e in evs]
        for rv, ev in out:
            if cut is not None and sent >= cut:
                return h.end_chunked()
            if slow:
                time.sleep(slow)
            h.chunk(ev)
            sent += 1
            last = rv

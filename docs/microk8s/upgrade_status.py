#!/usr/bin/env python3
"""Which addons have an upgrade available, from `uphook list --output json`.

For `microk8s status` (scripts/wrappers/status.py): import it and call
upgrades(), or run it:

    upgrade_status.py                  human lines, nothing when all is current
    upgrade_status.py --format yaml    an `upgrades:` list for status --format yaml

Each line of `uphook list --output json` is one addon:
  {"repo": "core", "name": "dns", "enabled": true, "installed": "1.8.0",
   "hook": true, "target": "1.14.3", "from_range": ">=1.6.6 <1.14.3",
   "upgradable": true}
`installed` is absent when uphook has no state for the addon yet (an addon
enabled before uphook: `microk8s upgrade` detects its version); `error`
is set when the hook does not load. A failure of uphook itself (no
cluster, no binary) is not an error of `microk8s status`: no upgrades are
shown.
"""
import json
import os
import subprocess
import sys


def uphook_path():
    snap = os.environ.get("SNAP", "/snap/microk8s/current")
    return os.environ.get("UPHOOK", os.path.join(snap, "bin", "uphook"))


def addons(uphook=None, timeout=20):
    """Every addon uphook knows, as dicts; [] when uphook cannot answer."""
    try:
        p = subprocess.run([uphook or uphook_path(), "list", "--output",
                            "json"], capture_output=True, text=True,
                           timeout=timeout)
    except (OSError, subprocess.TimeoutExpired):
        return []
    if p.returncode != 0:
        return []
    out = []
    for line in p.stdout.splitlines():
        try:
            row = json.loads(line)
        except ValueError:
            continue
        if isinstance(row, dict) and "name" in row:
            out.append(row)
    return out


def upgrades(uphook=None):
    """The enabled addons with an upgrade available:
    [(repo/name, installed or None, target)], sorted."""
    out = []
    for a in addons(uphook):
        if a.get("error") or not a.get("hook") or a.get("enabled") is False:
            continue
        if a.get("upgradable") or (a.get("enabled") and not a.get("installed")
                                   and a.get("target")):
            # without state uphook cannot tell the version before detect
            # runs: an enabled addon with a hook is worth a look
            out.append(("%s/%s" % (a.get("repo", "?"), a["name"]),
                        a.get("installed"), a["target"]))
    return sorted(out)


def main(argv):
    rows = upgrades()
    if "--format" in argv and argv[argv.index("--format") + 1:][:1] == ["yaml"]:
        print("upgrades:")
        for name, cur, target in rows:
            print("  - name: %s\n    installed: %s\n    available: %s"
                  % (name, json.dumps(cur), json.dumps(target)))
        return 0
    if rows:
        print("upgrades available:")
        for name, cur, target in rows:
            print("    %-24s %s -> %s   (microk8s upgrade %s)"
                  % (name, cur or "?", target, name.split("/", 1)[1]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

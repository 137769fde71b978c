#!/usr/bin/env python3
"""`uphook doctor`: what a snap refresh broke, offline (the mock cluster)
and against the fake API server (discovery, Nodes, configz).

A snap lays out $SNAP/addons/<repo> (the snap's copy, replaced by every
refresh) and $SNAP_COMMON/addons/<repo> (the clone enable runs, which a
refresh leaves alone). The checks: API versions an addon's YAML uses that
the cluster does not serve, or that the next minor removes, with the file,
the kind and what fixes it; an addon's own CRDs count as served; a clone
older than the snap's copy, with `microk8s addons repo update`; kubelet
settings and versions that differ between nodes; each addon's two
versions; text and JSON; exit 0 when nothing is found, 1 otherwise.
Run from the repository root with $UPHOOK set (tests/run.sh does).
Prints "ok - ..." lines and "N passed, N failed".
"""
import json
import os
import shutil
import subprocess
import tarfile
import tempfile

from testlib import UPHOOK, Fake, check, finish, write


def repo(root, name, addons):
    """addons: {name: (addons.yaml version, {file: text})}"""
    d = os.path.join(root, "addons", name)
    lines = ["microk8s-addons:", "  addons:"]
    for n, (version, files) in addons.items():
        lines += ['    - name: "%s"' % n, '      version: "%s"' % version,
                  '      check_status: "deployment.apps/%s"' % n]
        os.makedirs(os.path.join(d, "addons", n), exist_ok=True)
        for f, text in files.items():
            write(os.path.join(d, "addons", n, f), text)
    write(os.path.join(d, "addons.yaml"), "\n".join(lines) + "\n")


def hook(version, frm):
    return ('return { version = "%s", from = "%s", permissions = {},\n'
            '  detect = function() return "%s" end,\n'
            '  upgrade = function() end }\n' % (version, frm, frm.split()[0][2:]))


INGRESS_OLD = """apiVersion: extensions/v1beta1
kind: Ingress
metadata: {name: web, namespace: default}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: ingress, namespace: default}
"""
INGRESS_NEW = """apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web, namespace: default}
"""
# an enable template: not YAML as a whole, its placeholders filled in later
TEMPLATE = """apiVersion: v1
kind: ConfigMap
metadata: {name: t}
data: {a: {{ .value }}
---
apiVersion: policy/v1beta1
kind: PodDisruptionBudget
metadata:
  name: {{ name }
"""
OWN_CRD = """apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  scope: Namespaced
  versions: [{name: v1, served: true, storage: true}]
---
apiVersion: example.com/v1
kind: Widget
metadata: {name: w}
"""
FLOWSCHEMA = """apiVersion: flowcontrol.apiserver.k8s.io/v1beta3
kind: FlowSchema
metadata: {name: fs}
"""
# makes the cluster serve flowcontrol.apiserver.k8s.io/v1beta3 FlowSchema,
# which 1.32 removes
FLOWSCHEMA_CRD = """apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: flowschemas.flowcontrol.apiserver.k8s.io}
spec:
  group: flowcontrol.apiserver.k8s.io
  names: {kind: FlowSchema, plural: flowschemas}
  scope: Cluster
  versions: [{name: v1beta3, served: true, storage: true}]
"""
TESTS_FIXTURE = "apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata: {name: old}\n"


def layout(tmp):
    """The snap's copies (newer) and the clones (what a refresh left)."""
    snap, common = os.path.join(tmp, "snap"), os.path.join(tmp, "common")
    repo(snap, "core", {
        "dns": ("1.14.0", {"upgrade.lua": hook("1.14.3", ">=1.6.6 <1.14.3")}),
        "ingress": ("1.1.0", {"ingress.yaml": INGRESS_NEW,
                              "upgrade.lua": hook("1.1.0", ">=1.0.0 <1.1.0")}),
        "widgets": ("1.0.0", {"crd.yaml": OWN_CRD}),
        "brandnew": ("1.0.0", {}),
        "gpu": ("gpu=25.10.0/network=25.7.0", {})})
    repo(common, "core", {
        "dns": ("1.13.1", {"upgrade.lua": hook("1.10.1", ">=1.6.6 <1.10.1")}),
        "ingress": ("1.0.0", {"ingress.yaml": INGRESS_OLD,
                              "fixtures/cluster-1.0.0.yaml": TESTS_FIXTURE}),
        "widgets": ("1.0.0", {"crd.yaml": OWN_CRD}),
        "gpu": ("gpu=25.3.0/network=25.1.0", {})})
    repo(common, "community", {
        "tmpl": ("1.0.0", {"manifests/tmpl.yaml": TEMPLATE}),
        "escape": ("1.0.0", {}),
        "flow": ("2.0.0", {"fs.yaml": FLOWSCHEMA,
                           "upgrade.lua": hook("2.1.0", ">=2.0.0 <2.1.0")})})
    # a symlink out of the addon's folder is not followed
    os.symlink("/etc/passwd", os.path.join(common, "addons", "community", "addons",
                                           "escape", "passwd.yaml"))
    return snap, common


def node(name, version):
    return ("apiVersion: v1\nkind: Node\nmetadata: {name: %s}\n"
            "status: {nodeInfo: {kubeletVersion: %s}}\n" % (name, version))


def deployment(name, ns="default"):
    return ("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: %s, namespace: %s}\n"
            % (name, ns))


def run(env, *args, timeout=120):
    p = subprocess.run([UPHOOK, *args], env=env, capture_output=True, text=True,
                       timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def events(out):
    evs = []
    for line in out.splitlines():
        try:
            evs.append(json.loads(line))
        except ValueError:
            evs.append({"event": "NOT JSON", "line": line})
    return evs


def of(evs, event, **match):
    return [e for e in evs if e.get("event") == event
            and all(e.get(k) == v for k, v in match.items())]


def test_offline(tmp):
    snap, common = layout(tmp)
    env = dict(os.environ, SNAP=snap, SNAP_COMMON=common,
               SNAP_DATA=os.path.join(tmp, "data"))
    fixture = os.path.join(tmp, "cluster.yaml")
    write(fixture, "---\n".join([node("n1", "v1.31.4"), node("n2", "v1.31.4"),
                                 deployment("dns"), deployment("ingress"),
                                 deployment("flow"), FLOWSCHEMA_CRD]))
    rc, out, err = run(env, "--offline", fixture, "--output", "json", "doctor")
    evs = events(out)
    check("offline: every line of --output json is a JSON event, the last the result",
          not of(evs, "NOT JSON") and evs and evs[-1].get("event") == "result"
          and len(of(evs, "result")) == 1, out + err)
    ing = of(evs, "api", addon="ingress", kind="Ingress")
    check("an API the cluster does not serve: addon, file, kind, removal, replacement",
          len(ing) == 1 and ing[0]["repo"] == "core" and ing[0]["file"] == "ingress.yaml"
          and ing[0]["apiVersion"] == "extensions/v1beta1"
          and ing[0]["problem"] == "not_served" and ing[0]["removed_in"] == "1.22"
          and ing[0]["use"] == "networking.k8s.io/v1", out)
    check("... and what fixes it: the snap's copy no longer uses it, then its hook",
          ing and ing[0].get("fix") == "microk8s addons repo update core, then "
          "microk8s upgrade core/ingress" and ing[0].get("hook_version") == "1.1.0", ing)
    check("a fixtures/ folder (a hook's test data) is not what enable applies",
          not [e for e in of(evs, "api") if "fixtures" in e.get("file", "")], out)
    pdb = of(evs, "api", addon="tmpl")
    check("a template that is not YAML as a whole is read document by document",
          len(pdb) == 1 and pdb[0]["kind"] == "PodDisruptionBudget"
          and pdb[0]["file"] == "manifests/tmpl.yaml" and pdb[0].get("template")
          and "fix" not in pdb[0], out)
    esc = of(evs, "note", addon="escape")
    check("a YAML file that is a symlink out of the addon's folder is not read, and said",
          esc and "not read: passwd.yaml: path leaves its root" in esc[0]["message"]
          and not of(evs, "api", addon="escape"), out)
    check("an addon's own CRD serves its custom kind: not reported",
          not of(evs, "api", addon="widgets"), out)
    fs = of(evs, "api", addon="flow")
    check("served today, removed by the next minor (1.32): reported, with its hook",
          len(fs) == 1 and fs[0]["problem"] == "removed_next" and fs[0]["removed_in"] == "1.32"
          and fs[0].get("fix") == "microk8s upgrade community/flow"
          and fs[0].get("hook_version") == "2.1.0", out)
    st = of(evs, "stale_clone", repo="core")
    names = {a["name"]: a for a in st[0]["addons"]} if st else {}
    check("a clone older than the snap's copy: microk8s addons repo update core",
          len(st) == 1 and st[0]["fix"] == "microk8s addons repo update core"
          and st[0]["clone"].endswith("common/addons/core")
          and names.get("dns", {}).get("bundled") == {"addons_yaml": "1.14.0", "hook": "1.14.3"}
          and names.get("dns", {}).get("clone") == {"addons_yaml": "1.13.1", "hook": "1.10.1"}
          and names.get("brandnew", {}).get("new") is True
          and names.get("ingress", {}).get("bundled", {}).get("hook") == "1.1.0"
          and names.get("gpu", {}).get("unordered") is True
          and "widgets" not in names, st)
    check("the community clone, which the snap does not carry, is not stale",
          not of(evs, "stale_clone", repo="community"), out)
    dns = of(evs, "addon", name="dns")
    fl = of(evs, "addon", name="flow")
    check("per addon: the upgrade command for an enabled, upgradable addon only",
          fl and fl[0].get("fix") == "microk8s upgrade community/flow"
          and not of(evs, "addon", name="tmpl")[0].get("fix"), fl)
    check("per addon: both versions when the hook's differs from addons.yaml's",
          dns and dns[0].get("target") == "1.10.1"
          and dns[0].get("addons_yaml_version") == "1.13.1" and dns[0].get("hook") is True
          and not of(evs, "addon", name="widgets")[0].get("addons_yaml_version"), dns)
    res = evs[-1] if evs else {}
    check("the result: exit 1, the problems counted, the version and the next minor",
          rc == 1 and res.get("code") == 1 and res.get("problems") == 4
          and res.get("kubernetes") == "v1.31.4" and res.get("next_minor") == "1.32",
          "exit %s %s" % (rc, res))
    rc, text, err = run(env, "--offline", fixture, "doctor")
    check("the text report: one section per question, the fixes, the count",
          rc == 1 and "Kubernetes v1.31.4 on 2 nodes; the next minor is 1.32." in text
          and "core/ingress  ingress.yaml: extensions/v1beta1 Ingress (removed in 1.22; "
          "use networking.k8s.io/v1)" in text
          and "fix: microk8s addons repo update core, then microk8s upgrade core/ingress "
          "(its hook installs 1.1.0)" in text
          and "not enabled: its enable fails until its repository moves it to "
          "policy/v1" in text
          and "API versions the next minor removes:\n  community/flow  fs.yaml" in text
          and "dns: the snap's copy addons.yaml 1.14.0, hook 1.14.3; the clone "
          "addons.yaml 1.13.1, hook 1.10.1" in text
          and "brandnew: the snap's copy addons.yaml 1.0.0, no hook; not in the clone" in text
          and "4 problems to fix." in text, text + err)

    skew = os.path.join(tmp, "skew.yaml")
    write(skew, "---\n".join([node("n1", "v1.32.3"), node("n2", "v1.31.4")]))
    rc, out, _ = run(env, "--offline", skew, "--output", "json", "doctor")
    drift = of(events(out), "node_drift", setting="kubeletVersion")
    check("nodes on different Kubernetes versions: node drift, the newest decides",
          rc == 1 and drift and drift[0]["values"] == {"n1": "v1.32.3", "n2": "v1.31.4"}
          and events(out)[-1].get("next_minor") == "1.33", out)

    clean = os.path.join(tmp, "clean")
    repo(clean, "core", {"dns": ("1.0.0", {"dns.yaml": INGRESS_NEW})})
    one = os.path.join(tmp, "one.yaml")
    write(one, node("n1", "v1.32.3"))
    rc, text, err = run(dict(env, SNAP=clean, SNAP_COMMON=clean), "--offline", one,
                        "doctor")
    check("nothing found: exit 0 and says so",
          rc == 0 and "Nothing that a refresh broke." in text, text + err)


# ------------------------------------------------------------------ live

def test_live(tmp):
    fake = Fake(tmp, "--node-name", "node-a")
    if not fake.port:
        check("the fake API server started", False)
        return
    try:
        snap, common = layout(tmp)
        nodes = []
        for name, ip, dns in (("node-a", "127.0.0.2", "10.152.183.10"),
                              ("node-b", "127.0.0.3", "10.152.183.20")):
            sd = os.path.join(tmp, name)
            write(os.path.join(sd, "args", "kubelet"),
                  "--cluster-dns=%s\n--cluster-domain=cluster.local\n" % dns)
            nodes.append({"name": name, "address": ip, "snapData": sd})
        nodes.append({"name": "node-c", "address": "127.0.0.4"})    # no kubelet
        fake.call("POST", "nodes", json.dumps(nodes))
        fake.call("POST", "seed", json.dumps([
            {"apiVersion": "apps/v1", "kind": "Deployment",
             "metadata": {"name": n, "namespace": "default"},
             "spec": {"selector": {"matchLabels": {"app": n}},
                      "template": {"metadata": {"labels": {"app": n}},
                                   "spec": {"containers": [{"name": n, "image": n}]}}}}
            for n in ("dns", "ingress")]))
        env = dict(os.environ, SNAP=snap, SNAP_COMMON=common,
                   SNAP_DATA=os.path.join(tmp, "data"), HOME=os.path.join(tmp, "home"))
        rc, out, err = run(env, "--kubeconfig", os.path.join(fake.dir, "kubeconfig"),
                           "--output", "json", "doctor")
        evs = events(out)
        ing = of(evs, "api", addon="ingress", kind="Ingress")
        check("live: discovery says extensions/v1beta1 Ingress is not served",
              ing and ing[0]["problem"] == "not_served", out + err)
        check("live: a served API is not reported (apps/v1 Deployment)",
              not of(evs, "api", kind="Deployment"), out)
        drift = of(evs, "node_drift", setting="clusterDNS")
        check("live: configz differs between nodes: clusterDNS, with each node's value",
              drift and drift[0]["values"] == {"node-a": '["10.152.183.10"]',
                                               "node-b": '["10.152.183.20"]'}, out)
        check("live: settings the nodes share are not reported (clusterDomain)",
              not of(evs, "node_drift", setting="clusterDomain"), out)
        un = of(evs, "node_unread", node="node-c")
        check("live: a node whose configz cannot be read is named, with the error",
              un and "node-c" in un[0]["error"] and "connection refused" in un[0]["error"],
              out)
        res = evs[-1] if evs else {}
        check("live: exit 1, Kubernetes v1.32.3, next minor 1.33",
              rc == 1 and res.get("kubernetes") == "v1.32.3" and res.get("next_minor") == "1.33",
              "exit %s %s %s" % (rc, res, err))
    finally:
        fake.stop()
    rc, out, err = run(env, "--kubeconfig", os.path.join(fake.dir, "kubeconfig"),
                       "--timeout", "2", "--output", "json", "doctor")
    check("live: an API server that does not answer is exit 4, not every API gone",
          rc == 4 and not of(events(out), "api"), "exit %s\n%s%s" % (rc, out, err))

REPOS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data",
                     "addon-repos")
# a use of a removed built-in API, twice in one file: one finding
PDB_TWICE = """apiVersion: policy/v1beta1
kind: PodDisruptionBudget
metadata: {name: a}
---
apiVersion: policy/v1beta1
kind: PodDisruptionBudget
metadata: {name: b}
"""


def test_real_repositories(tmp):
    """core and community at the commits of tests/data/addon-repos, as the
    clones and the snap's copies of a MicroK8s 1.34 node."""
    snap, common = os.path.join(tmp, "snap"), os.path.join(tmp, "common")
    for root in (snap, common):
        for name in ("core", "community"):
            d = os.path.join(root, "addons", name)
            os.makedirs(d)
            with tarfile.open(os.path.join(REPOS, name + ".tar.gz")) as tf:
                if hasattr(tarfile, "data_filter"):   # Python >= 3.11.4
                    tf.extractall(d, filter="data")
                else:
                    tf.extractall(d)
    env = dict(os.environ, SNAP=snap, SNAP_COMMON=common,
               SNAP_DATA=os.path.join(tmp, "data"))
    fixture = os.path.join(tmp, "cluster.yaml")
    write(fixture, node("n1", "v1.34.1"))
    rc, out, err = run(env, "--offline", fixture, "--output", "json", "doctor")
    evs = events(out)
    rows = {(e.get("repo"), e.get("name")) for e in of(evs, "addon")}
    check("real repositories: doctor read both (jaeger, kata, cis-hardening, ingress listed)",
          {("community", "jaeger"), ("community", "kata"), ("core", "cis-hardening"),
           ("core", "ingress")} <= rows, out + err)
    check("real repositories: no API finding (config files, CRDs other addons install, "
          "RuntimeClass are served or no API)", not of(evs, "api"), out + err)
    check("real repositories: exit 0, nothing to fix", rc == 0, "exit %s\n%s" % (rc, err))
    write(os.path.join(common, "addons", "community", "addons", "kata", "pdb.yaml"),
          PDB_TWICE)
    rc, out, err = run(env, "--offline", fixture, "--output", "json", "doctor")
    pdb = of(events(out), "api", addon="kata", kind="PodDisruptionBudget")
    check("a removed API used by two objects of one file is one finding, counting both",
          len(pdb) == 1 and pdb[0]["objects"] == 2 and pdb[0]["file"] == "pdb.yaml"
          and rc == 1, out + err)
    rc, text, err = run(env, "--offline", fixture, "doctor")
    check("the text names the file once, with its 2 objects",
          text.count("community/kata  pdb.yaml: policy/v1beta1 PodDisruptionBudget (2 objects)")
          == 1, text + err)


def main():
    tmp = tempfile.mkdtemp(prefix="doctor_test.")
    try:
        test_offline(os.path.join(tmp, "offline"))
        test_live(os.path.join(tmp, "live"))
        test_real_repositories(os.path.join(tmp, "real"))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    finish()


if __name__ == "__main__":
    main()

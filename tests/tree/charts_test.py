#!/usr/bin/env python3
"""The upstream charts and manifests the hooks ship are what their READMEs
say they are, and Helm renders them.

Every README.md in hooks/*/charts/ and hooks/*/gateway-api/ has a table
"| File | Repository | Tag | Commit | License | ... | sha256 |" with a row
for each file it describes, and may have a table "| Dependency | Path |
Repository | Tag | Commit | License |" for the subcharts packaged inside.
Checked, with tarfile and yaml only (no network):
  - every .tgz in those folders has a row; every row names an owner/name
    repository, a tag, a 40-hex commit and a license, and its file has
    the sha256 the row pins;
  - a packaged chart's Chart.yaml (read from the .tgz) has the name and
    version its file name and tag give, the appVersion its row gives, and
    the repository's LICENSE inside when the row says so;
  - each dependency's Chart.yaml sits at its path inside its package with
    the version of its tag;
  - a Gateway API install's CRDs all carry its tag as bundle-version;
  - with build/helm/v3/helm (make helm): `helm template` renders each
    chart with its default values and with the values `microk8s enable`
    gives it, and the render holds what enable's users rely on. Without
    that Helm the render checks are skipped with a message; under
    CI=true its absence is a failure.
Prints one "ok"/"not ok" line per check and "N passed, N failed".
"""
import base64
import glob
import hashlib
import os
import re
import shutil
import subprocess
import tarfile
import tempfile

import yaml

from treecheck import ROOT, check, finish



class LOADER(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
    """The safe loader, reading a plain `=` (a CRD's enum of operators)
    as the string it is for Kubernetes, not YAML 1.1's value key."""


LOADER.add_constructor("tag:yaml.org,2002:value",
                       lambda loader, node: loader.construct_scalar(node))
HELM = os.path.join(ROOT, "build", "helm", "v3", "helm")
HEX40 = re.compile(r"^[0-9a-f]{40}$")
HEX64 = re.compile(r"^[0-9a-f]{64}$")
REPO = re.compile(r"^[\w.-]+/[\w.-]+$")


def tables(path):
    """The Markdown tables of a file, each a list of {header: cell}."""
    out, head, rows = [], None, None
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line.startswith("|"):
                head = None
                continue
            cells = [c.strip().strip("`") for c in line.strip("|").split("|")]
            if head is None:
                head, rows = cells, []
                out.append(rows)
            elif not set(line) <= set("|-: "):
                rows.append(dict(zip(head, cells)))
    return out


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def chart_yaml(tgz, inner):
    """The parsed <inner>/Chart.yaml of a packaged chart, or None."""
    with tarfile.open(tgz, "r:gz") as t:
        try:
            f = t.extractfile(inner + "/Chart.yaml")
        except KeyError:
            return None
        return yaml.load(f.read(), Loader=LOADER) if f else None


def tgz_has(tgz, member, text):
    with tarfile.open(tgz, "r:gz") as t:
        try:
            f = t.extractfile(member)
        except KeyError:
            return False
        return f is not None and text in f.read().decode("utf-8", "replace")


def tag_versions(tag, name):
    """The chart versions a release tag can stand for: the tag itself
    (cert-manager's v1.20.2), without its v (traefik's v41.3.0), or
    without its chart-name prefix (kube-prometheus-stack-77.6.2)."""
    out = {tag}
    if tag.startswith(name + "-"):
        out.add(tag[len(name) + 1:])
    if tag.startswith("v"):
        out.add(tag[1:])
    return out


def check_row(folder, row, seen):
    rel = os.path.relpath(os.path.join(folder, row.get("File", "")), ROOT)
    what = "%s (%s@%s)" % (rel, row.get("Repository"), row.get("Tag"))
    problems = []
    for key, pattern in (("Repository", REPO), ("Commit", HEX40),
                         ("sha256", HEX64)):
        if not pattern.match(row.get(key, "")):
            problems.append("%s is %r" % (key, row.get(key)))
    if not row.get("Tag") or not row.get("License"):
        problems.append("no tag or no license")
    path = os.path.join(folder, row.get("File", ""))
    if not os.path.isfile(path):
        check(False, what + " exists", problems + ["no file " + rel])
        return
    seen.add(os.path.abspath(path))
    if sha256(path) != row.get("sha256"):
        problems.append("sha256 %s, the README pins %s"
                        % (sha256(path), row.get("sha256")))
    if path.endswith(".tgz"):
        problems += chart_problems(path, row)
    else:
        problems += manifest_problems(path, row)
    check(not problems, what + " is what its README says", problems)


def chart_problems(path, row):
    base = os.path.basename(path)
    name = re.sub(r"-v?\d[^-]*\.tgz$", "", base)
    meta = chart_yaml(path, name)
    if meta is None:
        return ["no %s/Chart.yaml inside" % name]
    out = []
    version, app = str(meta.get("version")), str(meta.get("appVersion"))
    if meta.get("name") != name or base != "%s-%s.tgz" % (name, version):
        out.append("Chart.yaml says %s %s" % (meta.get("name"), version))
    if version not in tag_versions(row["Tag"], name):
        out.append("version %s is not tag %s" % (version, row["Tag"]))
    if app != row.get("appVersion"):
        out.append("appVersion %s, the README says %s"
                   % (app, row.get("appVersion")))
    if "LICENSE inside" in row["License"] and \
            not tgz_has(path, name + "/LICENSE", "Apache License"):
        out.append("no %s/LICENSE inside" % name)
    return out


def manifest_problems(path, row):
    with open(path, encoding="utf-8") as f:
        docs = [d for d in yaml.load_all(f, Loader=LOADER) if d]
    crds = [d for d in docs if d.get("kind") == "CustomResourceDefinition"]
    bad = [d["metadata"]["name"] for d in crds
           if d["metadata"].get("annotations", {}).get(
               "gateway.networking.k8s.io/bundle-version") != row["Tag"]]
    out = ["%s: bundle-version is not %s" % (n, row["Tag"]) for n in bad]
    if not crds:
        out.append("no CustomResourceDefinition in it")
    return out


def check_dependency(folder, row):
    pkg, _, inner = row.get("Path", "").partition(":")
    what = "%s:%s is %s@%s" % (pkg, inner, row.get("Repository"),
                               row.get("Tag"))
    problems = []
    if not REPO.match(row.get("Repository", "")) or \
            not HEX40.match(row.get("Commit", "")) or not row.get("License"):
        problems.append("repository, commit or license missing")
    path = os.path.join(folder, pkg)
    meta = chart_yaml(path, inner) if os.path.isfile(path) else None
    if meta is None:
        problems.append("no %s/Chart.yaml in %s" % (inner, pkg))
    elif str(meta.get("version")) not in tag_versions(row.get("Tag", ""),
                                                      meta.get("name")):
        problems.append("version %s is not tag %s"
                        % (meta.get("version"), row.get("Tag")))
    check(not problems, what, problems)


def check_readmes():
    folders = sorted(glob.glob(os.path.join(ROOT, "hooks", "*", "charts"))
                     + glob.glob(os.path.join(ROOT, "hooks", "*",
                                              "gateway-api")))
    for folder in folders:
        readme = os.path.join(folder, "README.md")
        rel = os.path.relpath(folder, ROOT)
        if not os.path.isfile(readme):
            check(False, rel + "/README.md exists", [])
            continue
        seen, rows = set(), 0
        for table in tables(readme):
            for row in table:
                if "File" in row and "sha256" in row:
                    rows += 1
                    check_row(folder, row, seen)
                elif "Dependency" in row and "Path" in row:
                    check_dependency(folder, row)
        shipped = {os.path.abspath(p) for p in
                   glob.glob(os.path.join(folder, "*.tgz"))}
        missing = sorted(os.path.relpath(p, ROOT) for p in shipped - seen)
        check(rows and not missing, rel + "/README.md has a row for every "
              "file shipped (%d rows)" % rows, missing)


# --- helm template ---------------------------------------------------------

INGRESS_VALUES = os.path.join(ROOT, "hooks", "ingress",
                              "values-f689811.yaml")
# canonical/microk8s-core-addons@f68981151ad19ec08f6d2bce6538cc80bdddbf8b:
# addons/observability/enable, with one node at 10.0.0.1
KPS_SET = [
    "--set", "kubeControllerManager.endpoints={10.0.0.1}",
    "--set", "kubeScheduler.endpoints={10.0.0.1}",
    "--set", "grafana.additionalDataSources[0].name=loki,"
    "grafana.additionalDataSources[0].type=loki,"
    "grafana.additionalDataSources[0].url="
    "http://loki.observability.svc.cluster.local:3100",
    "--set", "grafana.additionalDataSources[1].name=tempo,"
    "grafana.additionalDataSources[1].type=tempo,"
    "grafana.additionalDataSources[1].url="
    "http://tempo.observability.svc.cluster.local:3100"]


def renamed_ingress_values(tmp):
    """enable's values with the rename chart 41 needs
    (providers.kubernetesIngressNginx -> kubernetesIngressNGINX)."""
    with open(INGRESS_VALUES, encoding="utf-8") as f:
        values = yaml.safe_load(f)
    providers = values["providers"]
    providers["kubernetesIngressNGINX"] = \
        providers.pop("kubernetesIngressNginx")
    path = os.path.join(tmp, "traefik-values-41.yaml")
    with open(path, "w", encoding="utf-8") as f:
        yaml.safe_dump(values, f)
    return path


def helm(tmp, args):
    """Run Helm with a cleared environment and private folders."""
    env = {"PATH": "/usr/bin:/bin", "HOME": tmp,
           "HELM_CACHE_HOME": os.path.join(tmp, "cache"),
           "HELM_CONFIG_HOME": os.path.join(tmp, "config"),
           "HELM_DATA_HOME": os.path.join(tmp, "data")}
    try:
        p = subprocess.run([HELM] + args, env=env, capture_output=True,
                           timeout=600)
    except subprocess.TimeoutExpired:
        return 124, [], "timed out after 600 s"
    docs, err = [], p.stderr.decode("utf-8", "replace")
    if p.returncode == 0:
        try:
            docs = [d for d in yaml.load_all(p.stdout, Loader=LOADER) if d]
        except yaml.YAMLError as e:
            return 1, [], "the render is not YAML: %s" % e
    return p.returncode, docs, err


def find(docs, kind, name=None):
    return [d for d in docs if d.get("kind") == kind and
            (name is None or d["metadata"].get("name") == name)]


def host_ports(docs, kind):
    ports = set()
    for d in find(docs, kind):
        for c in d["spec"]["template"]["spec"]["containers"]:
            ports |= {p.get("hostPort") for p in c.get("ports", [])}
    return ports


def expect_traefik_enable(docs):
    out = []
    if not {80, 443} <= host_ports(docs, "DaemonSet"):
        out.append("no DaemonSet binding hostPorts 80 and 443")
    classes = {d["metadata"]["name"] for d in find(docs, "IngressClass")}
    if classes != {"public", "nginx", "traefik"}:
        out.append("IngressClasses %s" % sorted(classes))
    if find(docs, "CustomResourceDefinition"):
        out.append("CRDs rendered under --skip-crds")
    return out


def expect_crds(count, keep=False):
    def expect(docs):
        crds = find(docs, "CustomResourceDefinition")
        out = [] if len(crds) == count else \
            ["%d CRDs, expected %d" % (len(crds), count)]
        if keep:
            out += ["%s not kept on uninstall" % d["metadata"]["name"]
                    for d in crds if d["metadata"].get("annotations", {})
                    .get("helm.sh/resource-policy") != "keep"]
        return out
    return expect


def expect_kps_enable(docs):
    out = expect_crds(10)(docs)
    eps = find(docs, "Endpoints")
    if len(eps) != 2 or any(d["subsets"][0]["addresses"][0]["ip"] !=
                            "10.0.0.1" for d in eps):
        out.append("controller-manager and scheduler Endpoints not 10.0.0.1")
    text = yaml.safe_dump([d for d in docs if d.get("kind") in
                           ("ConfigMap", "Secret")])
    for url in ("http://loki.observability.svc.cluster.local:3100",
                "http://tempo.observability.svc.cluster.local:3100"):
        if url not in text:
            out.append("no Grafana datasource " + url)
    return out


def expect_workloads(*pairs):
    def expect(docs):
        return ["no %s %s" % (k, n) for k, n in pairs if not find(docs, k, n)]
    return expect


def grafana_password(docs):
    for d in find(docs, "Secret", "kube-prom-stack-grafana"):
        return base64.b64decode(d["data"]["admin-password"]).decode()
    return None


def expect_cert_manager_enable(docs):
    return expect_crds(6, keep=True)(docs) + expect_workloads(
        ("Deployment", "cert-manager"),
        ("Deployment", "cert-manager-cainjector"),
        ("Deployment", "cert-manager-webhook"))(docs)


def expect_kps_77_enable(docs):
    """enable says "user/pass: admin/prom-operator"."""
    out = expect_kps_enable(docs)
    if grafana_password(docs) != "prom-operator":
        out.append("Grafana's admin password is not prom-operator")
    return out


def expect_kps_88_enable(docs):
    """From 79 on the chart generates the password (UPGRADE.md): an
    upgrade that applies the render as it is changes the user's."""
    out = expect_kps_enable(docs)
    if grafana_password(docs) in (None, "prom-operator"):
        out.append("Grafana's admin password is %r, not generated"
                   % grafana_password(docs))
    return out


def renders(tmp):
    """(what, chart, release, namespace, helm template arguments,
    whether it succeeds, check of the objects or expected error)."""
    ing, cm, obs = ("hooks/%s/charts/" % a for a in
                    ("ingress", "cert-manager", "observability"))
    out = []
    for v in ("39.0.8", "41.3.0"):
        out.append(("traefik %s, default values" % v, ing +
                    "traefik-%s.tgz" % v, "traefik", "ingress",
                    ["--include-crds"], True, None))
    out += [
        ("traefik 39.0.8, enable's values", ing + "traefik-39.0.8.tgz",
         "traefik", "ingress", ["--skip-crds", "-f", INGRESS_VALUES], True,
         expect_traefik_enable),
        ("traefik 41.3.0 refuses enable's values unmigrated",
         ing + "traefik-41.3.0.tgz", "traefik", "ingress",
         ["-f", INGRESS_VALUES], False,
         "Additional property kubernetesIngressNginx is not allowed"),
        ("traefik 41.3.0, enable's values renamed", ing +
         "traefik-41.3.0.tgz", "traefik", "ingress",
         ["--skip-crds", "-f", renamed_ingress_values(tmp)],
         True, expect_traefik_enable),
    ]
    for v in ("v1.17.1", "v1.20.2"):
        chart = cm + "cert-manager-%s.tgz" % v
        out += [
            ("cert-manager %s, default values (no CRDs)" % v, chart,
             "cert-manager", "cert-manager", [], True, expect_crds(0)),
            ("cert-manager %s, enable's crds.enabled=true" % v, chart,
             "cert-manager", "cert-manager", ["--set", "crds.enabled=true"],
             True, expect_cert_manager_enable)]
    for v, expect in (("77.6.2", expect_kps_77_enable),
                      ("88.5.3", expect_kps_88_enable)):
        chart = obs + "kube-prometheus-stack-%s.tgz" % v
        out += [
            ("kube-prometheus-stack %s, default values" % v, chart,
             "kube-prom-stack", "observability", ["--include-crds"], True,
             expect_crds(10)),
            ("kube-prometheus-stack %s, enable's values" % v, chart,
             "kube-prom-stack", "observability", ["--include-crds"] +
             KPS_SET, True, expect)]
    loki = expect_workloads(("StatefulSet", "loki"),
                            ("DaemonSet", "loki-promtail"))
    out += [
        ("loki-stack 2.10.3, default values", obs + "loki-stack-2.10.3.tgz",
         "loki", "observability", [], True, loki),
        ("loki-stack 2.10.3, enable's values", obs + "loki-stack-2.10.3.tgz",
         "loki", "observability",
         ["--set", "grafana.sidecar.datasources.enabled=false"], True,
         loki),
        ("tempo 1.24.1, default values (enable's)", obs + "tempo-1.24.1.tgz",
         "tempo", "observability", [], True,
         expect_workloads(("StatefulSet", "tempo")))]
    return out


def check_renders():
    if not os.access(HELM, os.X_OK):
        msg = "build/helm/v3/helm is absent (make helm)"
        if os.environ.get("CI") == "true":
            check(False, "helm template checks need Helm", [msg])
        else:
            print("skip - helm template checks: " + msg)
        return
    tmp = tempfile.mkdtemp(prefix="charts_test.")
    try:
        for what, chart, rel, ns, args, success, expect in renders(tmp):
            rc, docs, err = helm(tmp, ["template", rel, os.path.join(
                ROOT, chart), "--namespace", ns, "--kube-version",
                "v1.32.3"] + args)
            problems = []
            if success and rc != 0:
                problems = err.strip().split("\n")
            elif success and not docs:
                problems = ["rendered nothing"]
            elif success and expect:
                problems = expect(docs)
            elif not success and (rc == 0 or expect not in err):
                problems = ["exit %d, stderr: %s" % (rc, err.strip())]
            check(not problems, "helm template: " + what, problems)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


check_readmes()
check_renders()
finish()

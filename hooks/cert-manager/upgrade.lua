--- cert-manager -> the jetstack chart v1.20.2, as upstream's enable
--- installs it (canonical/microk8s-core-addons@f6898115:
--- addons/cert-manager/enable: `helm upgrade --install cert-manager
--- cert-manager --repo https://charts.jetstack.io --version v1.20.2
--- --namespace cert-manager --set crds.enabled=true`), from either:
--- - a manifest install, v1.8.0 .. v1.14.5 (MicroK8s before 1.33; the
---   last manifest, v1.14.5, is cert-manager.yaml here): the release is
---   installed over it and every object the chart renders adopts the live
---   one (helm.upgrade sets Helm's ownership marks). v1.8 .. v1.11 name
---   the controller's only container `cert-manager`, the chart names it
---   `cert-manager-controller`; `containers` is a list keyed by name, so
---   applying would run both: a Deployment whose containers the chart
---   does not name is deleted first and created afresh (a short restart
---   of that component; its selector is unchanged). What the manifest
---   had and the chart does not render (the v1.8 ConfigMap
---   cert-manager-webhook) is pruned: objects of the manifest's kinds
---   labelled app.kubernetes.io/instance=cert-manager that this run did
---   not apply (never Secrets, CRDs or the Namespace).
--- - a Helm release of the chart (v1.17.1, MicroK8s 1.33's first; v1.18.2
---   and v1.19.1 followed): helm.upgrade to v1.20.2 with the user's values
---   kept (`installCRDs`, the chart's old name, moved to `crds.enabled`).
--- Either way `crds.enabled=true`: the six CRDs are templates of the
--- chart (annotated helm.sh/resource-policy: keep), applied first and
--- waited Established. Then the three Deployments' rollouts, in order:
--- cainjector, the controller, the webhook. Every Certificate, Issuer,
--- ClusterIssuer, CertificateRequest, Order, Challenge and Secret stays
--- as it is (the CRDs keep serving cert-manager.io/v1 and
--- acme.cert-manager.io/v1: the stored objects need no conversion).
local manifest = require "manifest"
local values = require "values"

local NS = "cert-manager"
local RELEASE = "cert-manager"
local CHART = "charts/cert-manager-v1.20.2.tgz"
local CHART_VERSION = "v1.20.2"     -- what upstream's enable installs today
local CHART_REPO = "https://charts.jetstack.io"
local DEPLOYMENTS = { "cert-manager-cainjector", "cert-manager",
                      "cert-manager-webhook" }
--- What prune looks at after a manifest install: the manifest's kinds
--- (never a Secret, CRD or the Namespace), where the manifest puts them.
local PRUNE = {
  { namespace = NS, kinds = { "ConfigMap", "ServiceAccount", "Service",
    "Deployment", "rbac.authorization.k8s.io/v1/Role",
    "rbac.authorization.k8s.io/v1/RoleBinding" } },
  { namespace = "kube-system", kinds = { "rbac.authorization.k8s.io/v1/Role",
    "rbac.authorization.k8s.io/v1/RoleBinding" } },
  { kinds = { "rbac.authorization.k8s.io/v1/ClusterRole",
    "rbac.authorization.k8s.io/v1/ClusterRoleBinding",
    "admissionregistration.k8s.io/v1/MutatingWebhookConfiguration",
    "admissionregistration.k8s.io/v1/ValidatingWebhookConfiguration" } },
}

--- The user-data kinds that must survive, counted for the check.
local USER_KINDS = { "cert-manager.io/v1/Certificate", "cert-manager.io/v1/Issuer",
                     "cert-manager.io/v1/ClusterIssuer" }

--- enable's -V: the chart this hook ships, with or without its `v`.
local function check_version(v)
  if v == CHART_VERSION or "v" .. v == CHART_VERSION then return true end
  return false, string.format("-V %s: this upgrade installs the chart it "
    .. "ships, cert-manager %s (enable's default); another version is "
    .. "microk8s enable cert-manager -V %s's to install", v, CHART_VERSION, v)
end

--- enable's -r: the chart comes from the hook's folder (sha256 pinned in
--- charts/README.md), never a repository; only enable's default is taken.
local function check_repo(v)
  if v == CHART_REPO or v == CHART_REPO .. "/" then return true end
  return false, string.format("-r %s: this upgrade installs the chart it "
    .. "ships (cert-manager %s from %s); a chart from another repository "
    .. "is microk8s enable cert-manager -r %s's to install", v,
    CHART_VERSION, CHART_REPO, v)
end

local function container_names(d)
  local out = {}
  local spec = d and d.spec and d.spec.template and d.spec.template.spec
  for _, c in ipairs(spec and spec.containers or {}) do out[#out + 1] = c.name end
  return out
end

--- Names of live containers the new Deployment does not have.
local function stale_containers(live, new)
  local want, stale = {}, {}
  for _, n in ipairs(container_names(new)) do want[n] = true end
  for _, n in ipairs(container_names(live)) do
    if not want[n] then stale[#stale + 1] = n end
  end
  return stale
end

local function count_user_objects()
  local n = 0
  for _, k in ipairs(USER_KINDS) do
    local ok, list = pcall(kube.list, k)
    if ok then n = n + #list end
  end
  return n
end

--- The release's values (the user's, kept), with what enable sets.
local function chart_values(rel)
  local v = rel and rel.values or {}
  values.rename(v, "installCRDs", "crds.enabled")
  v.crds = type(v.crds) == "table" and v.crds or {}
  v.crds.enabled = true
  return v
end

--- A manifest install: the Deployments whose containers the chart
--- renames are deleted before the chart's are applied.
local function recreate_renamed(v)
  local rendered = {}
  for _, o in ipairs(helm.render { release = RELEASE, namespace = NS,
      chart = CHART, values = v }) do
    if o.kind == "Deployment" then rendered[o.metadata.name] = o end
  end
  for _, name in ipairs(DEPLOYMENTS) do
    local live = kube.get("Deployment", name, NS)
    local stale = live and stale_containers(live, rendered[name]) or {}
    if #stale > 0 then
      log.info("Deployment %s: container %s is %s in the chart: recreating "
        .. "the Deployment", name, table.concat(stale, ", "),
        table.concat(container_names(rendered[name]), ", "))
      kube.delete("Deployment", name, NS)
    end
  end
end

return {
  uphook = ">=0.2",   -- the hook API it is written for (docs/reference.md)
  version = "1.20.2",
  from = ">=1.8.0 <1.20.2",
  description = "cert-manager: the jetstack chart " .. CHART_VERSION
    .. " (crds.enabled=true) from a manifest install (adopted) or an "
    .. "older chart; CRDs first, rollouts in order, user certificates "
    .. "untouched",
  -- kube:privileged: its ClusterRoles read secrets cluster-wide and write
  -- webhook configurations (lua/engine/podsecurity.lua, docs/security.md)
  permissions = { "kube:cert-manager", "kube:kube-system", "kube:cluster",
    "kube:privileged" },
  -- enable's options (addons/cert-manager/enable): -V VERSION, -r REPO
  params = {
    ["chart-version"] = { short = "V", default = CHART_VERSION,
      check = check_version,
      description = "enable's chart version: " .. CHART_VERSION
        .. ", the chart this upgrade ships" },
    repository = { short = "r", default = CHART_REPO, check = check_repo,
      description = "enable's chart repository: " .. CHART_REPO
        .. ", where the shipped chart comes from" },
  },

  detect = function()
    local rel = helm.release(RELEASE, NS)
    if rel then
      if rel.chart.name ~= "cert-manager" then
        error(string.format("helm release %s in %s is of chart %s, not "
          .. "cert-manager", RELEASE, NS, tostring(rel.chart.name)), 0)
      end
      return (rel.chart.version:gsub("^v", ""))
    end
    local d = kube.get("Deployment", "cert-manager", NS)
    if not d then return nil end
    local tag = manifest.image_tag(d)
    return tag and tag:match("^v?(%d+%.%d+%.%d+)$") or nil
  end,

  check = function()
    local rel = helm.release(RELEASE, NS)
    log.info("from %s; %d Certificates, Issuers and ClusterIssuers will "
      .. "be kept as they are", rel and ("the Helm release "
        .. rel.chart.version .. " revision " .. rel.revision)
        or "the manifest install (adopted into the release)",
      count_user_objects())
  end,

  upgrade = function()
    local rel = helm.release(RELEASE, NS)
    local v = chart_values(rel)
    if not rel then recreate_renamed(v) end
    log.step("helm release %s: chart %s", RELEASE, CHART_VERSION)
    local out = helm.upgrade { release = RELEASE, namespace = NS,
      chart = CHART, values = v, install = rel == nil, timeout = 300 }
    log.info("release %s revision %d %s", out.name, out.revision or 0,
      out.status)
    for _, name in ipairs(DEPLOYMENTS) do
      log.step("Deployment %s", name)
      kube.rollout("Deployment", name, NS, { timeout = 300 })
    end
    if not rel then
      log.step("what the manifest had and the chart does not render")
      for _, p in ipairs(PRUNE) do
        kube.prune { kinds = p.kinds, namespace = p.namespace,
          labels = { ["app.kubernetes.io/instance"] = RELEASE } }
      end
    end
  end,

  verify = function(ctx)
    if ctx.plan then return end
    local rel = helm.release(RELEASE, NS)
    if not (rel and rel.chart.version == CHART_VERSION) then
      error(string.format("helm release %s/%s is at %s, not %s", NS,
        RELEASE, rel and rel.chart.version or "(none)", CHART_VERSION), 0)
    end
    for _, name in ipairs(DEPLOYMENTS) do
      local d = kube.get("Deployment", name, NS)
      local names = container_names(d)
      local tag = #names == 1 and manifest.image_tag(d, names[1]) or nil
      if tag ~= CHART_VERSION then
        error(string.format("Deployment %s/%s runs containers {%s} (%s), "
          .. "not one at %s", NS, name, table.concat(names, ", "),
          tostring(tag), CHART_VERSION), 0)
      end
    end
  end,
}

--- cert-manager v1.8.x .. v1.14.x -> v1.14.5.
---
--- Reuses the enable manifest (cert-manager.yaml, 46 documents, applied
--- as enable applies it: no placeholders), in the order the CRDs need:
--- 1. the six CRDs, then wait until each is Established;
--- 2. everything else, in the file's order;
--- 3. the three Deployments, one at a time, each followed by its
---    rollout, in order: cainjector (it injects the CA the webhook
---    configurations need), the controller (cert-manager), the webhook.
---    v1.8's pod templates name their only container `cert-manager`;
---    v1.12+ name it after the component. `containers` is a list keyed
---    by name, so applying would add the new container next to the old
---    one (two cert-managers in one pod, the old image still running):
---    a Deployment whose containers the new manifest does not name is
---    deleted first and created afresh (a short restart of that
---    component; its selector is unchanged, so nothing else notices).
--- Nothing else is touched: every Certificate, Issuer, ClusterIssuer,
--- CertificateRequest, Order, Challenge and Secret stays as it is (the
--- CRDs keep serving cert-manager.io/v1 and acme.cert-manager.io/v1, so
--- the stored objects need no conversion). What v1.14.5 no longer ships
--- (the v1.8 ConfigMap cert-manager-webhook) is pruned: objects of the
--- manifest's kinds labelled app.kubernetes.io/instance=cert-manager that
--- this run did not apply (never Secrets, CRDs or the Namespace).
---
--- After that: Helm. Upstream moved the addon to the jetstack Helm chart
--- in MicroK8s 1.33 (cert-manager v1.17.1+; HEAD's enable runs `helm
--- upgrade --install cert-manager cert-manager --repo
--- https://charts.jetstack.io --version v1.20.2 --namespace cert-manager
--- --set crds.enabled=true`, canonical/microk8s-core-addons@f6898115:
--- addons/cert-manager/enable). v1.14.5 is the last manifest upstream
--- shipped, so every object the hook applies (CRDs included; not the
--- Namespace, which the chart does not render) is marked for Helm to
--- adopt: label app.kubernetes.io/managed-by=Helm, annotations
--- meta.helm.sh/release-name=cert-manager and
--- meta.helm.sh/release-namespace=cert-manager. The next `microk8s
--- enable cert-manager` then takes the objects over instead of failing
--- on "invalid ownership metadata".
--- A cert-manager Helm already installed (its release Secret
--- sh.helm.release.v1.cert-manager.v*, or Helm's label without uphook's
--- stamp) is not this hook's: it stops with exit 4 and says what to run.
local manifest = require "manifest"

local NS = "cert-manager"
local DEPLOYMENTS = { "cert-manager-cainjector", "cert-manager",
                      "cert-manager-webhook" }

local RELEASE = "cert-manager"
local CHART_REPO = "https://charts.jetstack.io"
local CHART_VERSION = "v1.20.2"     -- what upstream's enable installs today
local HELM_UPGRADE = "microk8s helm3 upgrade cert-manager cert-manager "
  .. "--repo " .. CHART_REPO .. " --version " .. CHART_VERSION
  .. " --namespace cert-manager --set crds.enabled=true"
local NEXT = "microk8s enable cert-manager (helm upgrade --install "
  .. "cert-manager " .. CHART_VERSION .. ", which adopts the marked objects)"
local ADOPT_LABELS = { ["app.kubernetes.io/managed-by"] = "Helm" }
local ADOPT_ANNOTATIONS = { ["meta.helm.sh/release-name"] = RELEASE,
                            ["meta.helm.sh/release-namespace"] = NS }
--- What prune looks at: the manifest's kinds (never a Secret, CRD or
--- the Namespace), where the manifest puts them.
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

--- Why this cert-manager is Helm's, or nil: its release Secret, or
--- Helm's label on the controller without the stamp uphook's marks carry.
local function helm_release()
  local releases = {}
  for _, s in ipairs(kube.list("Secret", { namespace = NS,
      labels = { owner = "helm", name = RELEASE } })) do
    releases[#releases + 1] = s.metadata.name
  end
  if #releases > 0 then
    table.sort(releases)
    return "its Helm release Secret " .. NS .. "/" .. releases[#releases]
      .. " exists"
  end
  local d = kube.get("Deployment", "cert-manager", NS)
  local md = d and d.metadata or {}
  local labels, ann = md.labels or {}, md.annotations or {}
  if labels["app.kubernetes.io/managed-by"] == "Helm"
      and not ann["addon.microk8s.io/version"] then
    return "its Deployment " .. NS .. "/cert-manager is labelled "
      .. "app.kubernetes.io/managed-by=Helm (release "
      .. tostring(ann["meta.helm.sh/release-name"]) .. ")"
  end
end

local function refuse_helm()
  local why = helm_release()
  if why then
    error("cert-manager was installed with Helm (" .. why .. "), as "
      .. "microk8s enable cert-manager does since MicroK8s 1.33: its "
      .. "upgrade is Helm's, not this hook's; run " .. HELM_UPGRADE
      .. " (or microk8s disable cert-manager, then microk8s enable "
      .. "cert-manager)", 0)
  end
end

--- The marks Helm's adoption checks, on an object to apply.
local function mark(o)
  if o.kind == "Namespace" then return o end
  local md = o.metadata
  md.labels = md.labels or {}
  md.annotations = md.annotations or {}
  for k, v in pairs(ADOPT_LABELS) do md.labels[k] = v end
  for k, v in pairs(ADOPT_ANNOTATIONS) do md.annotations[k] = v end
  return o
end

--- -r/-V are the Helm chart's: this hook installs the manifest.
local function helm_only(flag)
  return function(v)
    return false, string.format("%s %s names a Helm chart, which "
      .. "microk8s enable cert-manager installs; this upgrade installs the "
      .. "last manifest (v1.14.5) and marks it for Helm: run it without "
      .. "%s, then microk8s enable cert-manager %s %s", flag, v, flag,
      flag, v)
  end
end

--- The user-data kinds that must survive, for verify.
local USER_KINDS = { "cert-manager.io/v1/Certificate", "cert-manager.io/v1/Issuer",
                     "cert-manager.io/v1/ClusterIssuer" }

--- CRDs, the three Deployments by name, and everything else (in order).
local function split(objs)
  local crds, deps, rest = {}, {}, {}
  for _, o in ipairs(objs) do
    if o.kind == "CustomResourceDefinition" then crds[#crds + 1] = o
    elseif o.kind == "Deployment" then deps[o.metadata.name] = o
    else rest[#rest + 1] = o end
  end
  return crds, deps, rest
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

return {
  version = "1.14.5",
  from = ">=1.8.0 <1.14.5",
  description = "cert-manager v1.14.5, the last manifest (CRDs first, "
    .. "rollouts in order, user certificates untouched), marked for Helm to "
    .. "adopt; next: " .. NEXT,
  permissions = { "kube:cert-manager", "kube:kube-system", "kube:cluster" },
  -- enable's -r/-V (Helm chart repository and version): refused, clearly
  params = {
    repository = { short = "r", check = helm_only("-r"),
      description = "enable's Helm chart repository: not used by this "
        .. "upgrade (refused)" },
    ["chart-version"] = { short = "V", check = helm_only("-V"),
      description = "enable's Helm chart version: not used by this "
        .. "upgrade (refused)" },
  },

  detect = function(ctx)
    refuse_helm()     -- a Helm release's version is not ours to read
    local d = kube.get("Deployment", "cert-manager", NS)
    if not d then return nil end
    local tag = manifest.image_tag(d)
    return tag and tag:match("^v?(%d+%.%d+%.%d+)$") or nil
  end,

  check = function(ctx)
    refuse_helm()
    log.info("%d Certificates, Issuers and ClusterIssuers will be kept as they are",
      count_user_objects())
  end,

  upgrade = function(ctx)
    local objs = manifest.load("cert-manager.yaml")
    for _, o in ipairs(objs) do mark(o) end
    local crds, deps, rest = split(objs)
    for _, name in ipairs(DEPLOYMENTS) do
      if not deps[name] then
        error("cert-manager.yaml has no Deployment " .. name, 0)
      end
    end

    log.step("%d CRDs", #crds)
    kube.apply(crds)
    for _, c in ipairs(crds) do
      kube.wait("CustomResourceDefinition", c.metadata.name, nil,
        { condition = "Established", timeout = 60 })
    end

    log.step("cert-manager %s: %d objects", ctx.to, #rest)
    kube.apply(rest)

    for _, name in ipairs(DEPLOYMENTS) do
      log.step("Deployment %s", name)
      local stale = stale_containers(kube.get("Deployment", name, NS), deps[name])
      if #stale > 0 then
        log.info("container %s was renamed to %s: recreating the Deployment",
          table.concat(stale, ", "), table.concat(container_names(deps[name]), ", "))
        kube.delete("Deployment", name, NS)
      end
      kube.apply(deps[name])
      kube.rollout("Deployment", name, NS, { timeout = 300 })
    end

    log.step("what v%s no longer ships", ctx.to)
    for _, p in ipairs(PRUNE) do
      kube.prune { kinds = p.kinds, namespace = p.namespace,
        labels = { ["app.kubernetes.io/instance"] = RELEASE } }
    end
    log.warn("every cert-manager object is marked for Helm (release %s in "
      .. "namespace %s); next: %s", RELEASE, NS, NEXT)
  end,

  verify = function(ctx)
    if ctx.plan then return end
    for _, name in ipairs(DEPLOYMENTS) do
      local d = kube.get("Deployment", name, NS)
      local names = container_names(d)
      local tag = #names == 1 and manifest.image_tag(d, names[1]) or nil
      if tag ~= "v" .. ctx.to then
        error(string.format("Deployment %s/%s runs containers {%s} (%s), "
          .. "not one at v%s", NS, name, table.concat(names, ", "),
          tostring(tag), ctx.to), 0)
      end
    end
  end,
}

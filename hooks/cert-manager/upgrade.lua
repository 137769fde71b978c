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
--- the stored objects need no conversion). Objects v1.14.5 no longer
--- ships (the v1.8 ConfigMap cert-manager-webhook) are left in place.
local manifest = require "manifest"

local NS = "cert-manager"
local DEPLOYMENTS = { "cert-manager-cainjector", "cert-manager",
                      "cert-manager-webhook" }

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
  description = "cert-manager v1.14.5 (CRDs first, rollouts in order, user certificates untouched)",
  permissions = { "kube:cert-manager", "kube:kube-system", "kube:cluster" },
  params = {},

  detect = function(ctx)
    local d = kube.get("Deployment", "cert-manager", NS)
    if not d then return nil end
    local tag = manifest.image_tag(d)
    return tag and tag:match("^v?(%d+%.%d+%.%d+)$") or nil
  end,

  check = function(ctx)
    log.info("%d Certificates, Issuers and ClusterIssuers will be kept as they are",
      count_user_objects())
  end,

  upgrade = function(ctx)
    local crds, deps, rest = split(manifest.load("cert-manager.yaml"))
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

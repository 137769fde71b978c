--- MetalLB v0.9.x (MicroK8s 1.24) / v0.13.x / v0.14.x -> v0.15.3.
---
--- Parameter: the address ranges, positional as for enable
--- (`uphook upgrade metallb 10.64.140.43-10.64.140.49,fd00::/120`, or
--- `metallb:RANGES`), IPv4 and IPv6, `FIRST-LAST` or CIDR. Without
--- them the ranges of the live `default-addresspool` are kept.
---
--- 1. CRDs (crd.yaml), then wait until each is Established.
--- 2. Workloads and RBAC (metallb.yaml), then the controller's rollout:
---    its webhook validates the custom resources of step 3.
--- 3. The address pool: `default-addresspool` and the L2Advertisement
---    `default-advertise-all-pools` are kept (their spec is only written
---    when ranges are given). A cluster still configured by the pre-0.13
---    ConfigMap `config` (`address-pools`), which MetalLB 0.13+ ignores,
---    gets an IPAddressPool per layer2 pool (`default` becomes
---    `default-addresspool`) and the L2Advertisement, same ranges; the
---    ConfigMap itself is left in place.
--- 4. What v0.15.3 no longer ships goes (kube.prune, label app=metallb):
---    v0.9's Role and RoleBinding config-watcher, and its two
---    PodSecurityPolicies where the cluster still serves policy/v1beta1
---    (Kubernetes 1.25 removed it, and the objects with it). v0.9's
---    Secret memberlist is kept: v0.15's speaker reads the same key.
--- verify: the speaker's rollout, and the pool has addresses.
local manifest = require "manifest"
-- ranges.lua (this folder), required when first used: `uphook lint`
-- refuses a require of an addon module while the hook file loads.
local ranges = setmetatable({}, { __index = function(t, k)
  local m = require "ranges"
  setmetatable(t, { __index = m })
  return m[k]
end })

local NS = "metallb-system"
local POOL = "default-addresspool"
local L2ADV = "default-advertise-all-pools"
local POOL_KIND = "metallb.io/v1beta1/IPAddressPool"
--- What prune looks at: every kind of the manifests that v0.9 had too,
--- but no Secret or ConfigMap (the memberlist key and the user's pools).
local PRUNE_NS = { "ServiceAccount", "rbac.authorization.k8s.io/v1/Role",
  "rbac.authorization.k8s.io/v1/RoleBinding", "Deployment", "DaemonSet" }
local PRUNE_CLUSTER = { "rbac.authorization.k8s.io/v1/ClusterRole",
  "rbac.authorization.k8s.io/v1/ClusterRoleBinding",
  "policy/v1beta1/PodSecurityPolicy" }
local L2_KIND = "metallb.io/v1beta1/L2Advertisement"

--- The CR, or nil when absent or when its CRD is not installed.
local function get_cr(kind, name)
  local ok, obj = pcall(kube.get, kind, name, NS)
  if ok then return obj end
  return nil
end

--- The pools of the pre-0.13 ConfigMap, or nil when there is none.
--- Raises (naming the ConfigMap) on what cannot be converted.
local function legacy_pools()
  local cm = kube.get("ConfigMap", "config", NS)
  if not cm or type(cm.data) ~= "table" or type(cm.data.config) ~= "string"
  then
    return nil
  end
  local where = "ConfigMap " .. NS .. "/config"
  local ok, cfg = pcall(yaml.decode, cm.data.config)
  if not ok then error(where .. ": key config is not YAML: "
    .. tostring(type(cfg) == "table" and cfg.message or cfg), 0) end
  if type(cfg) ~= "table" or type(cfg["address-pools"]) ~= "table" then
    return nil
  end
  local pools = {}
  for i, p in ipairs(cfg["address-pools"]) do
    local name = type(p) == "table" and p.name or nil
    if type(name) ~= "string" then
      error(string.format("%s: address-pools[%d] has no name", where, i), 0)
    end
    if p.protocol ~= "layer2" then
      error(string.format("%s: pool %q uses protocol %s; only layer2 pools "
        .. "are converted (configure BGPPeer/BGPAdvertisement by hand, then "
        .. "remove the pool from the ConfigMap)", where, name,
        tostring(p.protocol)), 0)
    end
    local addrs = {}
    for _, r in ipairs(type(p.addresses) == "table" and p.addresses or {}) do
      local good, err = ranges.check(tostring(r))
      if not good then error(where .. ", pool " .. name .. ": " .. err, 0) end
      addrs[#addrs + 1] = tostring(r)
    end
    if #addrs == 0 then
      error(string.format("%s: pool %q has no addresses", where, name), 0)
    end
    local spec = { addresses = addrs }
    if p["auto-assign"] == false then spec.autoAssign = false end
    if p["avoid-buggy-ips"] == true then spec.avoidBuggyIPs = true end
    pools[#pools + 1] = { name = name == "default" and POOL or name,
      spec = spec }
  end
  return pools
end

--- What step 3 applies: a list of {name, spec|nil}, whether the
--- L2Advertisement is applied, and a note for the log.
local function address_plan(ctx)
  local given = ranges.parse_args(ctx.positional)
  local pool = get_cr(POOL_KIND, POOL)
  local l2 = get_cr(L2_KIND, L2ADV)
  if pool then
    -- Already on CRs: keep them, with the given ranges in place of the
    -- live ones. The live spec is applied back whole: uphook becomes the
    -- owner of the fields enable set, and server-side apply removes the
    -- fields their owner stops applying.
    local spec = type(pool.spec) == "table" and pool.spec or {}
    if given then spec.addresses = given end
    return { { name = POOL, spec = spec } },
      l2 ~= nil, given and "the given ranges" or "the live ranges"
  end
  local legacy = legacy_pools()
  if legacy then
    if given then
      local found = false
      for _, p in ipairs(legacy) do
        if p.name == POOL then p.spec.addresses, found = given, true end
      end
      if not found then
        table.insert(legacy, 1, { name = POOL, spec = { addresses = given } })
      end
    end
    return legacy, true, "the pre-0.13 ConfigMap " .. NS .. "/config"
  end
  if given then
    return { { name = POOL, spec = { addresses = given } } }, true,
      "the given ranges"
  end
  return {}, false, nil
end

local function pool_obj(p)
  return { apiVersion = "metallb.io/v1beta1", kind = "IPAddressPool",
    metadata = { name = p.name, namespace = NS }, spec = p.spec }
end

local function l2_obj()
  return { apiVersion = "metallb.io/v1beta1", kind = "L2Advertisement",
    metadata = { name = L2ADV, namespace = NS } }
end

return {
  uphook = ">=0.2",   -- the hook API it is written for (docs/reference.md)
  version = "0.15.3",
  from = ">=0.9.0 <0.15.3",
  description = "MetalLB v0.15.3 (keeps default-addresspool, converts the "
    .. "pre-0.13 ConfigMap, v0.9's included; prunes what v0.15.3 dropped)",
  -- kube:privileged: the speaker runs with hostNetwork and NET_RAW, and
  -- two of its roles grant every verb on metallb.io statuses
  permissions = { "kube:metallb-system", "kube:cluster", "kube:privileged" },
  params = {},
  positional = { { name = "ranges...", description = "address ranges for "
    .. "the default pool (10.64.140.43-10.64.140.49, CIDRs, IPv6), comma "
    .. "separated; none: keep the pool's" } },

  detect = function()
    local d = kube.get("Deployment", "controller", NS)
    if not d then return nil end
    local tag = manifest.image_tag(d, "controller")
    return tag and tag:match("^v?(%d+%.%d+%.%d+)$") or nil
  end,

  check = function(ctx)
    -- Bad ranges or an unconvertible ConfigMap stop here, before any change.
    local pools, _, source = address_plan(ctx)
    if #pools == 0 then
      log.warn("no %s and no ranges given: LoadBalancer Services get no "
        .. "address until an IPAddressPool exists (give the ranges: "
        .. "uphook upgrade metallb 10.64.140.43-10.64.140.49)", POOL)
    else
      log.info("address pools from %s", source)
    end
  end,

  upgrade = function(ctx)
    log.step("CRDs")
    local crds = kube.apply(addon.read("crd.yaml"))
    for _, r in ipairs(crds) do
      if r.kind == "CustomResourceDefinition" then
        kube.wait("CustomResourceDefinition", r.name, nil,
          { condition = "Established", timeout = 60 })
      end
    end

    log.step("MetalLB %s", ctx.to)
    kube.apply(addon.read("metallb.yaml"))
    kube.rollout("Deployment", "controller", NS, { timeout = 300 })

    log.step("address pools")
    local pools, with_l2, source = address_plan(ctx)
    if ctx.plan and not pcall(kube.list, POOL_KIND, { namespace = NS }) then
      -- from v0.9 the CRDs come with this upgrade: a dry run of a custom
      -- object whose CRD is not there yet is refused, so say it instead
      for _, p in ipairs(pools) do
        log.info("plan: would create IPAddressPool %s/%s with %s (from %s)",
          NS, p.name, table.concat(p.spec.addresses or {}, ", "), source)
      end
      if with_l2 then
        log.info("plan: would create L2Advertisement %s/%s", NS, L2ADV)
      end
    else
      for _, p in ipairs(pools) do
        local r = kube.apply(pool_obj(p))[1]
        log.info("IPAddressPool %s %s (%s)", p.name, r.action, source)
      end
      if with_l2 then kube.apply(l2_obj()) end
    end
    if source and source:find("ConfigMap", 1, true) then
      log.warn("MetalLB %s ignores ConfigMap %s/config: its pools are now "
        .. "IPAddressPools; delete it when you no longer need it", ctx.to, NS)
    end

    log.step("what MetalLB %s no longer ships", ctx.to)
    local sel = { app = "metallb" }
    kube.prune { kinds = PRUNE_NS, namespace = NS, labels = sel }
    kube.prune { kinds = PRUNE_CLUSTER, labels = sel }
  end,

  verify = function(ctx)
    kube.rollout("DaemonSet", "speaker", NS, { timeout = 300 })
    if ctx.plan then return end
    local pool = get_cr(POOL_KIND, POOL)
    if pool and #((pool.spec or {}).addresses or {}) == 0 then
      error("IPAddressPool " .. NS .. "/" .. POOL .. " has no addresses", 0)
    end
  end,
}

--- MetalLB v0.13.x / v0.14.x -> v0.15.3.
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
--- verify: the speaker's rollout, and the pool has addresses.
local manifest = require "manifest"

-- Address ranges, as `microk8s enable metallb` takes them. (Inline, not a
-- ranges.lua module: the sandbox's require of a module from the addon
-- folder is broken; see docs/hooks-metallb-metrics-cert.md.)
--
-- A range is `FIRST-LAST` (both IPv4 or both IPv6, FIRST <= LAST) or a
-- CIDR `ADDRESS/PREFIX` (host bits allowed, as Go's net.ParseCIDR and so
-- MetalLB accept them: enable's own example is 192.168.1.240/24). IPv4
-- parts are decimal 0-255 without leading zeros (Go rejects them);
-- IPv6 is RFC 4291 text (`::` once, an IPv4 tail allowed, no zone).
-- A bare address is refused with a hint to write it as /32 or /128:
-- MetalLB's IPAddressPool does not take it.
--
-- The enable script reads `$1` and splits it on blanks and commas; the
-- MicroK8s CLI passes `metallb:RANGES` through as `RANGES`. Here every
-- positional argument is split the same way and a leading `metallb:` is
-- dropped, so `metallb:A,B`, `A,B`, `A B` and `A, B` are the same.
local ranges = {}  -- address ranges (see the header)

---Parse dotted IPv4; returns a list of 4 numbers or nil and why.
---@param s string
---@return integer[]|nil, string?
function ranges.ipv4(s)
  local parts = { s:match("^(%d+)%.(%d+)%.(%d+)%.(%d+)$") }
  if #parts ~= 4 then return nil, "not an IPv4 address" end
  local out = {}
  for i, p in ipairs(parts) do
    if #p > 1 and p:sub(1, 1) == "0" then
      return nil, "IPv4 part '" .. p .. "' has a leading zero"
    end
    local n = tonumber(p)
    if #p > 3 or n > 255 then
      return nil, "IPv4 part '" .. p .. "' is above 255"
    end
    out[i] = n
  end
  return out
end

-- The 16-bit groups of one side of "::" (may be empty).
local function groups(side, allow_v4_tail)
  local out = {}
  if side == "" then return out end
  local items = {}
  for g in (side .. ":"):gmatch("([^:]*):") do items[#items + 1] = g end
  for i, g in ipairs(items) do
    if i == #items and allow_v4_tail and g:find(".", 1, true) then
      local v4, err = ranges.ipv4(g)
      if not v4 then return nil, err end
      out[#out + 1] = v4[1] * 256 + v4[2]
      out[#out + 1] = v4[3] * 256 + v4[4]
    elseif g:match("^%x%x?%x?%x?$") then
      out[#out + 1] = tonumber(g, 16)
    else
      return nil, "bad IPv6 group '" .. g .. "'"
    end
  end
  return out
end

---Parse IPv6 text; returns a list of 8 numbers (16-bit groups) or nil and why.
---@param s string
---@return integer[]|nil, string?
function ranges.ipv6(s)
  if not s:find(":", 1, true) then return nil, "not an IPv6 address" end
  if s:find("%%") then return nil, "IPv6 zones (%name) are not allowed" end
  local head, tail = s:match("^(.-)::(.*)$")
  if head and tail:find("::", 1, true) then
    return nil, "'::' appears more than once"
  end
  local left, right, err
  if head then
    left, err = groups(head, false)
    if not left then return nil, err end
    right, err = groups(tail, true)
    if not right then return nil, err end
    if #left + #right > 7 then return nil, "too many IPv6 groups" end
  else
    left, err = groups(s, true)
    if not left then return nil, err end
    right = {}
    if #left ~= 8 then return nil, "an IPv6 address has 8 groups" end
  end
  local out = {}
  for _, g in ipairs(left) do out[#out + 1] = g end
  for _ = 1, 8 - #left - #right do out[#out + 1] = 0 end
  for _, g in ipairs(right) do out[#out + 1] = g end
  return out
end

---Parse either family: the parts, then 4 or 6.
local function address(s)
  local v4, e4 = ranges.ipv4(s)
  if v4 then return v4, 4 end
  if s:find(":", 1, true) then
    local v6, e6 = ranges.ipv6(s)
    if v6 then return v6, 6 end
    return nil, nil, e6
  end
  if s:match("^[%d.]+$") then return nil, nil, e4 end
  return nil, nil, "not an IPv4 or IPv6 address"
end

local function compare(a, b)
  for i = 1, #a do
    if a[i] ~= b[i] then return a[i] < b[i] and -1 or 1 end
  end
  return 0
end

---Check one range; returns true, or nil and a message naming it.
---@param r string
---@return true|nil, string?
function ranges.check(r)
  local function bad(why)
    return nil, string.format("%q is not a valid IP range: %s", r, why)
  end
  if type(r) ~= "string" or r == "" then return bad("it is empty") end
  local first, last = r:match("^([^-]*)%-(.*)$")
  if first then
    if last:find("-", 1, true) then return bad("more than one '-'") end
    local a, fa, ea = address(first)
    if not a then return bad(string.format("'%s' is %s", first, ea)) end
    local b, fb, eb = address(last)
    if not b then return bad(string.format("'%s' is %s", last, eb)) end
    if fa ~= fb then
      return bad("it mixes IPv4 and IPv6")
    end
    if compare(a, b) > 0 then
      return bad(string.format("%s is above %s", first, last))
    end
    return true
  end
  local addr, prefix = r:match("^([^/]*)/(.*)$")
  if addr then
    local a, fam, ea = address(addr)
    if not a then return bad(string.format("'%s' is %s", addr, ea)) end
    local max = fam == 4 and 32 or 128
    if not prefix:match("^%d+$") or (#prefix > 1 and prefix:sub(1, 1) == "0")
       or tonumber(prefix) > max then
      return bad(string.format("the prefix length must be 0-%d, got '%s'",
        max, prefix))
    end
    return true
  end
  local a, fam = address(r)
  if a then
    return bad(string.format("a single address needs a prefix: write %s/%d",
      r, fam == 4 and 32 or 128))
  end
  return bad("expected FIRST-LAST or ADDRESS/PREFIX "
    .. "(e.g. 10.64.140.43-10.64.140.49 or 192.168.1.240/28)")
end

---Split positional arguments into ranges (see the top); nil when none
---were given. Raises on the first bad range, naming it.
---@param args string[]
---@return string[]|nil
function ranges.parse_args(args)
  local out = {}
  for _, a in ipairs(args or {}) do
    a = a:gsub("^metallb:", "")
    for r in a:gmatch("[^,%s]+") do
      local ok, err = ranges.check(r)
      if not ok then error(err, 0) end
      out[#out + 1] = r
    end
  end
  if #out == 0 then return nil end
  return out
end


local NS = "metallb-system"
local POOL = "default-addresspool"
local L2ADV = "default-advertise-all-pools"
local POOL_KIND = "metallb.io/v1beta1/IPAddressPool"
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
    -- Already on CRs: keep them; write the ranges only when given.
    return { { name = POOL, spec = given and { addresses = given } or nil } },
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
  version = "0.15.3",
  from = ">=0.13.0 <0.15.3",
  description = "MetalLB v0.15.3 (keeps default-addresspool, converts the pre-0.13 ConfigMap)",
  permissions = { "kube:metallb-system", "kube:cluster" },
  params = {},

  detect = function(ctx)
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
    for _, p in ipairs(pools) do
      local r = kube.apply(pool_obj(p))[1]
      log.info("IPAddressPool %s %s (%s)", p.name, r.action, source)
    end
    if with_l2 then kube.apply(l2_obj()) end
    if source and source:find("ConfigMap", 1, true) then
      log.warn("MetalLB %s ignores ConfigMap %s/config: its pools are now "
        .. "IPAddressPools; delete it when you no longer need it", ctx.to, NS)
    end
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

--- registry 2.7.1 / 2.8.1 -> 2.8.3.
---
--- Upstream's history (canonical/microk8s-core-addons, addons/registry):
---   2.7.1  a47841e (MicroK8s 1.24): bash enable, `registry:size=30Gi`;
---   2.8.1  edf2824 (1.25 .. 1.32): Python enable with --size (default
---          20Gi, at least 20Gi) and --storageclass; the positional
---          `size=NNGi` still works, with a deprecation warning;
---   2.8.3  3af1d49 (1.33 on): only the image changed.
--- The hook re-applies the Namespace, Deployment, Service (NodePort
--- 32000) and the kube-public/local-registry-hosting ConfigMap of
--- registry.yaml. The PersistentVolumeClaim registry-claim holds every
--- pushed image: it is never deleted or recreated, and applied only to
--- grow it (--size larger than the live claim), which its StorageClass
--- must allow (allowVolumeExpansion), after the new registry rolled out:
--- a claim cannot shrink, so a rollback leaves a grown claim grown. A smaller size, another class, or
--- growing a claim whose class cannot expand stops before any change.
--- Parameters are read back from the live claim, so an addon enabled
--- before uphook keeps its size and class.
local manifest = require "manifest"

local NS = "container-registry"
local CLAIM = "registry-claim"
local NAME = "registry"
local MIN_GI = 20

local UNITS = { Ki = 2^10, Mi = 2^20, Gi = 2^30, Ti = 2^40, Pi = 2^50,
                k = 1e3, M = 1e6, G = 1e9, T = 1e12, P = 1e15, [""] = 1 }

--- Bytes of a Kubernetes quantity ("20Gi", "40G"), or nil.
local function bytes(q)
  local n, unit = tostring(q or ""):match("^(%d+%.?%d*)(%a*)$")
  if not n or not UNITS[unit] then return nil end
  return tonumber(n) * UNITS[unit]
end

--- enable's rule: a whole number of Gi, at least 20Gi.
local function check_size(v)
  local n = v:match("^([1-9]%d*)Gi$")
  if not n or tonumber(n) < MIN_GI then
    return false, string.format("the registry's size must be a whole "
      .. "number of Gi, at least %dGi (e.g. 40Gi), not %q", MIN_GI, v)
  end
  return true
end

local function claim() return kube.get("PersistentVolumeClaim", CLAIM, NS) end

local function claim_size(pvc)
  local r = pvc.spec and pvc.spec.resources and pvc.spec.resources.requests
  return r and r.storage
end

--- The size asked for: --size, else enable's deprecated `size=NNGi`.
local function asked_size(ctx)
  local pos = ctx.positional[1]
  if pos == nil or pos == "" then
    return ctx.given.size and ctx.params.size or nil
  end
  local v = pos:match("^size=(.*)$")
  if not v then
    error(string.format("registry takes --size and --storageclass (or the "
      .. "deprecated size=NNGi), not %q", pos), 0)
  end
  if ctx.given.size and ctx.params.size ~= v then
    error(string.format("size given twice: --size %s and size=%s",
      ctx.params.size, v), 0)
  end
  local ok, why = check_size(v)
  if not ok then error(why, 0) end
  log.warn("size=%s is deprecated: use --size %s", v, v)
  return v
end

--- What this run does with the claim: {size=, class=, grow=bool}.
local function settle(ctx)
  local pvc = claim()
  if not pvc then
    error(string.format("PersistentVolumeClaim %s/%s is missing: the "
      .. "registry's images are gone or it was never enabled; run "
      .. "microk8s disable registry, then microk8s enable registry", NS,
      CLAIM), 0)
  end
  local live, class = claim_size(pvc), pvc.spec.storageClassName
  if ctx.given.storageclass and ctx.params.storageclass ~= class then
    error(string.format("--storageclass %s: the claim %s/%s is on %s, and "
      .. "a claim's class cannot change (moving the images to another "
      .. "class is a new claim: not an upgrade)", ctx.params.storageclass,
      NS, CLAIM, tostring(class)), 0)
  end
  local want = asked_size(ctx) or live
  local a, b = bytes(live), bytes(want)
  if not (a and b) then
    error(string.format("cannot read the size %q of %s/%s", tostring(live),
      NS, CLAIM), 0)
  end
  if b < a then
    error(string.format("size %s is smaller than the claim's %s: a "
      .. "PersistentVolumeClaim cannot shrink", want, live), 0)
  end
  if b > a then
    local sc = class and kube.get("StorageClass", class)
    if not (sc and sc.allowVolumeExpansion == true) then
      error(string.format("size %s: the claim %s/%s (%s) cannot grow: its "
        .. "StorageClass %s %s; it stays %s (give no --size to upgrade "
        .. "without resizing)", want, NS, CLAIM, live, tostring(class),
        sc and "does not allow volume expansion (allowVolumeExpansion)"
           or "does not exist", live), 0)
    end
  end
  return { size = want, live = live, class = class, grow = b > a,
           spec = pvc.spec }
end

return {
  uphook = ">=0.2",   -- the hook API it is written for (docs/reference.md)
  version = "2.8.3",
  from = ">=2.7.1 <2.8.3",
  description = "registry 2.8.3 (the images' claim and NodePort 32000 kept; "
    .. "the claim grows only with --size and an expandable StorageClass)",
  permissions = { "kube:container-registry", "kube:kube-public",
                  "kube:cluster" },
  params = {
    size = { default = "20Gi", check = check_size,
      description = "size of the registry's claim (at least 20Gi); larger "
        .. "than the live claim grows it, if its StorageClass can expand" },
    storageclass = { description = "the claim's StorageClass: must be the "
      .. "live one (a claim's class cannot change)" },
  },
  positional = { { name = "size-opt", description = "size=NNGi, the deprecated form of "
    .. "--size (microk8s upgrade registry:size=40Gi)" } },

  --- The version, and the parameters read back from the live claim.
  detect = function()
    local d = kube.get("Deployment", NAME, NS)
    if not d then return nil end
    local tag = manifest.image_tag(d, NAME)
    local version = tag and tag:match("^(%d+%.%d+%.%d+)$")
    local pvc = claim()
    local params = pvc and { size = claim_size(pvc),
      storageclass = pvc.spec and pvc.spec.storageClassName } or nil
    return version, params
  end,

  check = function(ctx)
    local s = settle(ctx)
    if s.grow then
      log.info("the claim %s/%s grows from %s to %s (StorageClass %s)", NS,
        CLAIM, s.live, s.size, s.class)
    else
      log.info("the claim %s/%s (%s, StorageClass %s) is kept as it is", NS,
        CLAIM, s.live, tostring(s.class))
    end
  end,

  upgrade = function(ctx)
    local s = settle(ctx)
    local objs = manifest.load("registry.yaml", { DISKSIZE = s.size })
    local rest = {}
    for _, o in ipairs(objs) do
      if o.kind ~= "PersistentVolumeClaim" then rest[#rest + 1] = o end
    end
    log.step("registry %s", ctx.to)
    kube.apply(rest)
    kube.rollout("Deployment", NAME, NS, { timeout = 300 })
    if s.grow then
      -- last: a claim that grew cannot shrink back in a rollback. The
      -- live spec with the new size: every other field of a bound claim
      -- is immutable, and applying it unchanged keeps it.
      log.step("claim %s/%s: %s -> %s", NS, CLAIM, s.live, s.size)
      local pvc = manifest.find(objs, "PersistentVolumeClaim", CLAIM)
      pvc.spec = s.spec
      pvc.spec.resources.requests.storage = s.size
      kube.apply(pvc)
    end
  end,

  verify = function(ctx)
    if ctx.plan then return end
    local pvc = claim()
    if not pvc or (pvc.status and pvc.status.phase) ~= "Bound" then
      error(string.format("PersistentVolumeClaim %s/%s is not Bound", NS,
        CLAIM), 0)
    end
    local svc = kube.get("Service", NAME, NS)
    local port = svc and svc.spec.ports and svc.spec.ports[1]
    if not (port and port.nodePort == 32000) then
      error("Service " .. NS .. "/" .. NAME .. " does not expose NodePort "
        .. "32000 (localhost:32000 is where images are pushed)", 0)
    end
  end,
}

-- hostpath-storage: upgrade the hostpath provisioner to 1.6.0.
--
-- What changed, in upstream's history (canonical/microk8s-core-addons,
-- addons/hostpath-storage; the manifests are in
-- tests/data/corpus/addons/hostpath-storage and fixtures/):
--   1.1.0  a47841e (MicroK8s 1.23): the image cdkbot/hostpath-provisioner-
--          $ARCH of the pre-split microk8s repository (1.0.0) became the
--          multi-arch cdkbot/hostpath-provisioner; RBAC gained endpoints.
--   1.2.0  091e3c8: the StorageClass gained volumeBindingMode:
--          WaitForFirstConsumer (immutable: the class is deleted and
--          recreated; PVs and PVCs only name the class and are never
--          touched); RBAC gained pods and nodes (the provisioner runs a
--          helper pod on the volume's node); env NAMESPACE, then
--          BUSYBOX_IMAGE (f5129d3).
--   1.3.0  66c5475 (MicroK8s 1.24): the image only.
--   1.4.x  7525bd6 made the class's reclaimPolicy a parameter
--          ($RECLAIM_POLICY, enable's -r/--reclaim-policy; immutable too),
--          then 1.4.0 311811f .. 1.4.2 eaff33a (MicroK8s 1.25 .. 1.28):
--          the image only.
--   1.5.0  0bcda42 made the default-class annotation a parameter
--          ($DEFAULT_CLASS, enable's -d/--default-class), then 4044a14
--          (MicroK8s 1.29 .. 1.33): RBAC gained leases.
--   1.6.0  445fbbd (MicroK8s 1.34): RBAC gained persistentvolumes/patch.
--
-- Parameters, in order of precedence (see docs/hooks-hostpath-dns.md):
--   1. given on the command line (-r/--reclaim-policy, -d/--default-class,
--      as enable's getopt takes them: `-r Retain`, `-rRetain`);
--   2. read back from the live StorageClass: its reclaimPolicy and its
--      default-class annotation are exactly the two parameters, so a user
--      who enabled the addon before uphook existed, or who changed the
--      class with kubectl since, keeps Retain or a non-default class;
--   3. ctx.params: saved by the last upgrade, else what detect read back,
--      else enable's defaults (Delete, true) -- used when the class is
--      missing.
-- `--reset-params` skips 2: defaults and the command line only.
-- Without state, `detect` returns the parameters it read from the class
-- as its second value, so the engine saves them with the new version.
local migrate = require "migrate"
local manifest = require "manifest"
local semver = require "semver"

local NS = "kube-system"
local DEPLOYMENT = "hostpath-provisioner"
local CLASS = "microk8s-hostpath"
local PROVISIONER = "microk8s.io/hostpath"
local DEFAULT_ANNOTATION = "storageclass.kubernetes.io/is-default-class"
local SNAP_COMMON = "/var/snap/microk8s/common"
-- Fields of a StorageClass the API server refuses to change.
local IMMUTABLE = { "provisioner", "parameters", "reclaimPolicy",
                    "volumeBindingMode" }


local function equal(a, b)
  if a == b then return true end
  if type(a) ~= "table" or type(b) ~= "table" then return false end
  for k, v in pairs(a) do if not equal(v, b[k]) then return false end end
  for k in pairs(b) do if a[k] == nil then return false end end
  return true
end

local function is_empty(v)
  return v == nil or v == yaml.null or (type(v) == "table" and next(v) == nil)
end

-- The live provisioner Deployment and StorageClass (nil when absent).
local function live()
  return kube.get("Deployment", DEPLOYMENT, NS),
         kube.get("StorageClass", CLASS)
end

local function container(dep)
  local spec = dep and dep.spec and dep.spec.template
               and dep.spec.template.spec
  for _, c in ipairs(spec and spec.containers or {}) do
    if c.name == "hostpath-provisioner" then return c end
  end
end

local function env_value(c, name)
  for _, e in ipairs(c and c.env or {}) do
    if e.name == name then return e.value end
  end
end

-- $SNAP_COMMON as enable filled it: from PV_DIR, which is
-- $SNAP_COMMON/default-storage in every version.
local function snap_common(dep)
  local dir = env_value(container(dep), "PV_DIR")
  local root = type(dir) == "string" and dir:match("^(/.+)/default%-storage/?$")
  return root or SNAP_COMMON
end

-- The version of an installed provisioner: the image tag when it is a
-- version, else what the objects look like.
local function installed_version(dep, sc)
  local tag = manifest.image_tag(dep, "hostpath-provisioner")
  if tag and semver.parse(tag) then return semver.format(semver.parse(tag)) end
  local c = container(dep)
  local image = c and c.image or ""
  if env_value(c, "BUSYBOX_IMAGE") then return "1.4.0" end
  if sc and sc.volumeBindingMode == "WaitForFirstConsumer" then
    return "1.2.0"
  end
  if image:match("hostpath%-provisioner%-%w+[:@]") then return "1.0.0" end
  return "1.1.0"
end

-- Was --<name> given on the command line?
local function given(ctx, name)
  return (ctx.given or {})[name] == true
end

-- --reset-params: start again from the defaults (docs/contract.md §3), so neither
-- the saved parameters nor the live class count.
local function reset(ctx)
  return ctx.reset_params == true
end

-- The live StorageClass's settings as enable's parameters.
local function params_of_class(sc)
  if not sc then return {} end
  local out = {}
  if sc.reclaimPolicy == "Delete" or sc.reclaimPolicy == "Retain" then
    out["reclaim-policy"] = sc.reclaimPolicy
  end
  local ann = sc.metadata.annotations
  local d = type(ann) == "table" and ann[DEFAULT_ANNOTATION]
  out["default-class"] = (d == "true") and "true" or "false"
  return out
end

-- The parameters this upgrade uses (precedence at the top of the file).
local function params(ctx, sc)
  local found, out, names = params_of_class(sc), {}, {}
  for name in pairs(ctx.params) do names[#names + 1] = name end
  table.sort(names)
  for _, name in ipairs(names) do
    local value = ctx.params[name]
    if given(ctx, name) or reset(ctx) or found[name] == nil then
      out[name] = value
    else
      out[name] = found[name]
      if found[name] ~= value then
        log.info("keeping --%s=%s from the live StorageClass %s (not %s)",
                 name, found[name], CLASS, value)
      end
    end
  end
  return out
end

-- The 1.6.0 objects with the placeholders filled as enable fills them.
local function objects(p, dep)
  return manifest.load("storage.yaml", {
    SNAP_COMMON = snap_common(dep),
    RECLAIM_POLICY = p["reclaim-policy"],
    DEFAULT_CLASS = p["default-class"],
  })
end

-- The StorageClass to install: the manifest's, over what the live one
-- holds that the manifest does not set (labels, annotations, mount
-- options a user added), minus server fields and kubectl's stale
-- last-applied copy.
local function desired_class(objs, sc)
  local want = manifest.find(objs, "StorageClass", CLASS)
  if not sc then return want end
  local md = { name = CLASS, labels = {}, annotations = {} }
  for k, v in pairs(type(sc.metadata.labels) == "table"
                    and sc.metadata.labels or {}) do md.labels[k] = v end
  for k, v in pairs(type(sc.metadata.annotations) == "table"
                    and sc.metadata.annotations or {}) do
    if k ~= "kubectl.kubernetes.io/last-applied-configuration" then
      md.annotations[k] = v
    end
  end
  for k, v in pairs(want.metadata.labels or {}) do md.labels[k] = v end
  for k, v in pairs(want.metadata.annotations or {}) do md.annotations[k] = v end
  local out = { metadata = md }
  for k, v in pairs(sc) do
    if k ~= "metadata" and k ~= "status" then out[k] = v end
  end
  for k, v in pairs(want) do
    if k ~= "metadata" then out[k] = v end
  end
  return out
end

-- Does the live class differ from `want` in a field the server will not
-- change?
local function must_recreate(sc, want)
  if not sc then return false end
  for _, f in ipairs(IMMUTABLE) do
    local a, b = sc[f], want[f]
    if not (equal(a, b) or (is_empty(a) and is_empty(b))) then
      return true, f
    end
  end
  return false
end

-- Put the StorageClass in place: apply when possible, else delete and
-- recreate it (PVs and PVCs only refer to it by name; they stay bound).
local function ensure_class(ctx, objs)
  if ctx.class_done then return end
  ctx.class_done = true
  local sc = kube.get("StorageClass", CLASS)
  local want = desired_class(objs, sc)
  local recreate, field = must_recreate(sc, want)
  if recreate then
    log.info("StorageClass %s: %s changes (%s -> %s); it is immutable, so "
      .. "the class is recreated; its volumes are not touched", CLASS, field,
      tostring(sc[field]), tostring(want[field]))
    kube.delete("StorageClass", CLASS)
    if ctx.plan and kube.get("StorageClass", CLASS) then
      -- An engine whose plan does not simulate the deletion above (before
      -- f7dcf1e) still shows the old class, and a dry run of the new one
      -- would be refused as immutable: describe it instead.
      log.info("plan: would create StorageClass %s (reclaimPolicy %s, "
        .. "volumeBindingMode %s, default %s)", CLASS, want.reclaimPolicy,
        want.volumeBindingMode,
        tostring(want.metadata.annotations[DEFAULT_ANNOTATION]))
      return
    end
  end
  kube.apply(want)
end

-- Every step below is one version that needs work of its own; what all
-- of them need (the 1.6.0 objects) is applied once, after them.
local m = migrate.new()

m:step(">=1.0.0 <1.1.0", "1.1.0", function()
  -- The per-arch image became multi-arch and RBAC gained endpoints: both
  -- compatible, applied with the 1.6.0 Deployment and ClusterRole below.
  log.info("image cdkbot/hostpath-provisioner-<arch> -> "
    .. "cdkbot/hostpath-provisioner (applied with 1.6.0)")
end)

m:step(">=1.1.0 <1.2.0", "1.2.0", function(ctx)
  -- volumeBindingMode (and, with -r, reclaimPolicy) is immutable:
  -- recreate the class now, before the provisioner that expects
  -- WaitForFirstConsumer runs.
  ensure_class(ctx, ctx.objects)
end)

m:step(">=1.2.0 <1.6.0", "1.6.0", function()
  -- RBAC gained pods and nodes (1.2.0), leases (1.5.0) and PV patch
  -- (1.6.0); reclaimPolicy and the default-class annotation became
  -- parameters (1.4.x, 1.5.0): all applied below, the class recreated
  -- only when one of its immutable fields changes.
  log.info("RBAC: pods, nodes, leases, persistentvolumes/patch")
end)

local function apply_order(objs)
  -- RBAC before the class and the class before the provisioner, so the
  -- new provisioner never runs without the permissions it needs.
  local out = {}
  for _, kind in ipairs { "ServiceAccount", "ClusterRole",
                          "ClusterRoleBinding" } do
    for _, o in ipairs(objs) do
      if o.kind == kind then out[#out + 1] = o end
    end
  end
  return out
end

return {
  uphook = ">=0.2",   -- the hook API it is written for (docs/reference.md)
  version = "1.6.0",
  from = ">=1.0.0 <1.6.0",
  description = "hostpath provisioner 1.6.0 (StorageClass recreated when "
    .. "its immutable fields change; volumes untouched)",
  -- kube:privileged: the provisioner mounts $SNAP_COMMON/default-storage
  -- of each node (a hostPath volume)
  permissions = { "kube:kube-system", "kube:cluster", "kube:privileged" },
  params = {
    ["reclaim-policy"] = { default = "Delete", choices = { "Delete", "Retain" },
      short = "r", description = "the StorageClass's reclaim policy (a "
        .. "change recreates the class; volumes keep theirs)" },
    ["default-class"] = { default = "true", choices = { "true", "false" },
      short = "d", description = "whether microk8s-hostpath is the "
        .. "cluster's default StorageClass" },
  },

  -- The version, and the parameters read back from the live class (the
  -- engine merges them where saved parameters would go, and saves them).
  detect = function()
    local dep, sc = live()
    if not dep then return nil end
    return installed_version(dep, sc), params_of_class(sc)
  end,

  check = function()
    local dep, sc = live()
    if not dep then
      error(string.format("Deployment %s/%s is missing: hostpath-storage "
        .. "does not look enabled (run microk8s enable hostpath-storage)", NS,
        DEPLOYMENT))
    end
    if sc and sc.provisioner ~= PROVISIONER then
      error(string.format("StorageClass %s has provisioner %s, not %s: it "
        .. "is not this addon's; rename or remove it first", CLASS,
        tostring(sc.provisioner), PROVISIONER))
    end
  end,

  upgrade = function(ctx)
    local dep, sc = live()
    local p = params(ctx, sc)
    log.info("parameters: --reclaim-policy=%s --default-class=%s",
             p["reclaim-policy"], p["default-class"])
    local objs = objects(p, dep)
    ctx.objects = objs
    m:run(ctx)
    log.step("apply hostpath-storage %s", ctx.to)
    kube.apply(apply_order(objs))
    ensure_class(ctx, objs)       -- done already when the 1.2.0 step ran
    kube.apply(manifest.find(objs, "Deployment", DEPLOYMENT))
  end,

  verify = function(ctx)
    kube.rollout("Deployment", DEPLOYMENT, NS, { timeout = 300 })
    if ctx.plan then return end
    local sc = kube.get("StorageClass", CLASS)
    if not sc or sc.volumeBindingMode ~= "WaitForFirstConsumer" then
      error("StorageClass " .. CLASS .. " is not WaitForFirstConsumer")
    end
  end,
}

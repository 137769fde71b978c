--- uphook.backend.mock.cluster: the mock backend, an in-memory API server.
---
--- Implements the Backend of docs/internals.md ("The backend
--- interface") for `uphook test` and `--offline`. Pure Lua, no policy:
--- the engine journals, plans, labels and checks permissions; this only
--- behaves like the API server where a hook can tell:
---
--- * objects keyed by group, kind, namespace and name; built-in kinds in
---   uphook.backend.mock.kinds, custom kinds once their CRD exists (404 "no
---   matches for kind" before);
--- * server-side apply and field ownership as the API server keeps them
---   (metadata.managedFields; uphook.backend.mock.fieldmanager, uphook.backend.mock.ssa,
---   over the schema of uphook.backend.mock.schema or a CRD's): the applied
---   configuration merges in by the schema (atomic structs, maps and
---   lists replaced whole, keyed lists item by item), and what a manager
---   no longer applies goes unless another owns it; fixtures without
---   managedFields are owned as `kubectl apply` (client side) leaves
---   objects, with their last-applied-configuration;
--- * resourceVersion advances on every write; metadata.generation on
---   changes outside metadata/status, for the kinds the real server keeps
---   it for (workloads, Job, CronJob, CRD, PDB, Ingress, NetworkPolicy,
---   webhook configurations, every custom resource);
--- * immutable fields rejected with the server's messages
---   (uphook.backend.mock.validate), also through `replace`;
--- * server defaults a hook can trip over (StorageClass reclaimPolicy and
---   volumeBindingMode, Service type/clusterIP/port protocol, replicas,
---   the default StorageClass of a new PVC, Secret stringData -> data);
--- * controllers: workloads and Jobs finish at once unless stalled, CRDs
---   become Established, APIServices Available, Namespaces Active; a
---   DaemonSet runs on the Nodes its nodeSelector and tolerations allow
---   and does not finish while one of them is NotReady; Deployments,
---   DaemonSets and StatefulSets have Pods (docs/mock.md);
--- * deleting a Namespace deletes its objects, deleting a CRD its custom
---   resources (at once, where a real server takes a moment);
--- * time is a mock clock (uphook.backend.mock.clock): `watch` and `sleep` cost
---   no real time;
--- * with its nodes attached (attach_nodes, uphook.backend.mock.agent), each node
---   has its own args files, kubelet (configz) and cluster-agent.
---
--- Everything returned is a deep copy; everything stored is a deep copy.
local kinds = require "uphook.backend.mock.kinds"
local fieldmanager = require "uphook.backend.mock.fieldmanager"
local ssa = require "uphook.backend.mock.ssa"
local schema = require "uphook.backend.mock.schema"
local tables = require "uphook.core.tables"
local names = require "uphook.core.kinds"
local kubeerror = require "uphook.core.kubeerror"
local refusals = require "uphook.backend.mock.refusals"
local validate = require "uphook.backend.mock.validate"
local ctl = require "uphook.backend.mock.controllers"
local clockmod = require "uphook.backend.mock.clock"

local M = {}
local copy, equal, shallow = tables.copy, tables.equal, tables.shallow

---@class MockCluster: Backend
---@field name string                 "mock"
---@field clock MockClock
---@field restarts {service: string, time: number}[]
---@field private null any            value treated as null (yaml.null)
---@field private array_mt table|nil  metatable of decoded sequences
---@field private store table<string, table<string, table>>  gk -> key -> obj
---@field private custom table<string, KindInfo>  "group/Kind" -> info
---@field private custom_kind table<string, KindInfo>  "Kind" -> info
---@field private rv integer
---@field private uids integer
---@field private ips table<string, boolean>
---@field private stalls table<string, {seconds?: number}>
---@class uphook.MockCluster: uphook.Backend
local Cluster = {}
Cluster.__index = Cluster
-- the controllers' methods: _reconcile, _complete, _sync_pods, ...
require("uphook.backend.mock.reconcile").install(Cluster)
-- the nodes as nodes.list() shows them, and attach_nodes
require("uphook.backend.mock.nodes").install(Cluster)
-- what the storage layer does to every write: _storage, _service_ip, ...
require("uphook.backend.mock.storage").install(Cluster)

--- Namespaces every cluster has, whether or not the fixture lists them.
M.BUILTIN_NAMESPACES = { default = true, ["kube-system"] = true,
  ["kube-public"] = true, ["kube-node-lease"] = true }

--- The field manager of uphook's writes (docs/contract.md §4).
M.MANAGER = names.FIELD_MANAGER

-- a fixture's objects stored as the cluster would have made them, and
-- who made what no request wrote: _seed_all, _seed, _seed_owner
local seeder = require "uphook.backend.mock.seed"
seeder.install(Cluster, M.BUILTIN_NAMESPACES)
--- The manager of a fixture's object that kubectl applied client side.
M.CLIENT_SIDE_APPLY = seeder.CLIENT_SIDE_APPLY

local function raise(e) error(e, 0) end

local gk, okey = kinds.gk, kinds.okey

local function empty(opts)
  return setmetatable({
    name = "mock",
    clock = opts.clock or clockmod.new(),
    null = opts.null, array_mt = opts.array_mt,
    this_node_name = opts.this_node,
    json_encode = opts.json_encode,
    ssa = { types = schema.types, null = opts.null, array_mt = opts.array_mt },
    store = {}, custom = {}, custom_kind = {},
    rv = 0, uids = 0, ips = {}, stalls = {}, restarts = {},
  }, Cluster)
end

---@class MockSeed  a prepared fixture: seeded once, shared by clusters

---Seed a fixture once (copy, fill server fields, defaults, statuses),
---for many clusters: `cluster.new{seed = s}` then costs a few table
---copies instead of deep copies. Timestamps come from opts.clock (or a
---default clock).
---@param objects table[]  decoded objects (nodes too)
---@param opts? {clock?: MockClock, null?: any, array_mt?: table}
---@return MockSeed
function M.seed(objects, opts)
  local b = empty(opts or {})
  b:_seed_all(objects)
  return { store = b.store, rv = b.rv, uids = b.uids, ips = b.ips,
           custom = b.custom, custom_kind = b.custom_kind }
end

---@class MockOptions
---@field objects? table[]     decoded objects to seed (copied)
---@field seed? MockSeed       a prepared fixture (see M.seed), shared
---@field clock? MockClock     default: a new clock at 2024-01-01
---@field null? any            the null value (yaml.null) of the host
---@field array_mt? table      the metatable marking decoded sequences
---@field this_node? string    the node uphook runs on (this_node())

---Create a mock cluster from decoded objects or a prepared seed.
---@param opts? MockOptions
---@return MockCluster
function M.new(opts)
  opts = opts or {}
  local self = empty(opts)
  local seed = opts.seed
  if seed then
    for k, bucket in pairs(seed.store) do self.store[k] = shallow(bucket) end
    self.rv, self.uids, self.ips = seed.rv, seed.uids, shallow(seed.ips)
    self.custom, self.custom_kind = seed.custom, seed.custom_kind
  end
  if opts.objects then self:_seed_all(opts.objects) end
  return self
end

-- Deep copy keeping the null sentinel itself, FieldsV1 shared
-- (fieldmanager.copy_object).

function Cluster:_copy(v)
  return fieldmanager.copy_object(v, self.null)
end

--- Kinds -----------------------------------------------------------------

-- Resolve a kind argument ("Kind", "v1/Kind", "group/version/Kind").
function Cluster:_resolve(arg)
  if type(arg) ~= "string" or arg == "" then
    error("kind must be a non-empty string", 3)
  end
  local av, kind = names.split(arg)
  local b = kinds.builtin[kind]
  if not av then
    local info = b or self.custom_kind[kind]
    if not info then raise(kubeerror.unknown_kind(kind)) end
    return info
  end
  local group, version = names.split_api_version(av)
  if b and b.group == group then
    if b.version == version then return b end
    raise(kubeerror.no_match(kind, av))
  end
  local c = self.custom[group .. "/" .. kind]
  if c and kinds.serves(c, version) then return c end
  raise(kubeerror.no_match(kind, av))
end

function Cluster:_refresh_custom()
  self.custom, self.custom_kind = {}, {}
  local crds = self.store["apiextensions.k8s.io/CustomResourceDefinition"]
  local keys = {}
  for k in pairs(crds or {}) do keys[#keys + 1] = k end
  table.sort(keys)
  for _, k in ipairs(keys) do
    local info = kinds.from_crd(crds[k])
    if info then
      self.custom[gk(info)] = info
      if not kinds.builtin[info.kind] and not self.custom_kind[info.kind] then
        self.custom_kind[info.kind] = info
      end
    end
  end
end

local norm_ns = kinds.norm_ns

function Cluster:_bucket(info)
  local k = gk(info)
  local b = self.store[k]
  if not b then b = {}; self.store[k] = b end
  return b
end

function Cluster:_lookup(info, name, ns)
  local b = self.store[gk(info)]
  return b and b[okey(ns, name)]
end

function Cluster:_check_namespace(info, ns)
  if not info.namespaced or M.BUILTIN_NAMESPACES[ns] then return end
  if not self:_lookup(kinds.builtin.Namespace, ns, nil) then
    raise(refusals.not_found(kinds.builtin.Namespace, ns))
  end
end

--- Writes ----------------------------------------------------------------

function Cluster:_next_rv()
  self.rv = self.rv + 1
  return tostring(self.rv)
end

function Cluster:_next_uid()
  self.uids = self.uids + 1
  return string.format("00000000-0000-4000-8000-%012x", self.uids)
end
-- The API defaults (a decoded request gets them before the field
-- manager sees it, an applied one after the merge).
function Cluster:_defaults(info, obj)
  if not info.versions then ctl.defaults(info.kind, obj) end
end

-- Does anything outside metadata/status differ?
local function spec_changed(a, b)
  for k, v in pairs(a) do
    if k ~= "metadata" and k ~= "status" and not equal(v, b[k]) then
      return true
    end
  end
  for k in pairs(b) do
    if k ~= "metadata" and k ~= "status" and a[k] == nil then return true end
  end
  return false
end

-- Keep what the server owns in metadata from the stored object.
local SERVER_META = names.SERVER_METADATA

local function keep_server_meta(new, old)
  for _, f in ipairs(SERVER_META) do
    if f ~= "managedFields" then new.metadata[f] = old.metadata[f] end
  end
  new.metadata.name, new.metadata.namespace =
    old.metadata.name, old.metadata.namespace
end

function Cluster:_admit_update(info, old, new)
  local errs = validate.update(info, old, new)
  if #errs > 0 then raise(refusals.invalid(info, old.metadata.name, errs)) end
  if info.kind == "PersistentVolumeClaim" then
    local g = validate.get
    local a = validate.quantity(g(old, "spec", "resources", "requests",
                                  "storage"))
    local b = validate.quantity(g(new, "spec", "resources", "requests",
                                  "storage"))
    if a and b and b > a then
      local sc = self:_lookup(kinds.builtin.StorageClass,
                              g(new, "spec", "storageClassName") or "", nil)
      if not (sc and sc.allowVolumeExpansion == true) then
        raise(refusals.forbidden(info, old.metadata.name,
          "only dynamically provisioned pvc can be resized and the " ..
          "storageclass that provisions the pvc must support resize"))
      end
    end
  end
end

-- Store `obj` (owned) under its key, with a new resourceVersion.
function Cluster:_put(info, obj)
  obj.metadata.resourceVersion = self:_next_rv()
  self:_bucket(info)[okey(obj.metadata.namespace, obj.metadata.name)] = obj
  if info.kind == "Service" then
    local ip = validate.get(obj, "spec", "clusterIP")
    if ip and ip ~= "None" then self.ips[ip] = true end
  end
end

-- A new object from a request body: validated, defaulted, not stored.
function Cluster:_new_object(info, obj)
  -- the server's metadata is left out before the copy, not after (a
  -- fixture's managedFields would be copied to go, their FieldsV1 all {})
  local src, note = shallow(obj), {}
  src.metadata = names.client_metadata(obj.metadata)
  local new = copy(src, self.null, true, note)
  -- omitempty; a copy without an empty table has no empty map to drop
  if not info.versions and note.empty then
    ssa.drop_empty_maps(self.ssa, self:_ref(info), new)
  end
  local md = new.metadata
  md.namespace = norm_ns(info, md.namespace)
  if info.status then new.status = nil end
  local errs = validate.create(info, new)
  if #errs > 0 then raise(refusals.invalid(info, md.name, errs)) end
  md.uid = self:_next_uid()
  md.creationTimestamp = self.clock:timestamp()
  if info.gen then md.generation = 1 end
  return new
end

-- Check a request body and resolve its kind.
function Cluster:_body(obj, what)
  return kubeerror.check_body(obj, what, 3, function(arg)
    return self:_resolve(arg)
  end)
end

--- Controllers -----------------------------------------------------------

-- Write a status (a separate write, as a controller's would be).
-- Stored objects are never modified in place (clusters made from one
-- seed share them), so this stores a new object: a shallow copy with
-- its own metadata and the new status.
function Cluster:_set_status(info, obj, status)
  local new = {}
  for k, v in pairs(obj) do new[k] = v end
  local md = {}
  for k, v in pairs(obj.metadata) do md[k] = v end
  new.metadata, new.status = md, status
  self:_put(info, new)
  return new
end

--- Field ownership -------------------------------------------------------

-- The kind's type in the schema: built-in kinds from uphook.backend.mock.schema,
-- custom ones from their CRD (kinds.from_crd keeps the version schemas).
function Cluster:_ref(info)
  if info.schemas then return kinds.custom_ref(info, info.version) end
  return info.ref or ssa.DEDUCED
end

-- How the field manager sees a write by `manager` of `api_version`.
function Cluster:_fm(manager, api_version, extra)
  local o = { manager = manager or M.MANAGER, api_version = api_version,
              now = self.clock:timestamp(), array_mt = self.array_mt }
  for k, v in pairs(extra or {}) do o[k] = v end
  return o
end

--- Backend ---------------------------------------------------------------

-- The preconditions a body may carry: metadata.resourceVersion and uid.
function Cluster:_preconditions(info, md, old)
  if md.resourceVersion ~= nil and md.resourceVersion ~= self.null
      and md.resourceVersion ~= old.metadata.resourceVersion then
    raise(refusals.conflict(info, md.name))
  end
  if md.uid ~= nil and md.uid ~= self.null and md.uid ~= old.metadata.uid then
    raise(refusals.uid_conflict(md.uid, old.metadata.uid))
  end
end

-- Store a changed object: admission, generation, then the write and the
-- controllers (or, under dry_run, nothing).
function Cluster:_write(info, old, new, dry)
  self:_admit_update(info, old, new)
  if info.gen and spec_changed(new, old) then
    new.metadata.generation = (old.metadata.generation or 0) + 1
  end
  if dry then return self:_copy(new) end
  self:_put(info, new)
  local out = self:_copy(new)
  self:_reconcile(info, new)
  return out
end

---@class MockApplyOptions
---@field dry_run? boolean
---@field manager? string   field manager (default "uphook")
---@field force? boolean    take fields other managers own (default true)
---@field managed_fields? table[]  under dry_run: apply as if the object's
---   managedFields were these (the plan of the client-side apply upgrade)

---Server-side apply (docs/internals.md, "Field ownership"): the applied
---configuration merges into the object by the schema, its fields become
---the manager's, and the fields the manager applied last time and no
---longer applies go unless another manager owns them.
---@param obj table
---@param opts? MockApplyOptions
---@return table stored_obj, "created"|"configured"|"unchanged" action
function Cluster:apply(obj, opts)
  opts = opts or {}
  local info, md = self:_body(obj, "apply")
  if md.managedFields ~= nil and md.managedFields ~= self.null then
    raise(kubeerror.bad_request("metadata.managedFields must be nil"))
  end
  local dry = opts.dry_run
  local ns = norm_ns(info, md.namespace)
  self:_check_namespace(info, ns)
  local old = self:_lookup(info, md.name, ns)
  if old then self:_preconditions(info, md, old) end
  -- the cluster's own copy: the merge shares its subtrees with what it
  -- stores, and with the stored object (never changed in place)
  -- (an applied null is data to the merge, and is dropped from what is
  -- stored)
  local note = {}
  local config = copy(obj, self.null, false, note)
  local nulls = note.null or false
  if info.status then config.status = nil end
  for _, f in ipairs(SERVER_META) do config.metadata[f] = nil end
  config.metadata.namespace = ns
  local live = old
  if old and dry and opts.managed_fields then
    live = shallow(old)
    live.metadata = shallow(old.metadata)
    live.metadata.managedFields = fieldmanager.given(opts.managed_fields,
                                                     self.array_mt)
  end
  local merged, changed = fieldmanager.apply(self.ssa, self:_ref(info), live,
    config, self:_fm(opts.manager, obj.apiVersion,
                     { force = opts.force ~= false }))
  local new = shallow(merged)
  new.metadata = shallow(merged.metadata)
  if nulls then new = copy(new, self.null, true) end
  if not old then
    local mf = new.metadata.managedFields
    new = self:_new_object(info, new)
    self:_defaults(info, new)
    new.metadata.managedFields = mf
    self:_storage(info, new, nil)
    if dry then return self:_copy(new), "created" end
    self:_put(info, new)
    local out = self:_copy(new)
    self:_reconcile(info, new)
    return out, "created"
  end
  keep_server_meta(new, old)
  self:_defaults(info, new)
  self:_storage(info, new, old)
  if not changed then
    -- no field changed (defaults and storage are idempotent on what is
    -- stored): only the record of ownership may have
    new = shallow(old)
    new.metadata = shallow(old.metadata)
    new.metadata.managedFields = merged.metadata.managedFields
  end
  if equal(new, old) then return self:_copy(old), "unchanged" end
  return self:_write(info, old, new, dry), "configured"
end

---Read one object, or nil when absent.
---@param kind string
---@param name string
---@param namespace? string
---@return table|nil
function Cluster:get(kind, name, namespace)
  local info = self:_resolve(kind)
  assert(type(name) == "string", "get: name must be a string")
  local obj = self:_lookup(info, name, norm_ns(info, namespace))
  if not obj then return nil end
  local out = self:_copy(obj)
  local av = names.split(kind)
  if av and info.versions then out.apiVersion = av end
  return out
end

local function labels_match(obj, want)
  if not want then return true end
  local have = obj.metadata.labels
  for k, v in pairs(want) do
    if type(have) ~= "table" or have[k] ~= v then return false end
  end
  return true
end

---List objects of a kind, sorted by namespace then name; with
---opts.metadata each item is {apiVersion, kind, metadata} only (the
---API server's PartialObjectMetadataList, lua/backend/live.lua).
---@param kind string
---@param opts? {namespace?: string, labels?: table<string, string>, metadata?: boolean}
---@return table[]
function Cluster:list(kind, opts)
  local info = self:_resolve(kind)
  local ns = opts and opts.namespace
  if not info.namespaced then ns = nil end
  local labels = opts and opts.labels
  local keys = {}
  local b = self.store[gk(info)] or {}
  for k, obj in pairs(b) do
    if (ns == nil or obj.metadata.namespace == ns)
        and labels_match(obj, labels) then
      keys[#keys + 1] = k
    end
  end
  table.sort(keys)
  local out = {}
  for i, k in ipairs(keys) do
    local o = b[k]
    out[i] = opts and opts.metadata and { apiVersion = o.apiVersion,
      kind = o.kind, metadata = self:_copy(o.metadata) } or self:_copy(o)
  end
  if self.array_mt then setmetatable(out, self.array_mt) end
  return out
end

---What the cluster serves, as the live backend's discovery says it
---(lua/backend/live.lua api_versions): each "group/version" and
---"group/version/Kind" of the built-in kinds and of the CRDs' served
---versions, and each APIService's "group/version", sorted.
---@return string[]
function Cluster:api_versions()
  local set, out = {}, {}
  local function add(info, version)
    local av = kinds.api_version(info.group, version)
    set[av], set[av .. "/" .. info.kind] = true, true
  end
  for _, info in pairs(kinds.builtin) do add(info, info.version) end
  for _, info in pairs(self.custom) do
    for v in pairs(info.versions or { [info.version] = true }) do
      add(info, v)
    end
  end
  for _, a in ipairs(self:list("apiregistration.k8s.io/v1/APIService")) do
    local sp = type(a.spec) == "table" and a.spec or {}
    if type(sp.group) == "string" and sp.group ~= ""
        and type(sp.version) == "string" then
      set[sp.group .. "/" .. sp.version] = true
    end
  end
  for k in pairs(set) do out[#out + 1] = k end
  table.sort(out)
  return out
end

---POST: create; 409 AlreadyExists when present.
---@param obj table
---@param opts? {manager?: string}
---@return table stored_obj
function Cluster:create(obj, opts)
  local info, md = self:_body(obj, "create")
  local ns = norm_ns(info, md.namespace)
  self:_check_namespace(info, ns)
  local body = obj
  if md.name == nil or md.name == "" then
    body = self:_copy(obj)
    local n = 0
    repeat
      n = n + 1
      body.metadata.name = md.generateName ..
        string.format("%05x", (self.uids * 7919 + n) % 0xfffff)
    until not self:_lookup(info, body.metadata.name, ns)
  elseif self:_lookup(info, md.name, ns) then
    raise(refusals.already_exists(info, md.name))
  end
  local new = self:_new_object(info, body)
  self:_defaults(info, new)
  fieldmanager.update(self.ssa, self:_ref(info), nil, new,
    self:_fm(opts and opts.manager, obj.apiVersion,
             { sent = body.metadata.managedFields }))
  self:_storage(info, new, nil)
  self:_put(info, new)
  local out = self:_copy(new)
  self:_reconcile(info, new)
  return out
end

---PUT: replace the whole object (status kept where it is a
---subresource). metadata.resourceVersion, when set, is a precondition.
---The changed fields become the manager's (operation Update).
---@param obj table
---@param opts? {manager?: string, dry_run?: boolean}
---@return table stored_obj
function Cluster:replace(obj, opts)
  local info, md = self:_body(obj, "replace")
  local ns = norm_ns(info, md.namespace)
  local old = self:_lookup(info, md.name, ns)
  if not old then raise(refusals.not_found(info, md.name)) end
  if md.resourceVersion ~= nil and md.resourceVersion ~= self.null
      and md.resourceVersion ~= old.metadata.resourceVersion then
    raise(refusals.conflict(info, md.name))
  end
  local note = {}
  local new = copy(obj, self.null, true, note)
  if not info.versions and note.empty then
    ssa.drop_empty_maps(self.ssa, self:_ref(info), new)   -- omitempty
  end
  local sent = new.metadata.managedFields
  keep_server_meta(new, old)
  new.metadata.managedFields = nil
  if info.status then new.status = self:_copy(old.status) end
  self:_defaults(info, new)
  fieldmanager.update(self.ssa, self:_ref(info), old, new,
    self:_fm(opts and opts.manager, obj.apiVersion, { sent = sent }))
  self:_storage(info, new, old)
  if equal(new, old) then return self:_copy(old) end
  return self:_write(info, old, new, opts and opts.dry_run)
end

---Set metadata.managedFields as given, changing no other field: what a
---JSON patch of /metadata/managedFields does (the client-side apply
---upgrade of kubectl and uphook, and the restore of a rollback).
---`resource_version`, when given, is a precondition.
---@param kind string
---@param name string
---@param namespace string|nil
---@param managed_fields table[]
---@param resource_version? string
---@return table stored {apiVersion, kind, metadata} of the stored object
function Cluster:set_managed_fields(kind, name, namespace, managed_fields,
                                    resource_version)
  local info = self:_resolve(kind)
  local old = self:_lookup(info, name, norm_ns(info, namespace))
  if not old then raise(refusals.not_found(info, name)) end
  if resource_version ~= nil
      and resource_version ~= old.metadata.resourceVersion then
    raise(refusals.conflict(info, name))
  end
  local mf = fieldmanager.given(managed_fields, self.array_mt)
  local new = old
  if not equal(mf, old.metadata.managedFields) then
    new = shallow(old)
    new.metadata = shallow(old.metadata)
    new.metadata.managedFields = mf
    self:_put(info, new)
  end
  -- the metadata only, as the live backend asks the server for
  return self:_copy({ apiVersion = new.apiVersion, kind = new.kind,
    metadata = new.metadata })
end

function Cluster:_remove(info, obj)
  local md = obj.metadata
  self.store[gk(info)][okey(md.namespace, md.name)] = nil
  if info.kind == "Service" then
    local ip = validate.get(obj, "spec", "clusterIP")
    if ip then self.ips[ip] = nil end
  end
end

---DELETE. True when deleted, false when it was absent. A Namespace
---takes its objects along, a CRD its custom resources.
---@param kind string
---@param name string
---@param namespace? string
---@return boolean
function Cluster:delete(kind, name, namespace)
  local info = self:_resolve(kind)
  local obj = self:_lookup(info, name, norm_ns(info, namespace))
  if not obj then return false end
  self:_remove(info, obj)
  if not info.versions then self:_drop_pods(obj) end
  self.rv = self.rv + 1
  if info.kind == "Namespace" and not info.versions then
    for g, bucket in pairs(self.store) do
      for _, o in pairs(bucket) do
        if o.metadata.namespace == name then
          self:_remove({ group = g:match("^(.-)/"),
                         kind = g:match("/(.*)$") }, o)
        end
      end
    end
  elseif info.kind == "CustomResourceDefinition" and not info.versions then
    local def = kinds.from_crd(obj)
    if def then self.store[gk(def)] = nil end
    self:_refresh_custom()
  elseif info.kind == "Node" and not info.versions then
    self:_nodes_changed()
  end
  return true
end

---uphook.Backend's watch (lua/core/backend.lua) on the mock clock, which
---jumps from event to event, so a timeout costs no real time.
function Cluster:watch(kind, name, namespace, fn, timeout, tick)
  assert(type(fn) == "function", "watch: fn must be a function")
  local deadline = self.clock:now() + (timeout or 300)
  local obj = self:get(kind, name, namespace)
  if fn(obj) then return true, obj end
  local seen = obj and obj.metadata.resourceVersion
  while true do
    if tick then tick() end
    local t = self.clock:next_event()
    if not t or t > deadline then
      self.clock:advance_to(deadline)
      return false, obj
    end
    self.clock:advance_to(t)
    local cur = self:get(kind, name, namespace)
    local rv = cur and cur.metadata.resourceVersion
    if rv ~= seen then
      obj, seen = cur, rv
      if fn(obj) then return true, obj end
    end
  end
end

---The mock time in seconds.
---@return number
function Cluster:now()
  return self.clock:now()
end

---Advance the mock clock (instantly), running what is due.
---@param seconds number
function Cluster:sleep(seconds)
  self.clock:sleep(seconds)
end

---Record a service restart on this node (its kubelet then runs with
---this node's kubelet args, when the mock has nodes: uphook.backend.mock.agent).
---@param service string
---@return boolean
function Cluster:restart(service)
  assert(type(service) == "string", "restart: service must be a string")
  self.restarts[#self.restarts + 1] = { service = service,
                                        time = self.clock:now() }
  if self.agents and self.this_node_name then
    self.agents:restart(self.this_node_name, service)
  end
  return true
end

--- Test helpers ----------------------------------------------------------

---Every object, sorted by group/kind, namespace, name (deep copies).
---@return table[]
function Cluster:objects()
  local gks = {}
  for k in pairs(self.store) do gks[#gks + 1] = k end
  table.sort(gks)
  local out = {}
  for _, g in ipairs(gks) do
    local b, keys = self.store[g], {}
    for k in pairs(b) do keys[#keys + 1] = k end
    table.sort(keys)
    for _, k in ipairs(keys) do out[#out + 1] = self:_copy(b[k]) end
  end
  return out
end

---A deep copy of the whole state, for restore().
---@return table
function Cluster:snapshot()
  local store = {}    -- stored objects are immutable: share them
  for k, bucket in pairs(self.store) do store[k] = shallow(bucket) end
  return { store = store, rv = self.rv, uids = self.uids,
           ips = self:_copy(self.ips), restarts = self:_copy(self.restarts),
           stalls = self:_copy(self.stalls) }
end

---Go back to a snapshot (the clock is not rewound).
---@param snap table
function Cluster:restore(snap)
  self.store = {}
  for k, bucket in pairs(snap.store) do self.store[k] = shallow(bucket) end
  self.ips = self:_copy(snap.ips)
  self.restarts = self:_copy(snap.restarts)
  self.stalls = self:_copy(snap.stalls)
  self.rv, self.uids = math.max(self.rv, snap.rv), snap.uids
  self:_refresh_custom()
end

---Is this kind namespaced? nil when the cluster does not know it.
---@param apiVersion string|nil
---@param kind string
---@return boolean|nil
function Cluster:namespaced(apiVersion, kind)
  local ok, info = pcall(self._resolve, self,
    apiVersion and (apiVersion .. "/" .. kind) or kind)
  if not ok then return nil end
  return info.namespaced and true or false
end

M.Cluster = Cluster
return M

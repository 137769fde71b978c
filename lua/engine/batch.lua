--- uphook.engine.batch: the mechanics of a large kube.apply (docs/internals.md,
--- "Applying at scale"): batches, priors, parallel sends, and apply_batch,
--- which puts each object of a batch through the policy (permissions,
--- journal, plan) before it is sent.
---
--- * split: the objects of one call in batches of consecutive objects
---   that may go to the server together: at most BATCH of them; the kinds
---   others depend on (Namespace, CustomResourceDefinition, APIService,
---   webhook configurations) in batches of their own; an object that
---   comes again in a call starts a new batch.
--- * priors: the objects as they are before the call, read with one LIST
---   (in pages of LIST_PAGE) per kind and namespace where the call
---   applies LIST_MIN or more of them (else one GET each); each listed prior is used once, an object
---   applied again in the same call is read again.
--- * send: the applies of a batch, in parallel where the backend can
---   (apply_many), else one by one up to the first failure; the results
---   in order.
local kinds = require "uphook.core.kinds"
local kubeerror = require "uphook.core.kubeerror"
local fieldset = require "uphook.core.fieldset"
local plan = require "uphook.engine.plan"
local rollback = require "uphook.engine.rollback"
local args = require "uphook.engine.prims.args"
local permissions = require "uphook.engine.permissions"
local pkey, ref = args.pkey, args.ref
local need_kube, need_privileged =
  permissions.need_kube, permissions.need_privileged

local M = {}

M.BATCH = 64      -- objects journaled with one fdatasync and sent together
M.LIST_MIN = 8    -- objects of one kind and namespace read by one LIST
-- objects in one page of that LIST: a page's JSON is decoded whole, in a
-- tree of some 8 times its size (docs/bench.md, "Peak RSS")
M.LIST_PAGE = 100

-- The kinds whose objects other objects of a manifest may need first.
M.BARRIER = { Namespace = true, CustomResourceDefinition = true,
  APIService = true, MutatingWebhookConfiguration = true,
  ValidatingWebhookConfiguration = true,
  ValidatingAdmissionPolicy = true, ValidatingAdmissionPolicyBinding = true }

local function class_of(obj)
  return M.BARRIER[obj.kind] and obj.kind or ""
end

local function ident(obj)
  return obj.apiVersion .. "/" .. obj.kind .. "/" .. obj.metadata.name
end

---The objects in batches (lists of objects, in order).
---@param list table[] checked objects
---@param max? integer objects in a batch (default M.BATCH)
---@return table[][]
function M.split(list, max)
  max = max or M.BATCH
  local out, cur, class, names = {}, nil, nil, nil
  for _, obj in ipairs(list) do
    local c, id = class_of(obj), ident(obj)
    if not cur or #cur >= max or c ~= class or names[id] then
      cur, class, names = {}, c, {}
      out[#out + 1] = cur
    end
    cur[#cur + 1] = obj
    names[id] = true
  end
  return out
end

--- Priors ------------------------------------------------------------------

local Reader = {}
Reader.__index = Reader

local function group_of(gvk, ns)
  return gvk .. "\0" .. (ns or "")
end

---A reader of the priors of one call's objects. `namespace`: the call's
---namespace option (for counting objects that name none). `known`:
---objects the caller has just read whole (helm.upgrade's release
---Secrets, lua/engine/helm/record.lua), each the prior of its first
---apply instead of a GET; the write that follows must carry their
---resourceVersion, so that a change made since fails it (409 Conflict).
---@param backend table
---@param list table[]
---@param namespace string|nil
---@param known? table[]
function M.reader(backend, list, namespace, known)
  local counts, byname = {}, {}
  for _, obj in ipairs(list) do
    local g = group_of(kinds.gvk(obj), obj.metadata.namespace or namespace)
    counts[g] = (counts[g] or 0) + 1
  end
  for _, obj in ipairs(known or {}) do
    byname[group_of(kinds.gvk(obj), obj.metadata.namespace) .. "\0"
      .. obj.metadata.name] = obj
  end
  return setmetatable({ backend = backend, counts = counts, groups = {},
    known = byname, lists = 0, gets = 0 }, Reader)
end

-- One LIST of the group: name -> object, or false when it cannot be
-- listed (then every object of it is read with a GET).
function Reader:_list(gvk, ns)
  local ok, items = pcall(self.backend.list, self.backend, gvk,
    { namespace = ns, limit = M.LIST_PAGE })
  if not ok or type(items) ~= "table" then return false end
  self.lists = self.lists + 1
  local by = {}
  for _, o in ipairs(items) do
    local md = type(o) == "table" and o.metadata
    if md and type(md.name) == "string" then by[md.name] = o end
  end
  return { listed = by, taken = {} }
end

---The object `obj` (stamped: its namespace set) is about to change, as
---it is now: nil when absent.
---@param obj table
---@return table|nil
function Reader:get(obj)
  local gvk, md = kinds.gvk(obj), obj.metadata
  local g = group_of(gvk, md.namespace)
  local k = self.known[g .. "\0" .. md.name]
  if k then
    self.known[g .. "\0" .. md.name] = nil
    return k
  end
  local grp = self.groups[g]
  if grp == nil then
    local n = self.counts[g] or self.counts[group_of(gvk, nil)] or 0
    grp = n >= M.LIST_MIN and self:_list(gvk, md.namespace) or false
    self.groups[g] = grp
  end
  if grp and not grp.taken[md.name] then
    local prior = grp.listed[md.name]
    grp.listed[md.name], grp.taken[md.name] = nil, true
    return prior
  end
  self.gets = self.gets + 1
  return self.backend:get(gvk, md.name, md.namespace)
end

--- Sending -------------------------------------------------------------------

---Apply each item ({obj=, opts=}): in parallel through the backend's
---apply_many where it has one (every item is tried), else one by one up
---to the first failure (the items after it get no result: never sent).
---Results in order: {ok=true, stored=, action=} or {ok=false, error=}.
---@param backend table
---@param items {obj: table, opts: table}[]
---@return table[]
function M.send(backend, items)
  if backend.apply_many and #items > 1 then
    return backend:apply_many(items)
  end
  local out = {}
  for i, it in ipairs(items) do
    local ok, stored, action = pcall(backend.apply, backend, it.obj, it.opts)
    out[i] = ok and { ok = true, stored = stored, action = action }
      or { ok = false, error = stored }
    if not ok then break end
  end
  return out
end

---The client-side apply upgrades of a batch (items {kind=, name=,
---namespace=, managed_fields=, resource_version=}): at once through the
---backend's set_managed_fields_many where it has one, else one by one up
---to the first failure. Results as send's: {ok=true, stored=} or
---{ok=false, error=}, nil for one never sent.
---@param backend table
---@param items table[]
---@return table[]
function M.set_managed_fields(backend, items)
  if backend.set_managed_fields_many and #items > 1 then
    return backend:set_managed_fields_many(items)
  end
  local out = {}
  for i, it in ipairs(items) do
    local ok, stored = pcall(backend.set_managed_fields, backend, it.kind,
      it.name, it.namespace, it.managed_fields, it.resource_version)
    out[i] = ok and { ok = true, stored = stored }
      or { ok = false, error = stored }
    if not ok then break end
  end
  return out
end


local function stamp(run, obj, namespace)
  local md = obj.metadata
  if md.namespace == nil then
    -- as kubectl does: a namespaced object without one goes to default
    local scoped = run.backend.namespaced and
      run.backend:namespaced(obj.apiVersion, obj.kind)
    if scoped or (scoped == nil and namespace) then
      md.namespace = namespace or "default"
    end
  end
  md.labels = md.labels ~= run.null and md.labels or {}
  md.labels["addon.microk8s.io/name"] = run.addon
  md.annotations = md.annotations ~= run.null and md.annotations or {}
  md.annotations["addon.microk8s.io/version"] = run.to
  -- an object read back carries the server's record of ownership, which
  -- an apply may not send (the API server answers 400)
  md.managedFields = nil
end

--- The client-side apply upgrade (docs/internals.md, "Field ownership"):
--- on uphook's first apply to an object `kubectl apply` made client side
--- (`microk8s enable` does), the fields of its managers move to uphook,
--- as `kubectl apply --server-side` does with client-go's csaupgrade, so
--- that the fields a new version no longer sets go. Applying as another
--- manager (helm.upgrade applies as `helm`), that manager's own Update
--- entry moves to its Apply entry too, as Helm 4 does for a release Helm 3
--- wrote client side (helm/helm pkg/kube/client.go
--- upgradeClientSideFieldManager). The new managedFields, or nil when
--- there is nothing to move.
local function csa_upgrade(prior, manager)
  local mf = prior and prior.metadata and prior.metadata.managedFields
  if type(mf) ~= "table" then return nil end
  local csa = fieldset.csa_managers(mf)
  if manager then
    for _, e in ipairs(mf) do
      if type(e) == "table" and e.manager == manager
         and e.operation == "Update" and (e.subresource or "") == "" then
        csa[manager] = true
      end
    end
  end
  if next(csa) == nil then return nil end
  return fieldset.upgrade(mf, csa, manager or kinds.FIELD_MANAGER)
end

-- Under plan a CRD is only dry-run, so the server cannot dry-run the
-- resources of a kind it brings: those are planned as created (the kinds
-- the plan's CRDs serve, "group/version/Kind" -> true, in run.planned_kinds).
local function planned_kind(run, obj)
  local pk = run.planned_kinds
  return pk ~= nil and pk[obj.apiVersion .. "/" .. obj.kind] == true
    and run.backend:namespaced(obj.apiVersion, obj.kind) == nil
end

local function plan_crd(run, crd)
  local spec = type(crd.spec) == "table" and crd.spec or {}
  local kind = type(spec.names) == "table" and spec.names.kind
  if type(spec.group) ~= "string" or type(kind) ~= "string" then return end
  run.planned_kinds = run.planned_kinds or {}
  for _, v in ipairs(type(spec.versions) == "table" and spec.versions or {}) do
    if type(v) == "table" and v.served ~= false then
      run.planned_kinds[spec.group .. "/" .. tostring(v.name) .. "/" .. kind]
        = true
    end
  end
end

-- One object of a kube.apply batch, stamped and checked, with its prior.
local function apply_item(run, obj, opts, reader, pending)
  stamp(run, obj, opts.namespace)
  need_kube(run, obj, "kube.apply")
  local privileged = need_privileged(run, obj, pending)
  if privileged then plan.note(run, "privileged", privileged) end
  local key = ref(obj)
  local pk = pkey(obj.kind, key.name, key.namespace)
  pending[pk] = obj
  local it = { obj = obj, key = key, pk = pk, manager = opts.manager }
  if run.plan and (run.planned[pk] ~= nil or planned_kind(run, obj)) then
    it.planned = true
  else
    it.prior = reader:get(obj)
    it.upgraded = csa_upgrade(it.prior, it.manager)
  end
  return it
end

-- The client-side apply upgrades of `up` (items with it.upgraded), each
-- a JSON patch of managedFields under the resourceVersion it was read
-- at. One refused as stale (a controller wrote the object since) is read
-- again, its upgrade made anew from what it is now, and sent again, as
-- kubectl's migrateToSSAIfNecessary does, at most kubeerror.CONFLICT_TRIES
-- times in all. Each item's it.current becomes what the server stores.
local function csa_upgrades(run, up)
  for try = 1, kubeerror.CONFLICT_TRIES do
    local reqs = {}
    for i, it in ipairs(up) do
      reqs[i] = { kind = kinds.gvk(it.obj), name = it.key.name,
        namespace = it.key.namespace, managed_fields = it.upgraded,
        resource_version = it.current.metadata.resourceVersion }
    end
    local done, again = M.set_managed_fields(run.backend, reqs), {}
    for i, it in ipairs(up) do
      local r = done[i]
      if r and r.ok then
        it.current = r.stored
      elseif r and not (kubeerror.is_conflict(r.error)
                        and try < kubeerror.CONFLICT_TRIES) then
        error(r.error, 0)
      else   -- stale, or never sent (one by one, after a stale one)
        if r then
          it.current = run.backend:get(reqs[i].kind, it.key.name,
            it.key.namespace)
          it.upgraded = csa_upgrade(it.current, it.manager)
        end
        if it.upgraded then again[#again + 1] = it end
      end
    end
    if #again == 0 then return end
    up = again
  end
end

-- The request of each item: a server dry run under plan; else, after the
-- batch's priors are journaled, the client-side apply upgrade first.
local function apply_requests(run, items, manager)
  local send = {}
  if not run.plan then
    local recs = {}
    for _, it in ipairs(items) do
      recs[#recs + 1] = { op = "kube", ref = it.key, prior = it.prior,
        applied = it.obj }
    end
    rollback.record_all(run, recs)
  end
  local up = {}
  for _, it in ipairs(items) do
    it.current = it.prior
    if not run.plan and it.upgraded then up[#up + 1] = it end
  end
  if #up > 0 then csa_upgrades(run, up) end
  for _, it in ipairs(up) do
    -- a write guarded by the prior's resourceVersion (M.reader's known)
    -- follows its own client-side apply upgrade
    local md = it.obj.metadata
    if md.resourceVersion ~= nil and it.current and it.prior
        and md.resourceVersion == it.prior.metadata.resourceVersion then
      md.resourceVersion = it.current.metadata.resourceVersion
    end
  end
  for _, it in ipairs(items) do
    if run.plan and not it.planned then
      it.opts = { dry_run = true, prior = it.prior or false,
        managed_fields = it.upgraded, manager = manager }
    elseif not run.plan then
      it.opts = { prior = it.current or false, manager = manager }
    end
    if it.opts then send[#send + 1] = it end
  end
  return send
end

-- A batch of kube.apply: checked, its priors read and journaled (one
-- fdatasync), sent together, then what the server stored journaled (one
-- fdatasync) before each counts as changed, in order. The first failure
-- is raised once every object of the batch that changed is journaled
-- (sent in parallel, objects after it may have changed too).
---@param run uphook.Run
---@param objs table[] the objects of one batch (M.split)
---@param opts {namespace?: string, manager?: string} kube.apply's options, checked; manager: the field manager when not uphook (helm.upgrade applies as Helm's, docs/guide.md "Helm addons")
---@param reader table M.reader's, for the priors
---@param results table[] each applied object's {kind, name, namespace, action} is added
---@param stored_out? table[] each object as the server stored it is added (not under plan)
function M.apply_batch(run, objs, opts, reader, results, stored_out)
  local items, pending = {}, {}
  for i, obj in ipairs(objs) do
    items[i] = apply_item(run, obj, opts, reader, pending)
  end
  local send = apply_requests(run, items, opts.manager)
  local answers = #send > 0 and M.send(run.backend, send) or {}
  for i, it in ipairs(send) do it.answer = answers[i] end
  local made, failed = {}, nil
  for _, it in ipairs(items) do
    local prior, stored, action = it.prior, nil, nil
    if it.planned then
      prior, stored, action = nil, it.obj, "created"
      run.planned[it.pk] = it.obj
    elseif it.answer and it.answer.ok then
      stored, action = it.answer.stored, it.answer.action
      if not run.plan then
        if it.upgraded and action == "unchanged" then action = "configured" end
        made[#made + 1] = rollback.made_record(it.key, stored, it.obj)
        if stored_out then stored_out[#stored_out + 1] = stored end
      end
    elseif it.answer then
      failed = failed or it.answer.error
    end -- (no answer: never sent, a failure before it stopped the batch)
    if action and run.plan and it.obj.kind == "CustomResourceDefinition" then
      plan_crd(run, it.obj)
    end
    if action then
      run.applied[pkey(it.obj.kind, it.key.name, stored and stored.metadata
        and stored.metadata.namespace or it.key.namespace)] = true
      -- a re-created object shows what changed since it was deleted
      local before = prior or (action == "created" and run.deleted[it.pk])
      plan.kube(run, action, it.key, before or nil, stored)
      if not failed then
        results[#results + 1] = { kind = it.obj.kind, name = it.key.name,
          namespace = it.key.namespace, action = action }
      end
    end
  end
  rollback.record_all(run, made)
  for _ = 1, #made do rollback.changed(run) end
  if failed then error(failed, 0) end
end

return M

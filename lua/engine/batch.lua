--- uphook.engine.batch: the mechanics of a large kube.apply (docs/internals.md,
--- "Applying at scale"); the policy (permissions, journal, plan) stays in
--- lua/engine/prims.lua.
---
--- * split: the objects of one call in batches of consecutive objects
---   that may go to the server together: at most BATCH of them; the kinds
---   others depend on (Namespace, CustomResourceDefinition, APIService,
---   webhook configurations) in batches of their own; an object that
---   comes again in a call starts a new batch.
--- * priors: the objects as they are before the call, read with one LIST
---   per kind and namespace where the call applies LIST_MIN or more of
---   them (else one GET each); each listed prior is used once, an object
---   applied again in the same call is read again.
--- * send: the applies of a batch, in parallel where the backend can
---   (apply_many), else one by one up to the first failure; the results
---   in order.
local kinds = require "uphook.core.kinds"

local M = {}

M.BATCH = 64      -- objects journaled with one fdatasync and sent together
M.LIST_MIN = 8    -- objects of one kind and namespace read by one LIST

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
---namespace option (for counting objects that name none).
---@param backend table
---@param list table[]
---@param namespace string|nil
function M.reader(backend, list, namespace)
  local counts = {}
  for _, obj in ipairs(list) do
    local g = group_of(kinds.gvk(obj), obj.metadata.namespace or namespace)
    counts[g] = (counts[g] or 0) + 1
  end
  return setmetatable({ backend = backend, counts = counts, groups = {},
    lists = 0, gets = 0 }, Reader)
end

-- One LIST of the group: name -> object, or false when it cannot be
-- listed (then every object of it is read with a GET).
function Reader:_list(gvk, ns)
  local ok, items = pcall(self.backend.list, self.backend, gvk,
    { namespace = ns })
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

return M

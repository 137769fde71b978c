--- uphook.engine.prims.args: the argument checks every primitive makes first
--- (docs/contract.md §4): types, options, object references, scopes.
--- An argument error names the argument and the primitive, as Lua's own.
local names = require "uphook.core.names"

local M = {}

local function argerr(n, fname, msg)
  error(string.format("bad argument #%d to '%s' (%s)", n, fname, msg), 0)
end

local function checktype(v, want, n, fname, optional)
  if v == nil and optional then return end
  if type(v) ~= want then
    argerr(n, fname, want .. " expected, got " .. type(v))
  end
end

local function checkopts(opts, allowed, n, fname)
  if opts == nil then return {} end
  checktype(opts, "table", n, fname)
  for k in pairs(opts) do
    if not allowed[k] then
      argerr(n, fname, "unknown option '" .. tostring(k) .. "'")
    end
  end
  return opts
end

--- Under plan nothing changes, so a delete followed by an apply of the
--- same object (how immutable fields are migrated) must be simulated:
--- run.planned[key] = false (would be deleted) or the object (would be
--- recreated).
local function pkey(kind, name, namespace)
  return names.short_kind(kind) .. "/" .. (namespace or "") .. "/" .. name
end

--- kind, name, namespace arguments of kube.*: checked as the API server
--- checks them, before any request is built from them.
local function check_ref(kind, name, namespace, fname)
  checktype(kind, "string", 1, fname)
  names.check_kind(kind, "kube." .. fname)
  if name ~= nil or fname ~= "list" then
    checktype(name, "string", 2, fname)
    names.check_name(kind, name, "kube." .. fname)
  end
  if namespace ~= nil then
    checktype(namespace, "string", 3, fname)
    names.check_namespace(namespace, "kube." .. fname)
  end
end

local function ref(obj)
  return { apiVersion = obj.apiVersion, kind = obj.kind,
           name = obj.metadata.name, namespace = obj.metadata.namespace }
end

--- Which nodes a change goes to: "all" (the default), "this", for a
--- restart "changed" (the nodes whose args this run changed), or a list
--- of node names: "list" and the set of names (lua/engine/nodes.lua
--- `select` checks that each is a node).
local function scope(opts, n, fname, allowed)
  local v = opts.nodes
  if v == nil then return "all" end
  if type(v) == "table" then
    local set = {}
    for i = 1, #v do
      if type(v[i]) ~= "string" or v[i] == "" then
        argerr(n, fname, "nodes[" .. i .. "] must be a node's name")
      end
      set[v[i]] = true
    end
    for k in pairs(v) do
      if math.type(k) ~= "integer" or k < 1 or k > #v then
        argerr(n, fname, "nodes must be a list of node names")
      end
    end
    if #v == 0 then argerr(n, fname, "nodes must name at least one node") end
    return "list", set
  end
  if not allowed[v] then
    local list = {}
    for k in pairs(allowed) do list[#list + 1] = '"' .. k .. '"' end
    table.sort(list)
    argerr(n, fname, "nodes must be " .. table.concat(list, ", ")
      .. " or a list of node names, got " .. tostring(v))
  end
  return v
end

-- what the other files of lua/engine/prims (and batch.lua) use
M.argerr, M.checktype, M.checkopts, M.check_ref, M.pkey, M.ref, M.scope =
  argerr, checktype, checkopts, check_ref, pkey, ref, scope

return M

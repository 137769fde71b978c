--- uphook.backend.mock.crdschema: the type of a custom resource, from the
--- openAPIV3Schema of its CRD's version, in the atoms of
--- uphook.backend.mock.ssa (as uphook.backend.mock.schema has the
--- built-in kinds'), converted as kube-openapi converts a structural
--- schema.
local ssa = require "uphook.backend.mock.ssa"

local M = {}

local DEDUCED, DEDUCED_NAME = ssa.DEDUCED, ssa.DEDUCED_NAME

local openapi

-- An object's atom (also an untyped or embedded resource's): a struct of
-- its properties, a map of its additionalProperties.
local function object_atom(props, preserve)
  local t, atom, fields = props.type, {}, nil
  if type(props.properties) == "table" then
    fields = {}
    for name, sub in pairs(props.properties) do
      fields[name] = openapi(sub, preserve)
    end
  end
  if props["x-kubernetes-embedded-resource"] then
    fields = fields or {}
    fields.apiVersion, fields.kind = 1, 1
    fields.metadata = "meta.v1.ObjectMeta"
  end
  atom.f = fields
  local ap = props.additionalProperties
  if type(ap) == "table" then
    atom.m = openapi(ap, preserve)
  elseif ap == true or preserve or not fields then
    atom.m = DEDUCED_NAME
  end
  if props["x-kubernetes-map-type"] == "atomic" then atom.ma = true end
  if t == nil then atom.s, atom.l = true, "__untyped_atomic_" end
  if t == nil and fields == nil and atom.m == DEDUCED_NAME then
    return DEDUCED
  end
  return atom
end

-- An array's atom: atomic, a set, or a map by its list-map-keys (with
-- the keys' defaults).
local function array_atom(props, preserve)
  local atom = {}
  atom.l = props.items ~= nil and openapi(props.items, preserve)
           or "__untyped_atomic_"
  local lt = props["x-kubernetes-list-type"]
  if lt == "map" and type(props["x-kubernetes-list-map-keys"]) == "table"
  then
    atom.lk = {}
    for i, k in ipairs(props["x-kubernetes-list-map-keys"]) do
      atom.lk[i] = k
    end
    local el = atom.l
    if type(el) == "table" and el ~= DEDUCED and type(props.items) == "table"
        and type(props.items.properties) == "table" then
      local d = {}
      for _, k in ipairs(atom.lk) do
        local kp = props.items.properties[k]
        if type(kp) == "table" and kp.default ~= nil then d[k] = kp.default end
      end
      if next(d) then el.d = d end
    end
  elseif lt == "set" then
    atom.ls = true
  end
  return atom
end

-- The atom of a schema's props (preserve: under
-- x-kubernetes-preserve-unknown-fields).
function openapi(props, preserve)
  if type(props) ~= "table" then return DEDUCED end
  if props["x-kubernetes-preserve-unknown-fields"] == true then
    preserve = true
  end
  if props["x-kubernetes-int-or-string"] == true then return 1 end
  local t = props.type
  if t == nil or t == "object" or props["x-kubernetes-embedded-resource"] then
    return object_atom(props, preserve)
  elseif t == "array" then
    return array_atom(props, preserve)
  end
  return 1
end

---The type of a custom resource, from its CRD version's
---openAPIV3Schema, as kube-openapi converts a structural schema
---(kubernetes/kube-openapi@d427ff9:pkg/schemaconv/openapi.go, smd.go):
---objects are structs of their properties (unknown fields deduced under
---x-kubernetes-preserve-unknown-fields or without properties), maps of
---their additionalProperties; lists are atomic unless
---x-kubernetes-list-type says `set` or `map` (with
---x-kubernetes-list-map-keys); x-kubernetes-map-type: atomic makes a map
---or struct atomic. Without a schema, everything is deduced.
---@param schema table|nil  openAPIV3Schema
---@return table atom
function M.from_openapi(schema)
  if type(schema) ~= "table" then
    return { f = { apiVersion = 1, kind = 1, metadata = "meta.v1.ObjectMeta" },
             m = DEDUCED_NAME }
  end
  local atom = openapi(schema, false)
  if atom == DEDUCED or type(atom) ~= "table" then
    atom = { m = DEDUCED_NAME }
  end
  atom.f = atom.f or {}
  atom.f.apiVersion, atom.f.kind = 1, 1
  atom.f.metadata = "meta.v1.ObjectMeta"
  return atom
end

return M

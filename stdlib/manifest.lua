--- manifest: load an addon's Kubernetes manifests and edit them (docs/contract.md §5).
---
--- ```lua
--- local manifest = require "manifest"
--- local objs = manifest.load("storage.yaml", { NAMESPACE = "kube-system" })
--- manifest.set_image(objs, "hostpath-provisioner", "cdkbot/hostpath-provisioner:1.4.2")
--- kube.apply(objs)
--- ```
---
--- Placeholders (the enable scripts' `envsubst` convention):
--- * `$NAME` and `${NAME}` (NAME = letter or `_`, then letters, digits,
---   `_`) are replaced by `tostring(vars.NAME)` (a string, number or
---   boolean), inserted as is: quote them in the YAML where needed.
--- * A placeholder whose name is not in `vars` is an error naming every
---   missing name and the file, so a typo never ships a literal `$NAME`.
--- * `$$` is a literal `$` (for shell snippets in ConfigMaps: `$$HOME`).
---   A `$` not followed by a name, `{` or `$` (`$1`, `$(cmd)`, `a $ b`) is
---   left as is. `${` without a well-formed `NAME}` is an error (use `$${`).
--- * Replaced values are not scanned again.
---
--- Documents that decode to null (empty documents, a trailing `---`) or to
--- an empty mapping are skipped; a `kind: List` is flattened into its
--- `items`; any other non-mapping document is an error naming the file.
local M = {}

---Test seams: when set, used instead of the hook globals `yaml` and
---`addon`.
---@type table|nil
M.yaml = nil
---@type table|nil
M.addon = nil

local function global(name)
  local ok, v = pcall(function() return _ENV[name] end)
  if ok then return v end
  return nil
end

local function value_of(vars, name, file)
  local v = vars[name]
  local tv = type(v)
  if tv == "string" then return v end
  if tv == "number" or tv == "boolean" then return tostring(v) end
  if v == nil then return nil end
  error(string.format("manifest %s: variable %s is a %s, expected a string",
                      file, name, tv), 3)
end

---Replace `$NAME` / `${NAME}` placeholders in `text` from `vars` (rules
---above). `name` names the text in errors (usually the file).
---@param text string
---@param vars? table<string, string|number|boolean>
---@param name? string
---@return string
function M.expand(text, vars, name)
  if type(text) ~= "string" then
    error("manifest.expand: text must be a string, got " .. type(text), 2)
  end
  vars, name = vars or {}, name or "text"
  if type(vars) ~= "table" then
    error("manifest.expand: vars must be a table, got " .. type(vars), 2)
  end
  local out, missing, seen = {}, {}, {}
  local pos = 1
  while true do
    local d = text:find("$", pos, true)
    if not d then break end
    out[#out + 1] = text:sub(pos, d - 1)
    local nxt = text:sub(d + 1, d + 1)
    local var, stop
    if nxt == "$" then
      out[#out + 1], pos = "$", d + 2
    elseif nxt == "{" then
      var, stop = text:match("^{([%a_][%w_]*)}()", d + 1)
      if not var then
        local line = select(2, text:sub(1, d):gsub("\n", "")) + 1
        error(string.format("manifest %s:%d: bad placeholder '%s' (a literal $ is $$)",
                            name, line, text:sub(d, d + 20):match("^[^\n]*")), 2)
      end
    else
      var, stop = text:match("^([%a_][%w_]*)()", d + 1)
      if not var then out[#out + 1], pos = "$", d + 1 end
    end
    if var then
      local v = value_of(vars, var, name)
      if v == nil then
        if not seen[var] then missing[#missing + 1], seen[var] = var, true end
        v = ""
      end
      out[#out + 1], pos = v, stop
    end
  end
  if #missing > 0 then
    error(string.format("manifest %s: no value for %s", name,
                        table.concat(missing, ", ")), 2)
  end
  out[#out + 1] = text:sub(pos)
  return table.concat(out)
end

local function is_null(v, yaml)
  return v == nil or (yaml and v == yaml.null)
end

-- Flatten `kind: List` and drop null/empty documents.
local function collect(docs, relpath, yaml, out)
  for i, doc in ipairs(docs) do
    if is_null(doc, yaml) then
      -- an empty document
    elseif type(doc) ~= "table" then
      error(string.format("manifest %s: document %d is a %s, not an object",
                          relpath, i, type(doc)), 3)
    elseif doc.kind == "List" and type(doc.items) == "table" then
      collect(doc.items, relpath, yaml, out)
    elseif next(doc) ~= nil then
      out[#out + 1] = doc
    end
  end
  return out
end

---Read `relpath` from the addon's folder (with `addon.read`), replace its
---placeholders from `vars`, decode every YAML document and return the list
---of objects (empty documents skipped, `kind: List` flattened).
---@param relpath string
---@param vars? table<string, string|number|boolean>
---@return table[]
function M.load(relpath, vars)
  if type(relpath) ~= "string" then
    error("manifest.load: relpath must be a string, got " .. type(relpath), 2)
  end
  local addon, yaml = M.addon or global("addon"), M.yaml or global("yaml")
  local text = addon.read(relpath)
  if type(text) ~= "string" then
    error("manifest.load: cannot read " .. relpath, 2)
  end
  local ok, expanded = pcall(M.expand, text, vars, relpath)
  if not ok then error(expanded, 2) end
  local dok, docs = pcall(yaml.decode_all, expanded)
  if not dok then
    local msg = type(docs) == "table" and (docs.message or "?") or tostring(docs)
    error(string.format("manifest %s: %s", relpath, msg), 2)
  end
  return collect(docs, relpath, yaml, {})
end

---The first object of `kind` (a Kind, or `apiVersion/Kind` such as
---`apps/v1/Deployment`) and, when given, `name`; nil when none.
---@param objs table[]
---@param kind string
---@param name? string
---@return table|nil
function M.find(objs, kind, name)
  if type(objs) ~= "table" or type(kind) ~= "string" then
    error("manifest.find(objs, kind, name): objs must be a list and kind a string", 2)
  end
  local api, k = kind:match("^(.+)/([^/]+)$")
  for _, o in ipairs(objs) do
    local meta = type(o.metadata) == "table" and o.metadata or {}
    if (o.kind == (k or kind)) and (not api or o.apiVersion == api)
       and (name == nil or meta.name == name) then
      return o
    end
  end
  return nil
end

-- The pod spec inside an object, or nil.
local function pod_spec(o)
  local spec = type(o) == "table" and o.spec
  if type(spec) ~= "table" then return nil end
  if o.kind == "Pod" then return spec end
  if o.kind == "CronJob" then
    spec = type(spec.jobTemplate) == "table" and spec.jobTemplate.spec
    if type(spec) ~= "table" then return nil end
  end
  local tpl = spec.template
  if type(tpl) == "table" and type(tpl.spec) == "table" then return tpl.spec end
  return nil
end

local WORKLOADS = { Pod = true, Deployment = true, DaemonSet = true,
                    StatefulSet = true, ReplicaSet = true, Job = true,
                    CronJob = true, ReplicationController = true }

-- Call fn(container) for each container and initContainer named `name`
-- (every container when name is nil) in the object's pod template.
local function each_container(o, name, fn)
  if not WORKLOADS[o.kind] then return end
  local spec = pod_spec(o)
  if not spec then return end
  for _, field in ipairs { "initContainers", "containers" } do
    if type(spec[field]) == "table" then
      for _, c in ipairs(spec[field]) do
        if type(c) == "table" and (name == nil or c.name == name) then fn(c) end
      end
    end
  end
end

---Set the image of every container and initContainer named `container` in
---every pod template (Pod, Deployment, DaemonSet, StatefulSet, ReplicaSet,
---Job, CronJob, ReplicationController) of `objs` (a list, or one object).
---Returns how many containers were set (found, so 0 means none is named
---so), then how many of them had a different image before.
---@param objs table|table[]
---@param container string
---@param image string
---@return integer set
---@return integer changed
function M.set_image(objs, container, image)
  if type(objs) ~= "table" or type(container) ~= "string"
     or type(image) ~= "string" or image == "" then
    error("manifest.set_image(objs, container, image): objs must be a table, "
          .. "container and image non-empty strings", 2)
  end
  if objs.kind then objs = { objs } end
  local set, changed = 0, 0
  for _, o in ipairs(objs) do
    each_container(o, container, function(c)
      set = set + 1
      if c.image ~= image then changed, c.image = changed + 1, image end
    end)
  end
  return set, changed
end

---@class manifest.ImageRef
---@field registry? string `host[:port]` when the reference names one
---@field repository string path without the registry (`library/nginx`)
---@field tag? string
---@field digest? string `sha256:...`

---Split an image reference (`host:5000/a/b:tag@sha256:...`). The first
---path component is the registry when it has a `.` or `:` or is
---`localhost`, as Docker decides.
---@param ref string
---@return manifest.ImageRef
function M.parse_image(ref)
  if type(ref) ~= "string" then
    error("manifest.parse_image: ref must be a string, got " .. type(ref), 2)
  end
  local r = {}
  local name, digest = ref:match("^([^@]*)@(.+)$")
  r.digest, name = digest, name or ref
  local first, rest = name:match("^([^/]+)/(.+)$")
  if first and (first:find("[.:]") or first == "localhost") then
    r.registry, name = first, rest
  end
  local repo, tag = name:match("^(.*):([^:/]+)$")
  r.repository, r.tag = repo or name, tag
  return r
end

---The tag of the image of container `container` in `obj`'s pod template
---(the only container when `container` is nil and there is just one).
---Returns nil when the container is absent or its image has no tag
---(`x@sha256:...`, or an implied `latest`); the digest, if any, second.
---@param obj table
---@param container? string
---@return string|nil tag
---@return string|nil digest
function M.image_tag(obj, container)
  if type(obj) ~= "table" then
    error("manifest.image_tag: obj must be a table, got " .. type(obj), 2)
  end
  local found = {}
  each_container(obj, container, function(c) found[#found + 1] = c end)
  if #found == 0 or (container == nil and #found ~= 1)
     or type(found[1].image) ~= "string" then
    return nil
  end
  local r = M.parse_image(found[1].image)
  return r.tag, r.digest
end

return M

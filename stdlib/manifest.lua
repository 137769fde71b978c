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
---   boolean). `expand` inserts the text as is. `load` fills them as YAML
---   scalars, so that no value adds keys or items: a value made only of
---   letters, digits, spaces and `._/@-+=~:%` (no `: `, no leading `-?:`,
---   no trailing `:` or space) goes in as is, so `replicas: $N` is still a
---   number; any other value is quoted where the placeholder is the whole
---   plain scalar (`key: $X`, `- $X`), escaped inside a quoted scalar
---   (`"$X"`, `'$X'`), kept as is inside a block scalar (`|`, `>`) when it
---   has no line break, and is otherwise an error naming the variable, the
---   file and the line. `manifest.raw(text)` inserts text as YAML, on
---   purpose.
--- * A placeholder alone on its line where YAML structure goes, so that no
---   value can stand there (a list item or a `key: value` beside those
---   above it, a document), is an error naming the variable, the file and
---   the line, saying to use `manifest.raw(...)` for YAML structure. For a
---   hook of API 0.1 (no `uphook` field) its value goes in as text, as it
---   did, with one warning naming the hook's line (docs/reference.md "API
---   versions").
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
local yamlpos = require "uphook.core.yamlpos"
local block_lines, structure_position = yamlpos.block_lines, yamlpos.structure_position

local M = {}

---Test seams: when set, used instead of the hook globals `yaml`, `json`
---and `addon`, and of the host's `__uphook.deprecated`.
---@type table|nil
M.yaml = nil
---@type table|nil
M.json = nil
---@type table|nil
M.addon = nil
---@type (fun(key: string, where: string, detail: string): boolean)|nil
M.deprecated = nil

local function global(name)
  local ok, v = pcall(function() return _ENV[name] end)
  if ok then return v end
  return nil
end

--- Marks a value that manifest.load inserts as YAML text (manifest.raw).
local RAW = { __name = "manifest.raw" }

---Text that `manifest.load` inserts as is, as YAML: the hook means it to
---add structure (`manifest.load("x.yaml", { EXTRA = manifest.raw(lines) })`).
---Use it only for text the hook wrote itself, never for a user's value.
---Since hook API 0.2.
---@param text string
---@return table raw
function M.raw(text)
  if type(text) ~= "string" then
    error("manifest.raw: text must be a string, got " .. type(text), 2)
  end
  return setmetatable({ text = text }, RAW)
end

local function value_of(vars, name, file)
  local v = vars[name]
  local tv = type(v)
  if tv == "string" then return v end
  if getmetatable(v) == RAW then return v.text, true end
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
function M.expand(text, vars, name, place)
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
      local v, raw = value_of(vars, var, name)
      if v == nil then
        if not seen[var] then missing[#missing + 1], seen[var] = var, true end
        v = ""
      elseif place and not raw then
        v = place(v, var, d, stop)
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

--- Placing values in YAML ------------------------------------------------

-- A value that reads back as itself wherever a placeholder can stand:
-- a plain scalar (alone or within one), a quoted one, a block scalar.
local function safe(v)
  return not v:find("[^%w%s%._/@%-%+=~:%%]")
    and not v:find("[\r\n\t]") and not v:find(": ", 1, true)
    and not v:find("^[%-%?:%s]") and not v:find("[:%s]$")
end


-- The quote a scalar is open in at the end of `pre` (a line's text
-- before the placeholder): nil, '"' or "'".
local function open_quote(pre)
  local q, i = nil, 1
  while i <= #pre do
    local c = pre:sub(i, i)
    if q == '"' and c == "\\" then i = i + 1
    elseif q == nil and c == "#" and (i == 1 or pre:sub(i - 1, i - 1):match("%s")) then
      return nil
    elseif q == nil and (c == '"' or c == "'") then q = c
    elseif c == q then
      if q == "'" and pre:sub(i + 1, i + 1) == "'" then i = i + 1 else q = nil end
    end
    i = i + 1
  end
  return q
end

---Where the hook called manifest.load: "upgrade.lua:12" (its file and
---line, for a deprecation's warning).
---@return string
local function caller()
  local _, m = pcall(error, "", 4)
  return (tostring(m):gsub(":%s*$", ""))
end

-- A placeholder in YAML structure position (a list item, a key: value, a
-- document): inserted as text, with a warning, for a hook of API 0.1
-- (the host says, docs/reference.md "API versions"); an error otherwise.
local function structure(v, var, name, line, where)
  local hook = M.deprecated or (global("__uphook") or {}).deprecated
  if hook and hook("manifest_structure", where, string.format("$%s at %s:%d",
      var, name, line)) then
    return v
  end
  error(string.format("manifest %s:%d: the placeholder %s stands where a "
    .. "YAML value cannot (a list item, a key, a document): use "
    .. "manifest.raw(...) for YAML structure", name, line, var), 0)
end

-- A placer for M.expand: each value as a YAML scalar of its own (above).
local function yaml_placer(text, name, json, where)
  local blocks
  return function(v, var, d, stop)
    local ls = d
    while ls > 1 and text:sub(ls - 1, ls - 1) ~= "\n" do ls = ls - 1 end
    local le = text:find("\n", stop, true) or (#text + 1)
    local pre, post = text:sub(ls, d - 1), text:sub(stop, le - 1)
    local line = select(2, text:sub(1, d):gsub("\n", "")) + 1
    blocks = blocks or block_lines(text)
    if not blocks[line] and pre:match("^ *$") and (post:match("^%s*$")
        or post:match("^%s+#")) and structure_position(text, ls, #pre) then
      return structure(v, var, name, line, where)
    end
    if v ~= "" and safe(v) then return v end
    local function refuse(why)
      error(string.format("manifest %s:%d: the value of %s %s: it cannot be "
        .. "placed there as one YAML value (quote the placeholder, or pass "
        .. "manifest.raw(value) to insert YAML text on purpose)", name, line,
        var, why), 0)
    end
    if blocks[line] then
      if v:find("[\r\n]") then refuse("has a line break inside a block scalar") end
      return v
    end
    local q = open_quote(pre)
    if q == '"' then
      return (json.encode(v):sub(2, -2))
    elseif q == "'" then
      if v:find("[\r\n]") then refuse("has a line break inside a quoted scalar") end
      return (v:gsub("'", "''"))
    end
    local whole = (pre:match("^%s*$") or pre:match("^%s*%- +$")
        or pre:match(":%s+$")) and (post:match("^%s*$") or post:match("^%s+#"))
    if not whole then
      if v == "" then return v end
      refuse("would end the plain scalar it is part of")
    end
    return json.encode(v)
  end
end

local function is_null(v, yaml)
  return v == nil or (yaml and v == yaml.null)
end

-- Flatten `kind: List` and drop null/empty documents.
local function collect(docs, relpath, yaml, out)
  for i, doc in ipairs(docs) do
    if is_null(doc, yaml) then goto next_doc end
    if type(doc) ~= "table" then
      error(string.format("manifest %s: document %d is a %s, not an object",
                          relpath, i, type(doc)), 3)
    elseif doc.kind == "List" and type(doc.items) == "table" then
      collect(doc.items, relpath, yaml, out)
    elseif next(doc) ~= nil then
      out[#out + 1] = doc
    end
    ::next_doc::
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
  local json = M.json or global("json")
  local rok, text = pcall(addon.read, relpath)
  if not rok then   -- the primitive's message, without this file's position
    error((tostring(type(text) == "table" and text.message or text)
      :gsub("^[^:]*manifest%.lua:%d+: ", "")), 2)
  end
  if type(text) ~= "string" then
    error("manifest.load: cannot read " .. relpath, 2)
  end
  local ok, expanded = pcall(M.expand, text, vars, relpath,
                             yaml_placer(text, relpath, json, caller()))
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

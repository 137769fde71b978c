--- uphook.engine.addonscan: the API objects an addon folder's YAML files
--- name (apiVersion, kind, name, namespace) and the kinds its own CRDs
--- define: what `uphook doctor` checks against the cluster and `uphook
--- fixture` reads back. Bounded, and confined to the folder.
local M = {}

M.MAX_FILES = 500          -- YAML files read per addon folder
M.MAX_DEPTH = 6            -- folder levels below the addon's
M.MAX_BYTES = 8 << 20      -- a larger file is not read
-- folders that hold tests, not what enable applies
M.SKIP_DIRS = { fixtures = true, tests = true, test = true }

-- A confined file operation (uphook.c.fs: nothing outside dir, no
-- symlink out of it): its result, or nil and the refusal.
local function confined(op, dir, rel)
  local ok, v, err = pcall(op, dir, rel)
  if ok then return v, err end
  return nil, tostring(v)
end

-- Every *.yaml and *.yml below dir (relative paths, in byte order), but
-- not in fixtures/ or tests/, nor hidden; what cannot be read in `unread`.
local function yaml_files(c, dir, unread)
  local out = {}
  local function walk(rel, depth)
    local names = c.sys.listdir(rel == "" and dir or (dir .. "/" .. rel)) or {}
    for _, n in ipairs(names) do
      local r = rel == "" and n or (rel .. "/" .. n)
      local st, err
      if n:sub(1, 1) ~= "." then st, err = confined(c.fs.stat, dir, r) end
      local kind = st and st.type
      if kind == "directory" and not M.SKIP_DIRS[n] and depth < M.MAX_DEPTH then
        walk(r, depth + 1)
      elseif kind == "file" and n:find("%.ya?ml$") and #out < M.MAX_FILES then
        out[#out + 1] = r
      elseif not st and err and n:find("%.ya?ml$") then
        unread[#unread + 1] = r .. ": " .. err
      end
    end
  end
  walk("", 0)
  return out
end

-- The documents of a text that is not YAML as a whole (an enable template
-- whose placeholders are filled in later): each document on its own, and
-- one that does not parse read for its top-level apiVersion and kind.
local function template_objects(c, text)
  local out, docs, cur = {}, {}, {}
  for line in (text .. "\n"):gmatch("([^\n]*)\n") do
    if line:find("^%-%-%-") then docs[#docs + 1] = cur; cur = {}
    else cur[#cur + 1] = line end
  end
  docs[#docs + 1] = cur
  for _, lines in ipairs(docs) do
    local doc = table.concat(lines, "\n")
    local ok, obj = pcall(c.yaml.decode, doc)
    if not ok then
      obj = { apiVersion = ("\n" .. doc):match("\napiVersion:%s*([%w%./%-]+)"),
              kind = ("\n" .. doc):match("\nkind:%s*(%w+)"), template = true }
    end
    out[#out + 1] = obj
  end
  return out
end

-- Is this an API object, rather than a configuration file that looks like
-- one (kubelet, kustomize, kubeconfig)?
local function is_api_object(api, kind)
  local group = api:match("^(.+)/[^/]+$") or ""
  return not (group:find("%.config%.k8s%.io$") or group:find("^config%.")
    or (api == "v1" and kind == "Config"))
end

-- The CRD's group/version/Kind keys: what the addon's own files serve.
local function crd_keys(spec, provided)
  local kind = type(spec.names) == "table" and spec.names.kind
  if type(spec.group) ~= "string" or type(kind) ~= "string" then return end
  for _, v in ipairs(type(spec.versions) == "table" and spec.versions or {}) do
    if type(v) == "table" and type(v.name) == "string" then
      provided[spec.group .. "/" .. v.name .. "/" .. kind] = true
    end
  end
  if type(spec.version) == "string" then       -- apiextensions v1beta1
    provided[spec.group .. "/" .. spec.version .. "/" .. kind] = true
  end
end

local function collect(objs, file, out, provided)
  for _, o in ipairs(objs) do
    if type(o) == "table" and type(o.apiVersion) == "string"
       and type(o.kind) == "string" then
      if o.kind == "List" and type(o.items) == "table" then
        collect(o.items, file, out, provided)
      elseif is_api_object(o.apiVersion, o.kind) then
        local md = type(o.metadata) == "table" and o.metadata or {}
        out[#out + 1] = { file = file, apiVersion = o.apiVersion,
                          kind = o.kind, template = o.template,
                          name = md.name, namespace = md.namespace }
        if o.kind == "CustomResourceDefinition" and type(o.spec) == "table" then
          crd_keys(o.spec, provided)
        end
      end
    end
  end
end

---The apiVersion/kind of every object in an addon folder's YAML files,
---and the kinds its own CRDs define.
---@return table[] uses {file, apiVersion, kind, template, name, namespace}
---@return table<string, boolean> provided "group/version/Kind" keys
---@return string[] unread files that could not be read
function M.scan(c, dir)
  local uses, provided, unread = {}, {}, {}
  for _, f in ipairs(yaml_files(c, dir, unread)) do
    local text, err = confined(c.fs.read, dir, f)
    if not text or #text > M.MAX_BYTES then
      unread[#unread + 1] = f .. ": " .. (err or "larger than 8 MiB")
    else
      local ok, objs = pcall(c.yaml.decode_all, text)
      collect(ok and objs or template_objects(c, text), f, uses, provided)
    end
  end
  return uses, provided, unread
end

return M

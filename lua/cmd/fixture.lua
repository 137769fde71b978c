--- uphook.cmd.fixture: `uphook fixture <addon>` prints a fixture of the cluster
--- as the addon's hook sees it, for `t.env{cluster = ...}` and `--offline`:
--- * the objects the addon's YAML files name (their placeholders left
---   out: a name or namespace with `$` or `{{` is not looked up), the
---   objects of those kinds labelled addon.microk8s.io/name=<addon>, the
---   custom objects of the CRDs it ships (its users' data: Certificates,
---   IPAddressPools...), and the PersistentVolumes its claims are bound to;
--- * every Node, and uphook's state ConfigMap kube-system/uphook-<addon>;
--- * without the server's own metadata (uid, resourceVersion, generation,
---   creationTimestamp, ...) but with managedFields, so the mock owns each
---   field as the API server did;
--- * with every value of a Secret's data (and of the copy kubectl's
---   last-applied annotation holds) replaced, its keys kept;
--- * and, against a live cluster, this node's args files ($SNAP_DATA/args:
---   each file, not its folders) as a NodeArgs document
---   (lua/backend/offline.lua), which `--offline` and `t.env` give the node.
local kinds = require "uphook.core.kinds"
local addonscan = require "uphook.engine.addonscan"
local lease = require "uphook.engine.lease"
local Backend = require "uphook.backend.connect"
local offline = require "uphook.backend.offline"

local M = {}

M.MAX_PER_KIND = 2000          -- objects listed of one kind
M.REDACTED = "cmVkYWN0ZWQ="    -- base64 of "redacted"
M.MAX_ARGS_FILES = 64          -- files of this node's args folder read
M.MAX_ARGS_BYTES = 1 << 20     -- a larger one is left out

local LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"

local function placeholder(s)
  return type(s) == "string" and (s:find("$", 1, true) or s:find("{{", 1, true))
end

--- The object as a fixture holds it: server metadata and status.
--- conditions kept, uid and the like dropped, Secrets' values replaced.
local function clean(c, o)
  local md = o.metadata or {}
  for _, f in ipairs(kinds.SERVER_METADATA) do
    if f ~= "managedFields" then md[f] = nil end
  end
  if o.kind == "Secret" then
    for _, field in ipairs { "data", "stringData" } do
      if type(o[field]) == "table" then
        for k in pairs(o[field]) do o[field][k] = M.REDACTED end
      end
    end
    local ann = md.annotations
    local la = type(ann) == "table" and ann[LAST_APPLIED]
    if la then
      local ok, v = pcall(c.json.decode, la)
      if ok and type(v) == "table" then
        for _, field in ipairs { "data", "stringData" } do
          if type(v[field]) == "table" then
            for k in pairs(v[field]) do v[field][k] = M.REDACTED end
          end
        end
        ann[LAST_APPLIED] = c.json.encode(v) .. "\n"
      else
        ann[LAST_APPLIED] = nil
      end
    end
  end
  return o
end

--- A set of objects by apiVersion/kind/namespace/name, in order.
local function collector()
  local list, seen = {}, {}
  return list, function(o)
    if type(o) ~= "table" or type(o.metadata) ~= "table" then return end
    local k = table.concat({ tostring(o.apiVersion), tostring(o.kind),
      tostring(o.metadata.namespace), tostring(o.metadata.name) }, "/")
    if not seen[k] then seen[k] = true; list[#list + 1] = o end
  end
end

--- Each read, or nothing when the server does not serve the kind (an
--- error of the API itself, such as 401, still stops the command).
local function try(fn, ...)
  local ok, v = pcall(fn, ...)
  if ok then return v end
  if type(v) == "table" and (v.code == 404 or v.reason == "NotFound") then
    return nil
  end
  error(v, 0)
end

--- What the addon's files name: {apiVersion, kind, name, namespace}.
local function named(c, dir)
  local refs, kinds_seen, crds = {}, {}, {}
  local uses, provided = addonscan.scan(c, dir)
  for _, u in ipairs(uses) do
    if not u.template then
      local key = u.apiVersion .. "/" .. u.kind
      if not kinds_seen[key] then
        kinds_seen[key] = true
        kinds_seen[#kinds_seen + 1] = key
      end
      if type(u.name) == "string" and not placeholder(u.name)
          and not placeholder(u.namespace) then
        refs[#refs + 1] = u
      end
    end
  end
  for key in pairs(provided) do crds[#crds + 1] = key end
  table.sort(crds)
  return refs, kinds_seen, crds
end

--- Every object the fixture holds, in the order a reader expects: the
--- addon's (as its files name them), its labelled ones, custom objects,
--- bound volumes, Nodes, the state ConfigMap.
--- `a` is the addon as the command line found it (its repository names
--- its state: lua/engine/lease.lua of_addon).
function M.objects(c, backend, a, dir)
  local addon = a.name
  local list, add = collector()
  local refs, kinds_seen, crds = named(c, dir)
  for _, r in ipairs(refs) do
    add(try(backend.get, backend, r.apiVersion .. "/" .. r.kind, r.name,
      r.namespace))
  end
  local label = { ["addon.microk8s.io/name"] = addon }
  for _, key in ipairs(kinds_seen) do
    for i, o in ipairs(try(backend.list, backend, key, { labels = label }) or {}) do
      if i > M.MAX_PER_KIND then break end
      add(o)
    end
  end
  for _, key in ipairs(crds) do
    for i, o in ipairs(try(backend.list, backend, key, {}) or {}) do
      if i > M.MAX_PER_KIND then break end
      add(o)
    end
  end
  for _, o in ipairs(list) do
    local v = o.kind == "PersistentVolumeClaim" and o.spec and o.spec.volumeName
    if type(v) == "string" and v ~= "" then
      add(try(backend.get, backend, "v1/PersistentVolume", v))
    end
  end
  for _, n in ipairs(backend:list("v1/Node", {})) do add(n) end
  add(try(backend.get, backend, "v1/ConfigMap", lease.of_addon(backend, c, a),
    "kube-system"))
  for i, o in ipairs(list) do list[i] = clean(c, o) end
  return list
end

---This node's args files as a NodeArgs document for `node`: each regular
---file of `dir` (in byte order, at most M.MAX_ARGS_FILES, none larger
---than M.MAX_ARGS_BYTES), read confined to it; nil without any.
---@param c table the C families
---@param dir string the args folder ($SNAP_DATA/args)
---@param node string this node's name
---@return table|nil doc
---@return string[] skipped the files left out, with why
function M.node_args(c, dir, node)
  local files, skipped, n = {}, {}, 0
  for _, f in ipairs(c.sys.listdir(dir) or {}) do
    local ok, st = pcall(c.fs.stat, dir, f)
    if ok and st and st.type == "file" then
      local okr, text, err = pcall(c.fs.read, dir, f)
      if n >= M.MAX_ARGS_FILES then skipped[#skipped + 1] = f .. ": too many files"
      elseif okr and text and #text <= M.MAX_ARGS_BYTES then
        files[f], n = text, n + 1
      else
        skipped[#skipped + 1] = f .. ": " .. tostring(okr and (err or
          "larger than 1 MiB") or text)
      end
    end
  end
  if n == 0 then return nil, skipped end
  return { apiVersion = offline.NODE_ARGS_API, kind = offline.NODE_ARGS_KIND,
    metadata = { name = node }, files = files }, skipped
end

---@param o table options of host/cli.c (addon, kubeconfig, offline, ...)
---@param c table the C families
---@param report table lua/cmd/report.lua
---@return integer exit code
function M.main(o, c, report)
  local a = o.addon
  local dir = c.fs.pin(a.dir) or a.dir
  local backend, _, host = Backend.connect(o, c, report)
  local objs = M.objects(c, backend, a, dir)
  local args, skipped
  if not o.offline and o.snap_data then
    -- the Node of this host, as `--offline` will find it again
    args, skipped = M.node_args(c, o.snap_data .. "/args",
      offline.this_node(objs, host))
  end
  local server = backend.server and backend:server() or "an offline fixture"
  io.stdout:write(string.format("# uphook fixture %s: %d objects read from "
    .. "%s.\n# The server's own metadata (uid, resourceVersion, generation, "
    .. "creationTimestamp) is\n# dropped, managedFields kept; every value "
    .. "of a Secret's data is %q (\"redacted\").\n", a.name, #objs,
    tostring(server), M.REDACTED))
  if args then
    io.stdout:write(string.format("# This node's args files (%s/args) are "
      .. "its NodeArgs document, last.\n", o.snap_data))
    objs[#objs + 1] = args
  end
  for _, why in ipairs(skipped or {}) do
    report:log("warn", "fixture: args file left out: " .. why)
  end
  io.stdout:write(c.yaml.encode_all(c.yaml.array(objs)))
  return 0
end

return M

--- uphook.backend.offline: the pieces `--offline` and `uphook test` share: a mock
--- cluster seeded from fixture objects, and mocked transfers that still go
--- through the real checksum-and-cache code.
local cluster = require "uphook.backend.mock.cluster"
local tables = require "uphook.core.tables"
local agent = require "uphook.backend.mock.agent"
local default_args = require "uphook.backend.mock.default_args"

local M = {}

local copy = tables.copy

local function opts(c, hostname)
  return { null = c.yaml.null, array_mt = getmetatable(c.yaml.array({})),
    this_node = hostname, json_encode = c.json.encode }
end

local function objects_of(c, objects)
  local objs = {}
  for _, o in ipairs(objects or {}) do
    if type(o) == "table" and o ~= c.yaml.null then
      objs[#objs + 1] = copy(o, c.yaml.null)
    end
  end
  return objs
end

---Prepare fixture objects once for many clusters (uphook test).
---@param c table the C families
---@param objects table[] decoded fixture objects
---@return table seed for M.cluster
function M.seed(c, objects)
  return cluster.seed(objects_of(c, objects), opts(c))
end

---A mock cluster from decoded objects (copied: the caller's stay intact)
---or from a prepared seed.
---@param c table the C families
---@param objects table[]|nil decoded objects (copied)
---@param hostname string|nil this node's name
---@param seed table|nil a prepared seed, instead of objects
---@return table backend the mock cluster
function M.cluster(c, objects, hostname, seed)
  local o = opts(c, hostname)
  if seed then o.seed = seed else o.objects = objects_of(c, objects) end
  return cluster.new(o)
end

---The document of a fixture that holds one node's args files rather
---than an object of the cluster (docs/guide.md, "Fixtures"):
---`{apiVersion = "uphook/v1", kind = "NodeArgs", metadata = {name =
---node}, files = {kubelet = "--flag=value\n", ["x.yaml"] = "..."}}`; a
---file whose text is null is one the node does not have.
M.NODE_ARGS_API, M.NODE_ARGS_KIND = "uphook/v1", "NodeArgs"

-- One NodeArgs document's files, checked: {file = text|false}.
local function node_args_files(c, o, where)
  local name = type(o.metadata) == "table" and o.metadata.name
  if type(name) ~= "string" or name == "" then
    error(where .. ": a NodeArgs document needs metadata.name (the node)", 0)
  end
  if type(o.files) ~= "table" then
    error(string.format("%s: NodeArgs %s: files must be a map of file name "
      .. "to text", where, name), 0)
  end
  local files = {}
  for f, text in pairs(o.files) do
    if type(f) ~= "string" or f == "" or f:find("/", 1, true) or f == "."
       or f == ".." then
      error(string.format("%s: NodeArgs %s: files: %q is not a file name "
        .. "of the args folder", where, name, tostring(f)), 0)
    end
    if text == c.yaml.null then text = false end
    if text ~= false and type(text) ~= "string" then
      error(string.format("%s: NodeArgs %s: files.%s must be text (or "
        .. "null: no such file)", where, name, f), 0)
    end
    files[f] = text
  end
  return name, files
end

---A decoded fixture split in two: the cluster's objects, and each node's
---args files from its NodeArgs documents (M.NODE_ARGS_KIND), as
---M.nodes takes them. A NodeArgs of a node the fixture has no Node for,
---or two for one node, is an error naming the fixture.
---@param c table the C families
---@param docs table[] decoded fixture documents
---@param where string the fixture's name, for errors
---@return table[] objects
---@return table<string, table<string, string|false>> args node -> file -> text
function M.split_fixture(c, docs, where)
  local objs, args, nodes = {}, {}, {}
  for _, o in ipairs(docs or {}) do
    if type(o) == "table" and o.kind == M.NODE_ARGS_KIND
       and o.apiVersion == M.NODE_ARGS_API then
      local name, files = node_args_files(c, o, where)
      if args[name] then
        error(string.format("%s: two NodeArgs documents for node %s", where,
          name), 0)
      end
      args[name] = files
    else
      objs[#objs + 1] = o
      if type(o) == "table" and o.kind == "Node" and type(o.metadata) == "table"
      then nodes[o.metadata.name] = true end
    end
  end
  for name in pairs(args) do
    if not nodes[name] then
      error(string.format("%s: NodeArgs %s: the fixture has no Node %s",
        where, name, name), 0)
    end
  end
  return objs, args
end

---The node uphook runs on in a mock world: the Node named `hostname`
---(or labelled `kubernetes.io/hostname=<hostname>`), else the first Node
---of the fixture, else `hostname` (a world without Nodes).
---@param objects table[] decoded fixture objects
---@param hostname string
---@return string
function M.this_node(objects, hostname)
  local first
  for _, o in ipairs(objects or {}) do
    if type(o) == "table" and o.kind == "Node" and type(o.metadata) == "table"
    then
      local labels = type(o.metadata.labels) == "table" and o.metadata.labels
                     or {}
      if o.metadata.name == hostname
         or labels["kubernetes.io/hostname"] == hostname then
        return o.metadata.name
      end
      first = first or o.metadata.name
    end
  end
  -- the kubelet names its Node after the hostname in lower case
  return first or hostname:lower()
end

---Give a mock cluster its nodes (uphook.backend.mock.agent): every node, this
---one too, starts with MicroK8s's default args files (only those it does
---not have yet, so a persistent world keeps its own), then `overrides`
---replace whole files (`false`: no such file); each kubelet starts with
---what its node then has.
---@param c table the C families
---@param backend MockCluster the raw mock (not a persistent wrapper)
---@param args_dir string this node's args folder (the `args:` root)
---@param nodes_dir string the folder of every node's own folder
---@param overrides? table<string, table<string, string|false>> node -> service -> text
---@return table agents the nodes' agents (lua/backend/mock/agent.lua), attached to backend
function M.nodes(c, backend, args_dir, nodes_dir, overrides)
  local this = backend.this_node_name
  local agents = agent.new { fs = c.fs, nodes_dir = nodes_dir,
    this_args = args_dir, this_node = this, parse = c.argsfile.parse }
  local names, seen = {}, {}
  for _, n in ipairs(backend:list("v1/Node")) do
    names[#names + 1], seen[n.metadata.name] = n.metadata.name, true
  end
  if this and not seen[this] then names[#names + 1] = this end
  local function must(ok, err)
    if not ok then error("offline nodes: " .. tostring(err), 0) end
  end
  for _, name in ipairs(names) do
    -- a Node's name becomes a folder: one that is not a valid name (a
    -- fixture's `../x`) stops the world before any file is written
    local okname, node_dir = pcall(agents.node_dir, agents, name)
    if not okname then error("offline nodes: " .. node_dir, 0) end
  end
  for _, name in ipairs(names) do
    local dir, own = agents:args_dir(name), (overrides or {})[name] or {}
    must(c.sys.mkdirs(dir))
    must(c.sys.mkdirs(agents:node_dir(name)))
    -- a folder just made has none of them: no need to look for each
    local listed = c.sys.listdir(dir)
    local fresh = type(listed) == "table" and #listed == 0
    for svc, text in pairs(default_args) do
      if own[svc] == nil and (fresh or c.sys.kind(dir .. "/" .. svc) == nil)
      then
        must(c.sys.write(dir .. "/" .. svc, text))
      end
    end
    for svc, text in pairs(own) do
      -- a service name is a file name beneath the node's args folder
      if text == false then c.fs.remove(dir, svc)
      else must(c.fs.write(dir, svc, text)) end
    end
  end
  agents:started(names)
  backend:attach_nodes(agents)
  return agents
end

---Write the mock world through to a file after every change, so that a
---later `uphook --offline ... --state-dir D` (recover, a second upgrade)
---sees it: this is what lets crash tests kill uphook between changes.
---@param c table the C families
---@param backend table the mock cluster
---@param dir string the world's folder
---@param file string the file in it
---@return table backend that saves after every change (and .save())
function M.persistent(c, backend, dir, file)
  local function save()
    local objs = backend:objects()
    local ok, err = c.fs.write(dir, file, c.yaml.encode_all(objs))
    if not ok then error("cannot save the offline cluster: "
      .. tostring(err), 0) end
  end
  local w = setmetatable({}, { __index = backend })
  for _, m in ipairs { "apply", "create", "replace", "delete",
                      "set_managed_fields" } do
    w[m] = function(_, a, b, ...)
      local r1, r2 = backend[m](backend, a, b, ...)
      if not (m == "apply" and b and b.dry_run) then save() end
      return r1, r2
    end
  end
  w.save = save
  return w
end

return M

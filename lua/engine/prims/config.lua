--- uphook.engine.prims.config: the config.* primitives: read, write, remove,
--- args and set_args (on every node), over the roots of
--- lua/engine/prims/files.lua; exists, over the certs: folder.
local rollback = require "uphook.engine.rollback"
local plan = require "uphook.engine.plan"
local nodes = require "uphook.engine.nodes"
local args = require "uphook.engine.prims.args"
local files = require "uphook.engine.prims.files"
local names = require "uphook.core.names"
local tables = require "uphook.core.tables"
local argerr, checktype, checkopts, scope =
  args.argerr, args.checktype, args.checkopts, args.scope
local split_path, fs_ok, need_write, refuse_args_write, change_file =
  files.split_path, files.fs_ok, files.need_write, files.refuse_args_write,
  files.change_file

local M = {}
local H = {}   -- handlers by primitive name (prims.lua dispatches)
M.handlers = H

---config.read.
---@param run uphook.Run
---@param path string root:relative
---@return string|nil content nil when absent
function H.config_read(run, path)
  local _, dir, rel = split_path(run, path, 1, "read")
  return fs_ok(path, run.c.fs.read(dir, rel))
end

--- A certificate's name for config.exists: one file name of the certs:
--- folder, never a path (docs/reference.md, config.exists).
local MAX_CERT_NAME = 255
local function cert_name(path)
  checktype(path, "string", 1, "exists")
  local name = path:match("^certs:(.*)$")
  if not name then
    argerr(1, "exists", "path must be certs:<name>, got "
      .. names.quote(path))
  end
  if name == "" or #name > MAX_CERT_NAME or name:find("[/%z]")
     or name:find("..", 1, true) then
    argerr(1, "exists", "a certificate's file name expected (no / or ..), "
      .. "got " .. names.quote(path))
  end
  return name
end

---config.exists: does the certificate $SNAP_DATA/certs/<name> exist? It
---reveals existence only (never content, size or mode), so it needs no
---permission and is allowed in every phase (docs/security.md).
---@param run uphook.Run
---@param path string "certs:<name>"
---@return boolean exists
function H.config_exists(run, path)
  local name = cert_name(path)
  local dir = run.roots.certs
  if not dir or run.c.sys.kind(dir) ~= "dir" then return false end
  local st = fs_ok(path, run.c.fs.stat(dir, name))
  return st ~= nil and st.type == "file"
end

---config.write: journaled, atomic.
---@param run uphook.Run
---@param path string root:relative
---@param content string
---@param opts table|nil {mode=, nodes="this"}
function H.config_write(run, path, content, opts)
  local root, dir, rel = split_path(run, path, 1, "write")
  checktype(content, "string", 2, "write")
  opts = files.write_opts(run, root, rel, opts, "write", "0644")
  change_file(run, root, dir, rel, content, opts.mode, "config.write")
end

---config.remove.
---@param run uphook.Run
---@param path string root:relative
---@param opts table|nil {nodes="this"}
---@return boolean removed false when absent
function H.config_remove(run, path, opts)
  local root, dir, rel = split_path(run, path, 1, "remove")
  opts = checkopts(opts, { nodes = true }, 2, "remove")
  need_write(run, root, rel, "config.remove")
  refuse_args_write(run, root, rel, "config.remove", opts.nodes, 2)
  if fs_ok(path, run.c.fs.read(dir, rel)) == nil then return false end
  change_file(run, root, dir, rel, nil, nil, "config.remove")
  return true
end

---config.args: the flags of an args file, this node's or, as well as
---uphook can know them, another node's.
---@param run uphook.Run
---@param service string
---@param node string|nil a node's name (default: this node)
---@return table<string, string|true> values
---@return table<string, "read"|"assumed"> how
function H.config_args(run, service, node)
  checktype(service, "string", 1, "args")
  checktype(node, "string", 2, "args", true)
  local _, dir, rel = split_path(run, "args:" .. service, 1, "args")
  local here = run.c.argsfile.parse(fs_ok("args:" .. service,
    run.c.fs.read(dir, rel)) or "")
  local top = nodes.topology(run)
  if node == nil or (top.this and top.this.name == node)
     or (not top.this and node == run.hostname) then
    local how = {}
    for k in pairs(here) do how[k] = "read" end
    return here, how
  end
  if not top.names[node] then
    error(string.format("config.args(%s, %s): no node is named %s",
      service, node, node), 0)
  end
  return nodes.view(run, service, node, here)
end

--- This node's share of a set_args on several nodes, as a node entry
--- (the file's own diff is in the plan too).
local function this_node_entry(run, service, old, new)
  local a, b = run.c.argsfile.parse(old), run.c.argsfile.parse(new)
  local e = { node = run.topology.this.name,
    address = run.topology.this.address, service = service, changes = {},
    this = true }
  local flags = {}
  for k in pairs(a) do flags[k] = true end
  for k in pairs(b) do flags[k] = true end
  for _, flag in ipairs(tables.keys(flags)) do
    if nodes.differ(a[flag], b[flag]) then
      e.changes[#e.changes + 1] = { flag = flag, prior = a[flag] or false,
        how = "read", new = b[flag] or false }
    end
  end
  plan.node_args(run, e)
end

--- Journal every node's change, then send them all at once (the live
--- backend in parallel); a failure names each node it happened on.
local function send_remote(run, list)
  local reqs, recs = {}, {}
  for i, e in ipairs(list) do
    recs[i] = { op = "node_args", node = e.node, address = e.address,
      service = e.service, prior = e.prior, how = e.how, new = e.new }
    reqs[i] = nodes.args_request(run, e.node, e.address, e.service, e.new)
  end
  rollback.record_all(run, recs)
  local bad = {}
  for i, r in ipairs(nodes.send(run, reqs)) do
    if r.ok then
      run.changed_nodes[list[i].node] = true
      rollback.changed(run)
    else
      recs[i].unsent = nodes.undelivered(r)
      bad[#bad + 1] = nodes.failure(reqs[i], r)
    end
  end
  if #bad > 0 then
    error("config.set_args(" .. list[1].service .. "): "
      .. table.concat(bad, "; "), 0)
  end
end

---config.set_args: edit an args file on every node (opts.nodes), keeping
---this node's other lines; other nodes through their cluster-agent.
---@param run uphook.Run
---@param service string
---@param changes table<string, string|boolean>
---@param opts table|nil {nodes = "all"|"this"|string[], assume = boolean}
---@return boolean changed any node's file
function H.config_set_args(run, service, changes, opts)
  checktype(service, "string", 1, "set_args")
  checktype(changes, "table", 2, "set_args")
  for k, v in pairs(changes) do
    if type(k) ~= "string" or not k:match("^%-%-[%w][%w%-_.]*$") then
      argerr(2, "set_args", "keys must be flags like \"--cluster-dns\", got "
        .. tostring(k))
    end
    if type(v) ~= "string" and type(v) ~= "boolean" then
      argerr(2, "set_args", "value of " .. k
        .. " must be a string, true or false")
    end
  end
  opts = checkopts(opts, { nodes = true, assume = true }, 3, "set_args")
  checktype(opts.assume, "boolean", 3, "set_args", true)
  local where, set = scope(opts, 3, "set_args", { all = true, this = true })
  local root, dir, rel = split_path(run, "args:" .. service, 1, "set_args")
  need_write(run, root, rel, "config.set_args")
  local old = fs_ok("args:" .. service, run.c.fs.read(dir, rel)) or ""
  local new, changed = run.c.argsfile.edit(old, changes)
  local others = where == "all" and nodes.others(run) or {}
  if where == "list" then
    local here
    here, others = nodes.select(run, set, "config.set_args(" .. service .. ")")
    if not here then new, changed = old, false end
  end
  if changed then
    change_file(run, root, dir, rel, new, nil, "config.set_args")
    run.changed_here = true
    if #others > 0 then this_node_entry(run, service, old, new) end
  end
  if #others == 0 then return changed end
  local list = nodes.plan_args(run, others, service, changes,
    run.c.argsfile.parse(old), opts.assume)
  for _, e in ipairs(list) do
    plan.node_args(run, e)
    if run.plan then run.changed_nodes[e.node] = true end
  end
  if not run.plan and #list > 0 then send_remote(run, list) end
  return changed or #list > 0
end

return M

--- uphook.engine.prims.files: the file roots of the primitives (args:, bin:,
--- plugins:, addon:, state:; docs/reference.md "config"): paths checked, the
--- permission to change one, modes, the state: quota, a change journaled
--- and planned.
local rollback = require "uphook.engine.rollback"
local plan = require "uphook.engine.plan"
local names = require "uphook.core.names"
local hookerror = require "uphook.core.hookerror"
local nodes = require "uphook.engine.nodes"
local args = require "uphook.engine.prims.args"
local permissions = require "uphook.engine.permissions"
local argerr, checktype = args.argerr, args.checktype
local need = permissions.need

local M = {}

local ROOTS = { args = true, bin = true, plugins = true, addon = true,
  state = true }

--- Split "root:rel" and check it; returns root name, root dir, rel.
M.MAX_PATH = 4096

local function split_path(run, path, n, fname)
  checktype(path, "string", n, fname)
  if #path > M.MAX_PATH then
    argerr(n, fname, string.format("path longer than %d bytes (%d)",
      M.MAX_PATH, #path))
  end
  local root, rel = path:match("^(%a+):(.*)$")
  if not root or not ROOTS[root] then
    argerr(n, fname, "path must be args:, bin:, plugins:, addon: or state:, "
      .. "got "
      .. names.quote(path))
  end
  if rel == "" or rel:sub(1, 1) == "/" or rel:find("\0", 1, true) then
    error(string.format("%s: path leaves its root: %s", fname, path), 0)
  end
  for part in rel:gmatch("[^/]+") do
    if part == ".." then
      error(string.format("%s: path leaves its root: %s", fname, path), 0)
    end
  end
  return root, run.roots[root], rel
end

--- A failed operation on a file: an error value naming it (`root:rel`).
local function fs_ok(path, v, err, ...)
  if v == nil and err then hookerror.raise("IOError", err, { path = path }) end
  return v, err, ...
end

--- A failed transfer: an error value with the URL and, when the server
--- answered, its HTTP status.
local function net_ok(url, v, err, reason, status)
  if v == nil and err then
    hookerror.raise(reason or "NetworkError", err, { url = url,
      code = math.tointeger(status) })
  end
  return v
end

--- The permission to change a file: args:<service>, bin:<file> or
--- plugins:<file>.
local function need_write(run, root, rel, fname)
  if root == "state" then return end
  if root == "addon" then
    error(fname .. ": addon: files are read-only", 0)
  end
  local top = rel:match("^[^/]+")
  need(run, root .. ":" .. top, fname .. "(" .. root .. ":" .. rel .. ")")
end

--- On a cluster of several nodes an args: file is changed on every node
--- with config.set_args; a write of this node's copy alone would make the
--- nodes disagree, and MicroK8s's cluster agent cannot write a file. So
--- a write of a file under args: is refused there unless the hook says
--- `nodes = "this"`; the plan then warns that every node needs its own
--- run (docs/guide.md §6 "Several nodes").
local warned = setmetatable({}, { __mode = "k" })  -- said once per run
---@param where string|nil opts.nodes: nil or "this"
local function refuse_args_write(run, root, rel, fname, where, n)
  if where ~= nil and where ~= "this" then
    argerr(n or 3, fname:match("%.(%w+)$"), "nodes must be \"this\", got "
      .. tostring(where))
  end
  if root ~= "args" or fname == "config.set_args" then return end
  local others = nodes.others(run)
  if #others == 0 then return end
  if where == "this" then
    local msg = string.format("%s(args:%s) changes this node only "
      .. "(nodes = \"this\"): each of the other %d nodes needs its own run "
      .. "of this upgrade", fname, rel, #others)
    warned[run] = warned[run] or {}
    if not warned[run][msg] then
      warned[run][msg] = true
      run.report:log("warn", msg)
      plan.log(run, "warn", msg)
    end
    return
  end
  error(string.format("%s(args:%s) is refused on a cluster of %d nodes: "
    .. "it would change this node only; use config.set_args, which "
    .. "changes every node's flags (the cluster agent cannot write a file), "
    .. "or, for a file that is not flags, pass {nodes = \"this\"} and run "
    .. "the upgrade on every node", fname, rel, #others + 1), 0)
end

--- The options of config.write and config.install ({mode=, nodes=},
--- argument 3 of fname), checked, and the change of root:rel allowed
--- (need_write, refuse_args_write); example: a mode for the message.
local function write_opts(run, root, rel, opts, fname, example)
  opts = args.checkopts(opts, { mode = true, nodes = true }, 3, fname)
  if opts.mode ~= nil and (type(opts.mode) ~= "string"
     or not opts.mode:match("^0?[0-7][0-7][0-7]$")) then
    argerr(3, fname, "mode must be an octal string like \"" .. example
      .. "\"")
  end
  need_write(run, root, rel, "config." .. fname)
  refuse_args_write(run, root, rel, "config." .. fname, opts.nodes, 3)
  return opts
end

--- This node's name when the cluster has other nodes: the plan says
--- that an args:, bin: or plugins: change is made on this node (a bin: or
--- plugins: change only ever is).
local function node_label(run, root)
  if root ~= "args" and root ~= "bin" and root ~= "plugins" then
    return nil
  end
  local top = run.topology or nodes.topology(run)
  return #top.others > 0 and top.this and top.this.name or nil
end

--- Journal, then write (or only record under plan).
--- The mode a write leaves: the hook's, else the existing file's (which
--- also keeps its owner and group: host/fs.c), else 0644. A mode the hook
--- gives may not let other users write: never world-writable, and
--- group-writable only when the file's group is the snap's (the
--- cluster-agent writes args files 0660, group microk8s).
local SNAP_GROUPS = { microk8s = true, snap_microk8s = true }
local function file_mode(path, st, mode, fname)
  if mode == nil then return st and st.mode or "0644" end
  local m = tonumber(mode, 8)
  if m & 2 ~= 0 then
    error(string.format("%s(%s): mode %s is world-writable", fname, path,
      mode), 0)
  end
  if m & 16 ~= 0 and not (st and SNAP_GROUPS[st.group]) then
    error(string.format("%s(%s): mode %s is group-writable, and the file's "
      .. "group is %s, not the snap's (microk8s or snap_microk8s)", fname,
      path, mode, st and tostring(st.group or st.gid) or "root (a new file)"),
      0)
  end
  return string.format("%04o", m)
end

--- What the addon's state: files may take (--state-quota, default 16 MiB),
--- each file and folder charged at least one 4 KiB block, checked before
--- the write and under plan alike: a hook with no permissions cannot fill
--- the node's disk.
M.STATE_QUOTA = 16 << 20
local function blocks(n)
  if n == nil then return 0 end
  return math.max(4096, (n + 4095) // 4096 * 4096)
end

local function charge_state(run, dir, rel, old, new, fname)
  local quota = run.state_quota or M.STATE_QUOTA
  if not run.state_used then
    run.state_used = fs_ok("state:", run.c.fs.usage(dir, quota))
  end
  -- a new file may create a folder for each component of its path
  local folders = old == nil and new ~= nil and select(2, rel:gsub("/", ""))
    or 0
  local used = run.state_used - blocks(old) + blocks(new) + folders * 4096
  if new ~= nil and used > quota then
    hookerror.raise("QuotaExceeded", string.format("%s(state:%s): the addon's "
      .. "state: files would take %d bytes, more than --state-quota (%d "
      .. "bytes)", fname, rel, used, quota), { path = "state:" .. rel })
  end
  run.state_used = used
end

local function change_file(run, root, dir, rel, new, mode, fname)
  local path = root .. ":" .. rel
  local prior = fs_ok(path, run.c.fs.read(dir, rel))
  local st = prior and run.c.fs.stat(dir, rel)
  mode = new ~= nil and file_mode(path, st, mode, fname) or nil
  local node = node_label(run, root)
  if prior == new and (st and st.mode) == mode then
    plan.file(run, path, prior, new, mode, node)
    return false
  end
  if root == "state" then
    charge_state(run, dir, rel, prior and #prior, new and #new, fname)
  end
  if not run.plan then
    rollback.record(run, { op = "file", root = root, path = rel,
      prior = prior, mode = st and st.mode })
    if new == nil then
      fs_ok(path, run.c.fs.remove(dir, rel))
    else
      fs_ok(path, run.c.fs.write(dir, rel, new, mode))
    end
    rollback.changed(run)
  end
  plan.file(run, path, prior, new, mode, node)
  return true
end

-- what the other files of lua/engine/prims (and batch.lua) use
M.file_mode, M.split_path, M.fs_ok, M.net_ok, M.need_write,
M.refuse_args_write, M.node_label, M.charge_state, M.change_file,
M.write_opts =
  file_mode, split_path, fs_ok, net_ok, need_write, refuse_args_write,
  node_label, charge_state, change_file, write_opts

return M

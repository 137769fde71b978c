--- uphook.engine.nodes: node settings on every node of the cluster
--- (docs/contract.md §4; docs/guide.md §6 "Several nodes").
---
--- The policy of a multi-node change, once, for every backend: which
--- nodes (this one by hostname, every other Node by its InternalIP), the
--- preflight, the prior value of a flag on another node (its kubelet's
--- configz where it shows the flag, else this node's, marked assumed),
--- the cluster-agent request bodies, the wait after a restart, and the
--- undo of a node's change. lua/engine/prims/ journals and plans around these
--- calls; lua/engine/rollback.lua undoes with them. The backend only carries one
--- request to a node (`agent_configure`, `kubelet_config`, `api_ready`:
--- docs/internals.md).
---
--- Imports: uphook.core.configz and uphook.core.ip (prims and rollback import
--- this).
local configz = require "uphook.core.configz"
local tables = require "uphook.core.tables"
local wait = require "uphook.engine.wait"

local M = {}

---Seconds between two looks at a restarted node.
M.POLL = 1
---Seconds a rollback or recover waits for a restarted node.
M.UNDO_WAIT = 300
---Where a node's resolv.conf candidates are, in upstream's order
---(canonical/microk8s@d099c907d3646a2dae3d3e33f07aef5a5bc8a090:
---scripts/find-resolv-conf.py).
M.RESOLV_CONFS = { "/etc/resolv.conf", "/run/systemd/resolve/resolv.conf" }

---@class uphook.ClusterNode
---@field name string
---@field address string|nil  its InternalIP
---@field ready boolean

---@class uphook.Topology
---@field this uphook.ClusterNode|nil  the node uphook runs on
---@field others uphook.ClusterNode[] every other node, by name
---@field names table<string, boolean>

local function entry(n)
  local st = type(n.status) == "table" and n.status or {}
  local e = { name = n.metadata.name, ready = false }
  for _, a in ipairs(type(st.addresses) == "table" and st.addresses or {}) do
    if type(a) == "table" and a.type == "InternalIP" and not e.address then
      e.address = a.address
    end
  end
  for _, c in ipairs(type(st.conditions) == "table" and st.conditions or {})
  do
    if type(c) == "table" and c.type == "Ready" then
      e.ready = c.status == "True"
    end
  end
  return e
end

local function is_this(run, n)
  local labels = type(n.metadata.labels) == "table" and n.metadata.labels
                 or {}
  return n.metadata.name == run.hostname
    or labels["kubernetes.io/hostname"] == run.hostname
end

---The cluster's nodes now (and kept in `run.topology`).
---@param run table
---@return uphook.Topology
function M.topology(run)
  local top = { others = {}, names = {} }
  for _, n in ipairs(run.backend:list("v1/Node", {})) do
    local e = entry(n)
    top.names[e.name] = true
    if not top.this and is_this(run, n) then top.this = e
    else top.others[#top.others + 1] = e end
  end
  table.sort(top.others, function(a, b) return a.name < b.name end)
  run.topology = top
  return top
end

local sorted_keys = tables.keys

local function names_of(list)
  local out = {}
  for _, n in ipairs(list) do out[#out + 1] = n.name end
  return table.concat(out, ", ")
end

--- A node that cannot be addressed is an error naming it.
local function check_addresses(run, top)
  if #top.others > 0 and not top.this then
    error(string.format("this host (%s) is not a Node of the cluster "
      .. "(nodes: %s): run uphook on one of them", tostring(run.hostname),
      names_of(top.others)), 0)
  end
  local seen, bad = {}, {}
  if top.this and top.this.address then seen[top.this.address] = top.this.name end
  for _, n in ipairs(top.others) do
    if not n.address or n.address == "" then
      bad[#bad + 1] = string.format("node %s has no InternalIP address: its "
        .. "cluster-agent cannot be reached", n.name)
    elseif seen[n.address] then
      bad[#bad + 1] = string.format("nodes %s and %s have the same "
        .. "InternalIP %s", seen[n.address], n.name, n.address)
    else seen[n.address] = n.name end
  end
  if #bad > 0 then error(table.concat(bad, "; "), 0) end
end

local function array(run, t)
  local y = run.c.yaml
  return y and y.array and y.array(t) or t
end

local function timeout_of(run)
  return run.remaining and run:remaining() or M.UNDO_WAIT
end

---Send configure requests (in parallel on the live backend); returns the
---results in order. Each call is bounded by what is left of the run's
---`--timeout`, unless `timeout` is given (an undo: a rollback after the
---run's time ran out still gives each node its own wait).
---@param run table
---@param reqs {node: string, address: string, body: table}[]
---@param timeout? number seconds
---@return table[] results
function M.send(run, reqs, timeout)
  if #reqs == 0 then return {} end
  return run.backend:agent_configure(reqs,
    { timeout = timeout or timeout_of(run) })
end

--- The reasons of an agent error that mean the request never reached the
--- node (docs/internals.md): nothing to undo.
local UNDELIVERED = { Unreachable = true, TLSError = true, BadAddress = true,
  NoToken = true, NoCA = true }

--- A failed result's error: `{ok=false, error={...}}` (the seam's shape;
--- a flat `{ok=false, reason=, message=}` is read the same).
local function err_of(result)
  return type(result.error) == "table" and result.error or result
end

---Was a failed request surely not delivered (nothing to undo)?
---@param result table
---@return boolean
function M.undelivered(result)
  return not result.ok and UNDELIVERED[err_of(result).reason] == true
end

local function message(e)
  if type(e) == "table" then return tostring(e.message or "error") end
  return tostring(e)
end

--- A result's message, which names the node and its address.
local function failure(req, r)
  local m = message(err_of(r))
  if not m:find(req.node, 1, true) then
    m = string.format("node %s (%s): %s", req.node, tostring(req.address), m)
  end
  return m
end
M.failure = failure

---Before the first change of a hook with `args:` or `restart:`
---permissions, on a cluster of several nodes: every Node is Ready, every
---other node has an address, and its cluster-agent takes a configure
---request with an empty service list (a no-op that proves TLS and the
---callback token). Raises naming every node that failed.
---@param run table
function M.preflight(run)
  local top = M.topology(run)
  run.preflight = top
  if #top.others == 0 then return end
  check_addresses(run, top)
  local bad = {}
  for _, n in ipairs({ top.this, table.unpack(top.others) }) do
    if not n.ready then
      bad[#bad + 1] = string.format("node %s is not Ready", n.name)
    end
  end
  local reqs = {}
  for _, n in ipairs(top.others) do
    reqs[#reqs + 1] = { node = n.name, address = n.address,
      body = { service = array(run, {}) } }
  end
  for i, r in ipairs(M.send(run, reqs)) do
    if not r.ok then bad[#bad + 1] = failure(reqs[i], r) end
  end
  if #bad > 0 then
    error("preflight: " .. table.concat(bad, "; ") .. "; nothing was "
      .. "changed", 0)
  end
end

---The other nodes a change goes to now. The set is the preflight's: a
---node that joined or left since is an error naming it.
---@param run table
---@return uphook.ClusterNode[]
function M.others(run)
  local before = run.preflight
  local top = M.topology(run)
  if #top.others == 0 and not (before and #before.others > 0) then
    return {}
  end
  if not before or #before.others == 0 then
    error(string.format("node %s joined the cluster during the upgrade: "
      .. "run it again once every node is Ready", top.others[1].name), 0)
  end
  for name in pairs(top.names) do
    if not before.names[name] then
      error(string.format("node %s joined the cluster during the upgrade: "
        .. "run it again once every node is Ready", name), 0)
    end
  end
  for name in pairs(before.names) do
    if not top.names[name] then
      error(string.format("node %s left the cluster during the upgrade",
        name), 0)
    end
  end
  check_addresses(run, top)
  return top.others
end

---The nodes a change with `nodes = {names}` goes to: whether this node
---is one of them, and the other nodes among them (each checked as
---M.others checks them). A name that is no node's is an error naming it.
---@param run table
---@param set table<string, true> the names
---@param fname string the primitive, for the message
---@return boolean this, uphook.ClusterNode[] others
function M.select(run, set, fname)
  local all = M.others(run)
  local top = run.topology
  local this = top.this and top.this.name or run.hostname
  local picked, known = {}, { [this] = true }
  for _, n in ipairs(all) do
    known[n.name] = true
    if set[n.name] then picked[#picked + 1] = n end
  end
  for _, name in ipairs(sorted_keys(set)) do
    if not known[name] then
      error(string.format("%s: no node is named %s (nodes: %s)", fname,
        name, table.concat(sorted_keys(known), ", ")), 0)
    end
  end
  return set[this] == true, picked
end

---This node's name in the cluster (nil without Nodes).
---@param run table
---@return string|nil
function M.this_name(run)
  local top = run.topology or M.topology(run)
  return top.this and top.this.name
end

--- Values --------------------------------------------------------------------

---The value as the args file holds it (the quoting host/argsfile.c
---writes), for the agent, which writes `key=value` as it gets it. A bare
---flag (`true`) is sent as "true".
---@param run table
---@param flag string
---@param v string|true
---@return string
function M.render(run, flag, v)
  if v == true then return "true" end
  return (run.c.argsfile.edit("", { [flag] = v })):match("^[^=]*=(.*)\n$")
end

local function differ(a, b)
  return configz.normal(a) ~= configz.normal(b)
end
M.differ = differ


---What a node had for `flags`: read from its kubelet's configz where it
---shows the flag (a value equal to the kubelet's default reads as this
---node's line when this node has none or the default, else as absent),
---else this node's value, assumed.
---@param run table
---@param node string
---@param service string
---@param flags string[]
---@param here table<string, string|true> this node's parsed args
---@return table<string, string|true|false> prior, table<string, string> how
function M.priors(run, node, service, flags, here)
  local kc, shown = nil, false
  for _, flag in ipairs(flags) do shown = shown or configz.FLAGS[flag] ~= nil end
  -- configz is read only when it shows one of the flags
  if service == "kubelet" and shown then
    local ok, v = pcall(run.backend.kubelet_config, run.backend, node)
    kc = ok and type(v) == "table" and v or nil
  end
  local prior, how = {}, {}
  for _, flag in ipairs(flags) do
    local f, mine = configz.FLAGS[flag], here[flag]
    if kc and f then
      local v = configz.value(kc, flag, run.null)
      if v == nil or v == f.default then
        local h = configz.normal(mine)
        prior[flag] = (h == nil or h == f.default) and (mine or false)
                      or false
      else
        prior[flag] = v
      end
      how[flag] = "read"
    else
      -- absent here: assumed absent there (false, docs/state.md), never nil
      if mine == nil then prior[flag] = false else prior[flag] = mine end
      how[flag] = "assumed"
    end
  end
  return prior, how
end

---The args of a service on a node, as well as uphook can know them:
---this node's file, with every flag the node's configz shows read from it.
---@param run table
---@param service string
---@param node string
---@param here table<string, string|true> this node's parsed args
---@return table<string, string|true> values, table<string, string> how
function M.view(run, service, node, here)
  local flags = {}
  for k in pairs(here) do flags[#flags + 1] = k end
  if service == "kubelet" then
    for k in pairs(configz.FLAGS) do
      if here[k] == nil then flags[#flags + 1] = k end
    end
  end
  local prior, how = M.priors(run, node, service, flags, here)
  local values = {}
  for k, v in pairs(prior) do
    if v ~= false then values[k] = v else
      if how[k] == "assumed" then how[k] = nil end
    end
  end
  return values, how
end

---The change to send a node: a node counts as changed when a flag's
---known prior differs from its new value (`changes` lists those). The
---node receives exactly those flags (`prior`, `how` and `new` hold only
---them), as the plan shows them, and its journal record holds the prior
---of each (false: absent), so that a rollback removes a flag it added.
---@param run table
---@param others uphook.ClusterNode[]
---@param service string
---@param changes table<string, string|boolean>
---@param here table<string, string|true> this node's args before the change
---@param assume boolean false: a prior that cannot be read counts as
---  different (the change goes to the node whatever it has)
---@return table[] per changed node: {node, address, prior, how, new, changes}
function M.plan_args(run, others, service, changes, here, assume)
  local flags = sorted_keys(changes)
  local out = {}
  for _, n in ipairs(others) do
    local prior, how = M.priors(run, n.name, service, flags, here)
    local e = { node = n.name, address = n.address, service = service,
      prior = {}, how = {}, new = {}, changes = {} }
    for _, flag in ipairs(flags) do
      local new = changes[flag]
      if differ(prior[flag], new)
         or (assume == false and how[flag] == "assumed") then
        e.prior[flag], e.how[flag], e.new[flag] = prior[flag], how[flag], new
        e.changes[#e.changes + 1] = { flag = flag, prior = prior[flag],
          how = how[flag], new = new }
      end
    end
    if #e.changes > 0 then out[#out + 1] = e end
  end
  return out
end

---The configure request that sets `values` (string, true, or false to
---remove) of a service on a node.
---@param run table
---@param node string
---@param address string
---@param service string
---@param values table<string, string|boolean>
---@return table request
function M.args_request(run, node, address, service, values)
  local upd, rm = {}, {}
  for _, flag in ipairs(sorted_keys(values)) do
    local v = values[flag]
    if v == false then rm[#rm + 1] = flag
    else upd[#upd + 1] = { [flag] = M.render(run, flag, v) } end
  end
  return { node = node, address = address, body = { service = array(run, {
    { name = service, arguments_update = array(run, upd),
      arguments_remove = array(run, rm), restart = false } }) } }
end

---The configure request that restarts a service on a node.
---@param run table
---@param node string
---@param address string
---@param service string
---@return table request
function M.restart_request(run, node, address, service)
  return { node = node, address = address, body = { service = array(run, {
    { name = service, restart = true } }) } }
end

--- Restarts ------------------------------------------------------------------

--- The looks of wait_ready, every M.POLL seconds.
local function poll_ready(run, name, timeout, w)
  local b = run.backend
  local deadline, last = b:now() + timeout, "absent"
  while true do
    w:tick()
    local ok, list = pcall(b.list, b, "v1/Node", {})
    local node
    for _, n in ipairs(ok and list or {}) do
      if n.metadata.name == name then node = entry(n) end
    end
    if node and node.ready then
      local okz, kc = pcall(b.kubelet_config, b, name)
      if okz and type(kc) == "table" then return end
      last = "Ready, but its kubelet's configz does not answer"
    elseif node then last = "not Ready"
    elseif not ok then last = "the API server does not answer"
    end
    w:see(last)
    if b:now() >= deadline then
      error(string.format("node %s did not come back within %gs after the "
        .. "restart (last seen: %s)", name, timeout, last), 0)
    end
    w:sleep(M.POLL)
  end
end

---Wait until a restarted node is Ready again with its kubelet's configz
---answering, polling every M.POLL seconds (a wait: lua/engine/wait.lua);
---raises on timeout.
---@param run table
---@param name string
---@param timeout number seconds
function M.wait_ready(run, name, timeout)
  wait.run(run, string.format("node %s to be Ready again after its restart",
    name), timeout, function(w) poll_ready(run, name, timeout, w) end)
end

---After this node's kubelite restart, which restarts the API server
---uphook talks to: wait until it answers, then for this node.
---@param run table
---@param timeout number
function M.after_local_restart(run, timeout)
  local b = run.backend
  if b.api_ready then
    local ok, err = wait.run(run, "the API server to answer after the "
      .. "kubelite restart", timeout, function(w)
        return b:api_ready(timeout, w.fn)
      end)
    if not ok then
      error("after the kubelite restart: " .. message(err), 0)
    end
  end
  local this = M.this_name(run)
  if this then M.wait_ready(run, this, timeout) end
end

--- Undo ----------------------------------------------------------------------

local function strip(m)
  return (m:gsub("^node %S+ %b(): ", ""))
end

---Put a node's args back as a `node_args` journal record had them.
---@param run table
---@param rec table
function M.undo_args(run, rec)
  local r = M.send(run, { M.args_request(run, rec.node, rec.address,
    rec.service, rec.prior) }, M.UNDO_WAIT)[1]
  if not r.ok then error(strip(message(err_of(r))), 0) end
end

---Restart a service on a node again (its args were restored) and wait
---for it.
---@param run table
---@param rec table a `node_restart` record
function M.restart_again(run, rec)
  local r = M.send(run, { M.restart_request(run, rec.node, rec.address,
    rec.service) }, M.UNDO_WAIT)[1]
  if not r.ok then error(strip(message(err_of(r))), 0) end
  M.wait_ready(run, rec.node, M.UNDO_WAIT)
end

---`node node-b (10.0.0.12)`
---@param rec table
---@return string
function M.label(rec)
  return string.format("node %s (%s)", tostring(rec.node),
    tostring(rec.address))
end

--- resolv.conf ---------------------------------------------------------------

local ip = require "uphook.core.ip"

local function usable(text)
  local servers = {}
  for line in text:gmatch("[^\n]+") do
    local ns = line:match("^%s*nameserver%s+(%S*)%s*$")
    if ns then servers[#servers + 1] = ns end
  end
  if #servers == 0 then return false end
  for _, s in ipairs(servers) do
    local a = ip.parse(s)
    if not a then     -- a scoped IPv6 address: fe80::1%2
      local base = s:match("^([^%%]+)%%")
      a = base and ip.parse(base)
      if a and a.version ~= 6 then a = nil end
    end
    if not a or ip.is_loopback(a) then return false end
  end
  return true
end

---This node's resolv.conf with non-loopback nameservers: the first of
---M.RESOLV_CONFS whose nameservers are all valid non-loopback addresses,
---as upstream's find-resolv-conf.py picks it; nil when none is. The files
---are read under `run.host_root` (tests and offline worlds give their
---own; "" is the real host).
---@param run table
---@return string|nil path
function M.resolv_conf(run)
  for _, path in ipairs(M.RESOLV_CONFS) do
    local text = run.c.sys.read((run.host_root or "") .. path)
    if text and usable(text) then return path end
  end
  return nil
end

return M

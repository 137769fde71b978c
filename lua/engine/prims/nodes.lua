--- uphook.engine.prims.nodes: the nodes.* primitives and service.restart, on
--- every node of a cluster (lua/engine/nodes.lua has the policy of which
--- nodes, priors and rolling restarts).
local rollback = require "uphook.engine.rollback"
local plan = require "uphook.engine.plan"
local nodes = require "uphook.engine.nodes"
local args = require "uphook.engine.prims.args"
local permissions = require "uphook.engine.permissions"
local argerr, checktype, checkopts, scope =
  args.argerr, args.checktype, args.checkopts, args.scope
local need = permissions.need

local M = {}
local H = {}   -- handlers by primitive name (prims.lua dispatches)
M.handlers = H

local function node_entry(n)
  local st, md = n.status or {}, n.metadata or {}
  local labels = md.labels or {}
  local e = { name = md.name, labels = labels, roles = {},
    arch = labels["kubernetes.io/arch"], os = labels["kubernetes.io/os"],
    kubelet_version = (st.nodeInfo or {}).kubeletVersion,
    unschedulable = (n.spec or {}).unschedulable == true,
    ready = false, addresses = {} }
  for k in pairs(labels) do
    local role = k:match("^node%-role%.kubernetes%.io/(.+)$")
    if role then e.roles[#e.roles + 1] = role end
  end
  table.sort(e.roles)
  for _, c in ipairs(st.conditions or {}) do
    if c.type == "Ready" then e.ready = c.status == "True" end
  end
  for _, a in ipairs(st.addresses or {}) do
    e.addresses[#e.addresses + 1] = { type = a.type, address = a.address }
  end
  return e
end

---nodes.list.
---@param run uphook.Run
---@return table[] nodes in the shape of docs/contract.md §4
function H.nodes_list(run)
  local out = {}
  for _, n in ipairs(run.backend:list("v1/Node", {})) do
    out[#out + 1] = node_entry(n)
  end
  return out
end

---nodes.this: the node named (or labelled) as this host.
---@param run uphook.Run
---@return table node
function H.nodes_this(run)
  local host = run.hostname
  local all = run.backend:list("v1/Node", {})
  for _, n in ipairs(all) do
    local labels = n.metadata.labels or {}
    if n.metadata.name == host or labels["kubernetes.io/hostname"] == host
    then return node_entry(n) end
  end
  error(string.format("nodes.this: no node is named %q or labelled "
    .. "kubernetes.io/hostname=%s (%d nodes)", tostring(host),
    tostring(host), #all), 0)
end

---nodes.kubelet_config: a node's running kubelet configuration (configz).
---@param run uphook.Run
---@param name string the node's name
---@return table kubeletconfig
function H.nodes_kubelet_config(run, name)
  checktype(name, "string", 1, "kubelet_config")
  local kc, err = run.backend:kubelet_config(name)
  if type(kc) ~= "table" then
    error(string.format("nodes.kubelet_config(%s): %s", name,
      type(err) == "table" and tostring(err.message) or tostring(err)), 0)
  end
  return kc
end

---nodes.resolv_conf: this node's resolv.conf with upstream nameservers.
---@param run uphook.Run
---@return string|nil path
function H.nodes_resolv_conf(run)
  return nodes.resolv_conf(run)
end

--- Restart on another node: journaled, then the agent's restart, then
--- the node must be Ready again with its kubelet answering.
local function restart_remote(run, name, n)
  plan.restart(run, name, n.name, n.address)
  if run.plan then return end
  local rec = { op = "node_restart", node = n.name, address = n.address,
    service = name }
  rollback.record(run, rec)
  local req = nodes.restart_request(run, n.name, n.address, name)
  local r = nodes.send(run, { req })[1]
  if not r.ok then
    rec.unsent = nodes.undelivered(r)
    error(string.format("service.restart(%s): %s", name,
      nodes.failure(req, r)), 0)
  end
  rollback.changed(run)
  nodes.wait_ready(run, n.name, run:remaining())
end

---service.restart: on every node (opts.nodes), one node at a time, this
---node last; journaled, so a rollback restarts it again.
---@param run uphook.Run
---@param name string kubelite or microk8s.daemon-<name>
---@param opts table|nil {nodes = "all"|"this"|"changed"|string[]}
function H.service_restart(run, name, opts)
  checktype(name, "string", 1, "restart")
  if name ~= "kubelite" and (#name > 128
     or not name:find("^microk8s%.daemon%-[%w%-]+$")) then
    argerr(1, "restart", "kubelite or a microk8s.daemon-* service expected")
  end
  opts = checkopts(opts, { nodes = true }, 2, "restart")
  local where, set = scope(opts, 2, "restart", { all = true, this = true,
    changed = true })
  need(run, "restart:" .. name, "service.restart(" .. name .. ")")
  local others = where ~= "this" and nodes.others(run) or {}
  local here = true
  if where == "list" then
    here, others = nodes.select(run, set, "service.restart(" .. name .. ")")
  end
  -- one node at a time, this node last: restarting every control plane
  -- at once would take the cluster down
  for _, n in ipairs(others) do
    if where ~= "changed" or run.changed_nodes[n.name] then
      restart_remote(run, name, n)
    end
  end
  if (where == "changed" and not run.changed_here) or not here then
    return
  end
  local this = #others > 0 and run.topology.this or {}
  plan.restart(run, name, this.name, this.address)
  if run.plan then return end
  rollback.record(run, { op = "restart", service = name })
  run.backend:restart(name)
  rollback.changed(run)
  if name == "kubelite" then
    nodes.after_local_restart(run, run:remaining())
  end
end

return M

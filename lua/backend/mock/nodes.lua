--- uphook.backend.mock.nodes: the mock cluster's Nodes as the engine sees
--- them: nodes() and this_node() in the shape of nodes.list()
--- (docs/contract.md §4), and the Backend's node methods (agent_configure,
--- kubelet_config, api_ready; lua/core/backend.lua), which attach_nodes
--- gives the cluster with its nodes' agents (lua/backend/mock/agent.lua).
--- Methods of the mock cluster (lua/backend/mock/cluster.lua installs them).
local kinds = require "uphook.backend.mock.kinds"
local tables = require "uphook.core.tables"
local refusals = require "uphook.backend.mock.refusals"
local validate = require "uphook.backend.mock.validate"
local ctl = require "uphook.backend.mock.controllers"

local M = {}

local copy = tables.copy

---Give the mock cluster's class these methods.
---@param Cluster table the class of lua/backend/mock/cluster.lua
function M.install(Cluster)

local Nodes = {}

---Cluster-agent configure requests, answered in order by each node's
---mock agent (uphook.backend.mock.agent).
---@param reqs {node: string, address: string, body: table}[]
---@return table[] results
function Nodes:agent_configure(reqs)
  return self.agents:configure(reqs, self:list("v1/Node"))
end

---A node's running kubelet configuration (its configz).
---@param name string
---@return table|nil kubeletconfig, table|nil err
function Nodes:kubelet_config(name)
  if not self:get("v1/Node", name) then
    return nil, refusals.not_found(kinds.builtin.Node, name)
  end
  return self.agents:kubelet_config(name)
end

---After this node's kubelite restart: the mock API server answers at once.
---@return boolean
function Nodes:api_ready()
  return true
end

---Give the cluster its nodes' files, kubelets and agents: from now on it
---has the backend's node methods (a mock without them, as `list` and
---`doctor` use without a state dir, reads no node).
---@param agents MockAgents
function Cluster:attach_nodes(agents)
  self.agents = agents
  for k, f in pairs(Nodes) do self[k] = f end
end

local function node_info(n)
  local labels = type(n.metadata.labels) == "table" and n.metadata.labels
                 or {}
  local roles = {}
  for k in pairs(labels) do
    local r = k:match("^node%-role%.kubernetes%.io/(.+)$")
    if r then roles[#roles + 1] = r end
  end
  table.sort(roles)
  local st = type(n.status) == "table" and n.status or {}
  local ni = type(st.nodeInfo) == "table" and st.nodeInfo or {}
  local addrs = {}
  for _, a in ipairs(type(st.addresses) == "table" and st.addresses or {}) do
    if type(a) == "table" and a.address then
      addrs[#addrs + 1] = { type = a.type, address = a.address }
    end
  end
  return { name = n.metadata.name, ready = ctl.condition_true(n, "Ready"),
    roles = roles,
    arch = ni.architecture or labels["kubernetes.io/arch"],
    os = ni.operatingSystem or labels["kubernetes.io/os"],
    kubelet_version = ni.kubeletVersion, labels = copy(labels),
    addresses = addrs,
    unschedulable = validate.get(n, "spec", "unschedulable") == true }
end

---Nodes in the shape of docs/contract.md §4 nodes.list(), sorted by name.
---@return table[]
function Cluster:nodes()
  local out = {}
  for i, n in ipairs(self:list("Node")) do out[i] = node_info(n) end
  return out
end

---The node uphook runs on: opts.this_node, else the first by name.
---@return table|nil
function Cluster:this_node()
  for _, n in ipairs(self:nodes()) do
    if not self.this_node_name or n.name == self.this_node_name then
      return n
    end
  end
  return nil
end

end

return M

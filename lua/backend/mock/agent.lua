--- uphook.backend.mock.agent: the nodes of a mock cluster, each with its own
--- `$SNAP_DATA/args/` files, its kubelet and its MicroK8s cluster-agent.
---
--- The mock backend (uphook.backend.mock.cluster) delegates the node methods of
--- the backend interface here (docs/internals.md): `agent_configure`,
--- `kubelet_config`, `restart`. No policy: the engine decides which
--- nodes, priors, journal records and restarts (lua/engine/nodes.lua). This only
--- behaves as a node would:
---
--- * `POST /cluster/api/v1.0/configure` as the cluster-agent does it
---   (canonical/microk8s-cluster-agent@33e4ad065b749e9b27aadad46ad7648e25442bc7:
---   pkg/api/v1/configure.go, pkg/snap/services.go): `arguments_update`
---   replaces `--key=value` lines in place and appends new keys,
---   `arguments_remove` drops keys, every line is trimmed and blank lines
---   are dropped; `restart` restarts the service; an empty service list
---   does nothing (it proves the token);
--- * a kubelet's configz shows the args its kubelet last (re)started
---   with (uphook.core.configz), not the file as it is now: a change that was
---   not followed by a restart does not show;
--- * faults, one per node, in `<node dir>/agent`: `unreachable` (no
---   connection; configz fails too), `tls` (a certificate the cluster CA
---   did not sign), `token` (the agent refuses the callback token),
---   `error[: message]` (HTTP 500), `down-after-restart` (the agent works,
---   but once restarted the node's kubelet never answers again).
---
--- Files: this node's args are the world's `args:` root; another node's
--- are `<nodes_dir>/<name>/args/`; every node's running kubelet args are
--- `<nodes_dir>/<name>/kubelet.running`.
local configz = require "uphook.core.configz"
local objnames = require "uphook.core.names"

local M = {}

---@class MockAgents
---@field restarts table<string, string[]>  node -> services restarted, in order
---@field down table<string, boolean>  nodes whose kubelet no longer answers
local Agents = {}
Agents.__index = Agents

---@class MockAgentsOptions
---@field fs {read: fun(dir: string, rel: string): string|nil, write: fun(dir: string, rel: string, data: string): any}
---@field nodes_dir string   absolute folder of the node folders
---@field this_args string   absolute folder of this node's args files
---@field this_node? string  this node's name
---@field parse fun(text: string): table  an args-file parser (c.argsfile.parse)

---@param o MockAgentsOptions
---@return MockAgents
function M.new(o)
  return setmetatable({ fs = o.fs, nodes_dir = o.nodes_dir,
    this_args = o.this_args, this_node = o.this_node, parse = o.parse,
    restarts = {}, down = {} }, Agents)
end

---A node's own folder: `<nodes_dir>/<name>`. Raises unless `node` is a
---valid Node name (a DNS-1123 subdomain, as the API server has it): a
---fixture's Node named `../x` would otherwise put its files outside the
---world (docs/security.md, "Offline worlds and uphook test").
---@param node string
---@return string
function Agents:node_dir(node)
  local why = objnames.name_problem("Node", node)
  if why then
    error(string.format("node name %s is invalid: %s", objnames.quote(node),
      why), 0)
  end
  return self.nodes_dir .. "/" .. node
end

---The folder of a node's args files.
---@param node string
---@return string
function Agents:args_dir(node)
  if node == self.this_node then return self.this_args end
  return self:node_dir(node) .. "/args"
end

---A node's args file, or nil.
---@param node string
---@param service string
---@return string|nil
function Agents:read(node, service)
  return (self.fs.read(self:args_dir(node), service))
end

function Agents:_write(node, service, text)
  local ok, err = self.fs.write(self:args_dir(node), service, text)
  if not ok then error(err, 0) end
end

---The fault a node is set to, or nil.
---@param node string
---@return string|nil
function Agents:fault(node)
  local f = self.fs.read(self:node_dir(node), "agent")
  return f and (f:gsub("%s+$", "")) or nil
end

--- canonical/microk8s-cluster-agent pkg/util/files.go ParseArgumentLine
local function parse_line(line)
  local k, v = line:match("^([^=]*)=([^=]*)")
  if k then return k, v end
  k, v = line:match("^(%S+) (.*)$")
  if k then return k, v end
  return line, ""
end

---The agent's rewrite of an args file (pkg/snap/services.go
---UpdateServiceArguments): in place, new keys appended (sorted here:
---the agent appends them in Go's map order), lines trimmed, blank ones
---dropped. The file is written even when nothing changed.
---@param text string|nil
---@param update {[string]: string}[]
---@param remove string[]
---@return string|nil new text, nil when there was nothing to do
function M.rewrite(text, update, remove)
  if #update == 0 and #remove == 0 then return nil end
  local upd, del, seen, out = {}, {}, {}, {}
  for _, m in ipairs(update) do
    for k, v in pairs(m) do upd[k] = v end
  end
  for _, k in ipairs(remove) do del[k] = true end
  for line in (text or ""):gmatch("[^\n]*") do
    line = line:match("^%s*(.-)%s*$")
    if line ~= "" then
      local key = parse_line(line)
      seen[key] = true
      if upd[key] ~= nil then out[#out + 1] = key .. "=" .. upd[key]
      elseif not del[key] then out[#out + 1] = line end
    end
  end
  local add = {}
  for k in pairs(upd) do if not seen[k] then add[#add + 1] = k end end
  table.sort(add)
  for _, k in ipairs(add) do out[#out + 1] = k .. "=" .. upd[k] end
  return table.concat(out, "\n") .. "\n"
end

-- Services whose restart restarts the kubelet.
local KUBELET_UNITS = { kubelite = true, kubelet = true,
  ["microk8s.daemon-kubelite"] = true, ["microk8s.daemon-kubelet"] = true }

---Restart a service on a node: recorded; a kubelet restart makes the
---kubelet run with the node's current kubelet args.
---@param node string
---@param service string
function Agents:restart(node, service)
  local list = self.restarts[node] or {}
  self.restarts[node] = list
  list[#list + 1] = service
  if KUBELET_UNITS[service] then
    self:_snapshot(node, true)
    if self:fault(node) == "down-after-restart" then self.down[node] = true end
  end
end

--- kubelet.running: what the kubelet runs with. Written when the world
--- is made (force=false: only if absent) and at each kubelet restart.
function Agents:_snapshot(node, force)
  local dir = self:node_dir(node)
  if not force and self.fs.read(dir, "kubelet.running") then return end
  local ok, err = self.fs.write(dir, "kubelet.running",
    self:read(node, "kubelet") or "")
  if not ok then error(err, 0) end
end

---Record what every node's kubelet runs with now (a new world).
---@param names string[]
function Agents:started(names)
  for _, n in ipairs(names) do self:_snapshot(n, false) end
end

local function agent_error(req, reason, code, msg)
  return { ok = false, error = { code = code, reason = reason,
    node = req.node, address = req.address,
    message = string.format("node %s (%s): %s", req.node,
      tostring(req.address), msg) } }
end

--- One configure request, as the node's agent answers it.
function Agents:_configure(req, known)
  local addr = known[req.node]
  if addr == nil or addr ~= req.address then
    return agent_error(req, "Unreachable", 0, string.format(
      "cannot connect to https://%s:25000: no route to host",
      tostring(req.address)))
  end
  local fault = self:fault(req.node)
  if fault == "unreachable" then
    return agent_error(req, "Unreachable", 0, string.format(
      "cannot connect to https://%s:25000: connection refused", addr))
  elseif fault == "tls" then
    return agent_error(req, "TLSError", 0, string.format("TLS with "
      .. "https://%s:25000: certificate verify failed: the agent's "
      .. "certificate is not signed by the cluster CA", addr))
  elseif fault == "token" then
    return agent_error(req, "AgentError", 500,
      "the cluster-agent answered 500: invalid token")
  elseif fault and fault:match("^error") then
    return agent_error(req, "AgentError", 500, "the cluster-agent answered "
      .. "500: " .. (fault:match("^error:%s*(.+)$") or "internal error"))
  end
  for _, svc in ipairs(req.body and req.body.service or {}) do
    local new = M.rewrite(self:read(req.node, svc.name),
      svc.arguments_update or {}, svc.arguments_remove or {})
    if new then self:_write(req.node, svc.name, new) end
    if svc.restart == true or svc.restart == "yes" then
      self:restart(req.node, svc.name)
    end
  end
  return { ok = true }
end

---Answer configure requests, in order.
---@param reqs {node: string, address: string, body: table}[]
---@param nodes table[] the cluster's Node objects
---@return table[] results
function Agents:configure(reqs, nodes)
  local known = {}
  for _, n in ipairs(nodes) do
    for _, a in ipairs(type(n.status) == "table"
        and type(n.status.addresses) == "table" and n.status.addresses or {})
    do
      if a.type == "InternalIP" then known[n.metadata.name] = a.address end
    end
  end
  local out = {}
  for i, req in ipairs(reqs) do out[i] = self:_configure(req, known) end
  return out
end

---A node's configz: what its kubelet runs with.
---@param node string
---@return table|nil kubeletconfig, table|nil err
function Agents:kubelet_config(node)
  if self.down[node] then
    return nil, { code = 503, reason = "ServiceUnavailable",
      message = string.format("node %s: the kubelet does not answer since "
        .. "its restart", node) }
  end
  if self:fault(node) == "unreachable" then
    return nil, { code = 503, reason = "ServiceUnavailable",
      message = string.format("error trying to reach service: dial tcp "
        .. "%s:10250: connect: connection refused (node %s)", node, node) }
  end
  local running = self.fs.read(self:node_dir(node), "kubelet.running") or self:read(node, "kubelet") or ""
  return configz.derive(self.parse(running))
end

return M

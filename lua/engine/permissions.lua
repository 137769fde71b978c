--- uphook.engine.permissions: the one home of the permission words a hook
--- declares (docs/reference.md "Permissions"; docs/security.md): their
--- grammar, what each names, and the checks where a primitive acts (the
--- permission it needs, the objects only uphook writes, the reads that
--- need a grant, the privileged objects).
local kinds = require "uphook.core.kinds"
local names = require "uphook.core.names"
local lease = require "uphook.engine.lease"
local podsecurity = require "uphook.engine.podsecurity"
local args = require "uphook.engine.prims.args"
local pkey = args.pkey

local M = {}

--- The grammar: every word a hook may declare, by family.
local GRAMMAR = {
  { "kube", "^kube:%*$" }, { "kube", "^kube:cluster$" },
  { "kube", "^kube:[a-z0-9][a-z0-9%-]*$" },
  { "net", "^net:http://[%w%.%-]+$" }, { "net", "^net:http://[%w%.%-]+:%d+$" },
  { "net", "^net:[%w%.%-]+$" }, { "net", "^net:[%w%.%-]+:%d+$" },
  { "args", "^args:[%w%-_.]+$" }, { "bin", "^bin:[%w%-_.]+$" },
  { "plugins", "^plugins:[%w%-_.]+$" },
  { "restart", "^restart:kubelite$" },
  { "restart", "^restart:microk8s%.daemon%-[%w%-]+$" },
}
M.MAX_PERM = 300          -- bytes of one word: longer is no permission
M.PRIVILEGED = "kube:privileged"

--- Where a family's changes happen on a cluster of several nodes.
local SCOPE = { args = "every node", restart = "every node",
  bin = "this node only", plugins = "this node only" }

---The family of a permission word ("kube", "net", "args", "bin",
---"plugins", "restart"), or nil when it is no permission.
---@param p any
---@return string|nil family
function M.family(p)
  if type(p) ~= "string" or #p > M.MAX_PERM then return nil end
  for _, g in ipairs(GRAMMAR) do
    if p:find(g[2]) then return g[1] end
  end
end

---The declared list as a set (what run.perms holds), each word checked.
---@param list string[] the hook's `permissions`
---@param bad fun(msg: string) called for the first word that is no permission
---@return table<string, true> perms
function M.parse(list, bad)
  local set = {}
  for i, p in ipairs(list) do
    if not M.family(p) then
      bad(string.format("permissions[%d]: unknown permission %q", i,
        tostring(p)))
    end
    set[p] = true
  end
  return set
end

---Does an args: permission name a config file (a name with an extension:
---`args:eventconfig.yaml`) rather than a service's flags? Only flags
---reach the other nodes (config.set_args, through MicroK8s's cluster
---agent, which cannot write a file); a config file changes on this node
---only (docs/guide.md §6 "Several nodes").
---@param p string
---@return boolean
function M.args_config_file(p)
  return M.family(p) == "args" and p:find(".", 6, true) ~= nil
end

---Where a permission's changes happen on a cluster of several nodes
---("every node", "this node only"), or nil (the cluster's API).
---@param p string
---@return string|nil
function M.scope(p)
  if M.args_config_file(p) then return "this node only" end
  return SCOPE[M.family(p) or ""]
end

---Does a hook with these permissions change node settings (args: or
---restart:)?
---@param perms table<string, true>
---@return boolean
function M.on_nodes(perms)
  for p in pairs(perms) do
    local f = M.family(p)
    if f == "args" or f == "restart" then return true end
  end
  return false
end

---The hosts the hook may reach, as uphook.c.http's allow list takes them:
---"host" (any port) or "host:port"; "net:http://host" allows plain http
---too (the rule itself is host/http_allow.c's).
---@param perms table<string, true>
---@return string[] https, string[] http
function M.net_hosts(perms)
  local https, http = {}, {}
  for p in pairs(perms) do
    local h = p:match("^net:http://(.+)$")
    if h then http[#http + 1] = h:lower()
    else
      h = p:match("^net:(.+)$")
      if h then https[#https + 1] = h:lower() end
    end
  end
  table.sort(https)
  table.sort(http)
  return https, http
end

local function need(run, perm, what)
  if not run.perms[perm] then
    error(string.format('permission denied: %s needs "%s" in the hook\'s '
      .. 'permissions', what, perm), 0)
  end
end

--- The host's own objects: the state ConfigMaps and Leases
--- uphook-<addon> in kube-system (docs/state.md). A hook writes none of
--- them, its own addon's included: the engine writes its state.
local HOST_NS, HOST_KINDS = "kube-system", { ConfigMap = true, Lease = true }
local function host_owned(kind, name, ns)
  return HOST_KINDS[names.short_kind(kind)] and ns == HOST_NS
    and type(name) == "string" and name:sub(1, #lease.PREFIX) == lease.PREFIX
end

--- Namespaces whose names are permission words: only kube:* covers them.
local RESERVED_NS = { cluster = true, privileged = true }

--- Is the hook allowed to change this object? An object without a
--- namespace goes to `default`, as kubectl sends it, and needs
--- kube:default.
local function need_kube(run, obj, verb)
  local scope = run.backend.namespaced and
    run.backend:namespaced(obj.apiVersion, obj.kind)
  local ns = obj.metadata and obj.metadata.namespace
  local what = string.format("%s of %s %s", verb, obj.kind,
    kinds.objname(obj))
  if scope == false or (scope == nil and not ns) then
    need(run, "kube:cluster", what)
  else
    ns = ns or "default"
    if RESERVED_NS[ns] then
      -- kube:cluster and kube:privileged are not namespace permissions
      need(run, "kube:*", what)
    end
    if host_owned(obj.kind, obj.metadata.name, ns) then
      error(string.format("%s refused: %s %s/%s belongs to uphook (the "
        .. "state and lock of an addon); hooks do not write it",
        verb, obj.kind, ns, obj.metadata.name), 0)
    end
    if not run.perms["kube:*"] then need(run, "kube:" .. ns, what) end
  end
end

--- Until the user's yes (docs/security.md, "Consent"), `run.granted` is
--- the set of the hook's permissions that the state records as granted
--- (none on a first upgrade): a Secret's data is read, and a request
--- leaves the machine, only under these. The engine sets it when a run
--- starts (lua/engine/phases.lua, lua/cmd/inventory.lua's detect) and
--- clears it at the yes; nil means no yes is pending.
---@param run uphook.Run
---@return table<string, true> perms what reads and requests may use now
function M.now(run)
  return run.granted or run.perms
end

---Record, once, a read or request withheld until the user's yes: the plan
---names it ("after your yes").
---@param run uphook.Run
---@param what string
function M.after_yes(run, what)
  run.withheld = run.withheld or {}
  if run.withheld[what] then return end
  run.withheld[what] = true
  run.entries[#run.entries + 1] = { type = "after_yes", text = what }
end

--- Reads of kinds whose contents are credentials need the namespace's
--- permission, where Kubernetes' own `view` role stops: Secrets (service
--- account tokens are Secrets, or TokenRequests no primitive can make).
--- Other objects are readable as far as the kubeconfig allows.
local CREDENTIAL_KINDS = { Secret = true }

---Is the data of a credential kind in `ns` (nil: every namespace)
---withheld now, its permission declared but not granted yet? The
---handlers then hand the objects over without their data (a Helm
---release's values are a Secret's data too: the same rule).
---@param run uphook.Run
---@param kind string
---@param ns string|nil
---@return boolean
function M.withheld_read(run, kind, ns)
  local g = run.granted
  if not g or not CREDENTIAL_KINDS[names.short_kind(kind)] or g["kube:*"] then
    return false
  end
  return ns == nil or not g["kube:" .. ns]
end
local function need_read(run, kind, ns, what)
  if not CREDENTIAL_KINDS[names.short_kind(kind)] or run.perms["kube:*"]
  then return end
  if ns == nil then
    need(run, "kube:*", what .. " of every namespace")
  end
  need(run, "kube:" .. ns, what)
end

--- Pods and pod templates outside the Pod Security Standards baseline,
--- and RBAC that hands out everything, need kube:privileged as well as
--- their namespace's permission. What the plan names, and why: nil when
--- the object is not privileged.
--- The API groups of the CRDs this run applies (its batch's too): `*`
--- verbs on a group only these define are the hook's own.
local function own_groups(run, pending)
  local out = {}
  for _, t in ipairs { run.applied or {}, pending or {} } do
    for k in pairs(t) do
      local g = k:match("^CustomResourceDefinition//[^.]+%.(.+)$")
      if g then out[g] = true end
    end
  end
  return out
end

local function need_privileged(run, obj, pending)
  local why = podsecurity.reasons(obj, function(kind, name, ns)
    -- a role applied before in the same batch, not sent yet
    local p = pending and pending[pkey(kind, name, ns)]
    if p then return p end
    if run.plan and run.planned[pkey(kind, name, ns)] ~= nil then
      return run.planned[pkey(kind, name, ns)] or nil
    end
    return run.backend:get(kind, name, ns)
  end, own_groups(run, pending))
  if #why == 0 then return end
  local what = string.format("%s %s: %s", obj.kind, kinds.objname(obj),
    table.concat(why, "; "))
  need(run, M.PRIVILEGED, "kube.apply of " .. what)
  return what
end

-- what the other files of lua/engine/prims (and batch.lua) use
M.need, M.host_owned, M.need_kube, M.need_read, M.need_privileged =
  need, host_owned, need_kube, need_read, need_privileged

return M

--- uphook.engine.podsecurity: what makes an object need `kube:privileged`
--- (docs/security.md, "What permissions guarantee").
---
--- `kube:<namespace>` lets a hook change a namespace; it must not be enough
--- to become root on every node or in the whole cluster. Two kinds of
--- objects are that:
---
--- * pods and pod templates that the Kubernetes Pod Security Standards
---   **baseline** profile forbids (kubernetes.io/docs/concepts/security/
---   pod-security-standards, the controls of v1.32, checked field by field
---   as pod-security-admission does);
--- * RBAC that amounts to root or cluster-admin, after Kubernetes' RBAC
---   good practices (kubernetes.io/docs/concepts/security/rbac-good-practices):
---   a role (or a binding to it) with `escalate`, `bind` or `impersonate`;
---   `*` in verbs, resources or apiGroups (but `*` verbs on a group only
---   the hook's own CRDs define); `get`, `list`, `watch` on `secrets`
---   cluster-wide; `create` on `serviceaccounts/token`, `pods/exec`,
---   `pods/attach`, `pods/ephemeralcontainers` cluster-wide; anything on
---   `nodes/proxy`; `approve` on a `kubernetes.io/*` or every signer;
---   writes to ClusterRoles, ClusterRoleBindings or webhook
---   configurations; aggregation; a binding to `cluster-admin`, `admin` or
---   `edit`;
--- * a PersistentVolume with `hostPath` or `local` (a PVC mounts it), and
---   a webhook configuration matching every resource, or core `pods` or
---   `secrets`: it sees or rewrites every such object.
local names = require "uphook.core.names"

local M = {}


-- the capabilities baseline allows to add (NET_BIND_SERVICE: CoreDNS)
local CAPS = { AUDIT_WRITE = true, CHOWN = true, DAC_OVERRIDE = true,
  FOWNER = true, FSETID = true, KILL = true, MKNOD = true,
  NET_BIND_SERVICE = true, SETFCAP = true, SETGID = true, SETPCAP = true,
  SETUID = true, SYS_CHROOT = true }
local SYSCTLS = { ["kernel.shm_rmid_forced"] = true,
  ["net.ipv4.ip_local_port_range"] = true,
  ["net.ipv4.ip_unprivileged_port_start"] = true,
  ["net.ipv4.tcp_syncookies"] = true, ["net.ipv4.ping_group_range"] = true,
  ["net.ipv4.ip_local_reserved_ports"] = true,
  ["net.ipv4.tcp_keepalive_time"] = true, ["net.ipv4.tcp_fin_timeout"] = true,
  ["net.ipv4.tcp_keepalive_intvl"] = true,
  ["net.ipv4.tcp_keepalive_probes"] = true }
local SELINUX_TYPES = { [""] = true, container_t = true,
  container_init_t = true, container_kvm_t = true, container_engine_t = true }
local PROFILE_TYPES = { RuntimeDefault = true, Localhost = true }
local BROAD_ROLES = { ["cluster-admin"] = true, admin = true, edit = true }
local APPARMOR = "container.apparmor.security.beta.kubernetes.io/"

local function tab(v)
  return type(v) == "table" and v or {}
end

local function list(v)
  local out = {}
  for _, x in ipairs(tab(v)) do out[#out + 1] = x end
  return out
end

--- The pod spec and its metadata in an object of a workload kind, or nil.
local function pod_of(obj)
  local k, spec = obj.kind, tab(obj.spec)
  if k == "Pod" then return spec, tab(obj.metadata) end
  local t
  if k == "CronJob" then
    t = tab(tab(tab(spec.jobTemplate).spec).template)
  elseif k == "PodTemplate" then
    t = tab(obj.template)
  elseif k == "Deployment" or k == "DaemonSet" or k == "StatefulSet"
      or k == "ReplicaSet" or k == "ReplicationController" or k == "Job" then
    t = tab(spec.template)
  else
    return nil
  end
  return tab(t.spec), tab(t.metadata)
end

--- A securityContext's seccomp, SELinux, AppArmor and procMount fields.
local function context_problems(sc, where, add)
  sc = tab(sc)
  local seccomp = tab(sc.seccompProfile).type
  if seccomp ~= nil and not PROFILE_TYPES[seccomp] then
    add(where .. "seccompProfile " .. tostring(seccomp))
  end
  local apparmor = tab(sc.appArmorProfile).type
  if apparmor ~= nil and not PROFILE_TYPES[apparmor] then
    add(where .. "appArmorProfile " .. tostring(apparmor))
  end
  local se = tab(sc.seLinuxOptions)
  if (se.type ~= nil and not SELINUX_TYPES[se.type])
     or (se.user ~= nil and se.user ~= "")
     or (se.role ~= nil and se.role ~= "") then
    add(where .. "seLinuxOptions")
  end
  if tab(sc.windowsOptions).hostProcess == true then
    add(where .. "windowsOptions.hostProcess")
  end
end

local function container_problems(c, add)
  local where = "container " .. names.quote(tab(c).name):sub(2, -2) .. ": "
  local sc = tab(tab(c).securityContext)
  if sc.privileged == true then add(where .. "privileged") end
  if sc.procMount ~= nil and sc.procMount ~= "Default" then
    add(where .. "procMount " .. tostring(sc.procMount))
  end
  for _, cap in ipairs(list(tab(sc.capabilities).add)) do
    if not CAPS[cap] then add(where .. "capability " .. tostring(cap)) end
  end
  for _, p in ipairs(list(tab(c).ports)) do
    local hp = tab(p).hostPort
    if hp ~= nil and hp ~= 0 then add(where .. "hostPort " .. tostring(hp)) end
  end
  context_problems(sc, where, add)
end

local function pod_problems(spec, md, add)
  for _, f in ipairs { "hostNetwork", "hostPID", "hostIPC" } do
    if spec[f] == true then add(f) end
  end
  for _, v in ipairs(list(spec.volumes)) do
    if tab(v).hostPath ~= nil then
      add("hostPath volume " .. names.quote(v.name):sub(2, -2) .. " ("
        .. tostring(tab(v.hostPath).path) .. ")")
    end
  end
  local sc = tab(spec.securityContext)
  context_problems(sc, "", add)
  for _, s in ipairs(list(sc.sysctls)) do
    if not SYSCTLS[tab(s).name] then add("sysctl " .. tostring(tab(s).name)) end
  end
  for k, v in pairs(tab(md.annotations)) do
    if type(k) == "string"
       and k:sub(1, #APPARMOR) == APPARMOR
       and v ~= "runtime/default" and not tostring(v):find("^localhost/") then
      add("AppArmor annotation " .. tostring(v))
    end
  end
  for _, f in ipairs { "initContainers", "containers", "ephemeralContainers" } do
    for _, c in ipairs(list(spec[f])) do container_problems(c, add) end
  end
end

local function set(v)
  local s = {}
  for _, x in ipairs(list(v)) do if type(x) == "string" then s[x] = true end end
  return s
end

local POWER_VERBS = { "bind", "escalate", "impersonate" }
local TAKEOVER = { "pods/attach", "pods/ephemeralcontainers", "pods/exec",
  "serviceaccounts/token" }
local GUARDS = { "clusterrolebindings", "clusterroles",
  "mutatingwebhookconfigurations", "validatingwebhookconfigurations" }
local WRITES = { "*", "create", "delete", "deletecollection", "patch",
  "update" }
local RBAC_GROUP = "rbac.authorization.k8s.io"

local function any_of(s, keys)
  for _, k in ipairs(keys) do if s[k] then return k end end
end

-- `*` verbs are the hook's own when every group of the rule is one only
-- its CRDs define (not core, not RBAC).
local function own_groups_only(groups, own)
  if next(groups) == nil then return false end
  for g in pairs(groups) do
    if g == "" or g == RBAC_GROUP or not own[g] then return false end
  end
  return true
end

-- Why one rule is privileged, or nil; `wide`: it applies cluster-wide.
local function rule_problem(r, wide, own)
  local verbs, res, groups = set(r.verbs), set(r.resources), set(r.apiGroups)
  local v = any_of(verbs, POWER_VERBS)
  if v then return "a rule with verb " .. v end
  for _, f in ipairs { "apiGroups", "resources", "nonResourceURLs" } do
    if set(r[f])["*"] then return "a rule with " .. f .. " \"*\"" end
  end
  if verbs["*"] and not own_groups_only(groups, own) then
    return "a rule with verbs \"*\""
  end
  local all = verbs["*"]
  if res["nodes/proxy"] then return "a rule on nodes/proxy" end
  if wide and res.secrets and (all or any_of(verbs, { "get", "list", "watch" }))
  then return "reads secrets cluster-wide" end
  local sub = wide and any_of(res, TAKEOVER)
  if sub and (all or verbs.create) then return "creates " .. sub .. " cluster-wide" end
  if res.signers and (all or verbs.approve) then
    local signers = list(r.resourceNames)
    if #signers == 0 then return "approves certificates of every signer" end
    for _, n in ipairs(signers) do
      if n == "*" or tostring(n):find("^kubernetes%.io/") then
        return "approves certificates of signer " .. tostring(n)
      end
    end
  end
  local guard = any_of(res, GUARDS)
  if guard and any_of(verbs, WRITES) then return "writes " .. guard end
end

--- Why a role is privileged (the RBAC good practices above), or nil.
---@param role table
---@param wide boolean it applies cluster-wide (a ClusterRole, or bound by a ClusterRoleBinding)
---@param own table<string, true> the API groups the hook's own CRDs define
---@return string|nil why
local function role_problem(role, wide, own)
  if tab(role).aggregationRule ~= nil then return "aggregates other roles" end
  for _, r in ipairs(list(tab(role).rules)) do
    local why = rule_problem(tab(r), wide, own)
    if why then return why end
  end
end

--- Webhooks that see or rewrite every object, or every Pod or Secret.
local function webhook_problem(obj)
  for _, w in ipairs(list(obj.webhooks)) do
    local wname = names.quote(tab(w).name):sub(2, -2)
    for _, r in ipairs(list(tab(w).rules)) do
      local res, groups = set(tab(r).resources), set(tab(r).apiGroups)
      if res["*"] or res["*/*"] then
        return "webhook " .. wname .. " matches every resource"
      end
      local core = groups[""] or groups["*"]
      local hit = core and any_of(res, { "pods", "pods/*", "secrets",
        "secrets/*" })
      if hit then return "webhook " .. wname .. " matches " .. hit end
    end
  end
end

local WEBHOOK_KINDS = { MutatingWebhookConfiguration = true,
  ValidatingWebhookConfiguration = true }

--- A volume on the node's own files.
local function pv_problem(obj)
  local spec = tab(obj.spec)
  for _, f in ipairs { "hostPath", "local" } do
    if spec[f] ~= nil then
      return f .. " PersistentVolume (" .. tostring(tab(spec[f]).path) .. ")"
    end
  end
end

local RBAC = "rbac.authorization.k8s.io/v1/"

--- Why `obj` needs kube:privileged: a list of reasons, empty when it does
--- not. `lookup(kind, name, namespace)` reads a role a binding names.
---@param obj table the object, as the hook applies it
---@param lookup fun(kind: string, name: string, namespace?: string): table|nil
---@param own? table<string, true> the API groups the hook's CRDs define
---@return string[] reasons
function M.reasons(obj, lookup, own)
  own = own or {}
  local out, seen = {}, {}
  local function add(why)
    if not seen[why] and #out < 16 then seen[why] = true; out[#out + 1] = why end
  end
  local spec, md = pod_of(obj)
  if spec then pod_problems(spec, md, add) end
  local k = obj.kind
  local why
  if k == "Role" or k == "ClusterRole" then
    why = role_problem(obj, k == "ClusterRole", own)
  elseif k == "PersistentVolume" then
    why = pv_problem(obj)
  elseif WEBHOOK_KINDS[k] then
    why = webhook_problem(obj)
  end
  if why then add(why) end
  if k == "RoleBinding" or k == "ClusterRoleBinding" then
    local ref = tab(obj.roleRef)
    if ref.kind == "ClusterRole" and BROAD_ROLES[ref.name] then
      add("binds ClusterRole " .. ref.name)
    elseif type(ref.name) == "string" and (ref.kind == "ClusterRole"
           or ref.kind == "Role") and names.name_problem(ref.kind, ref.name)
           == nil then
      local ns = ref.kind == "Role" and tab(obj.metadata).namespace or nil
      local role = lookup(RBAC .. ref.kind, ref.name, ns)
      why = role and role_problem(role, k == "ClusterRoleBinding", own)
      if why then add("binds " .. ref.kind .. " " .. ref.name .. ", " .. why) end
    end
  end
  return out
end

return M

-- What needs kube:privileged (docs/security.md "Namespace permission as
-- root", lua/engine/podsecurity.lua): each control of the Pod Security
-- Standards baseline, in a Pod and in the pod template of every workload
-- kind, and RBAC that hands out everything.
local t = require "uphook.test"
local ps = require "uphook.engine.podsecurity"
local plan = require "uphook.engine.plan"

local function none() return nil end

local function pod(spec, annotations)
  return { apiVersion = "v1", kind = "Pod",
    metadata = { name = "p", namespace = "default", annotations = annotations },
    spec = spec }
end

local function container(sc, extra)
  local c = { name = "c", image = "x", securityContext = sc }
  for k, v in pairs(extra or {}) do c[k] = v end
  return c
end

t.case("each baseline control is refused, each allowed value passes", function()
  local bad = {
    { "hostNetwork", { hostNetwork = true } },
    { "hostPID", { hostPID = true } },
    { "hostIPC", { hostIPC = true } },
    { "hostPath volume v (/var)", { volumes = { { name = "v",
      hostPath = { path = "/var" } } } } },
    { "container c: privileged", { containers = { container {
      privileged = true } } } },
    { "container c: capability SYS_ADMIN", { containers = { container {
      capabilities = { add = { "NET_BIND_SERVICE", "SYS_ADMIN" } } } } } },
    { "container c: hostPort 8080", { containers = { container(nil,
      { ports = { { containerPort = 80, hostPort = 8080 } } }) } } },
    { "container c: procMount Unmasked", { containers = { container {
      procMount = "Unmasked" } } } },
    { "seccompProfile Unconfined", { securityContext = {
      seccompProfile = { type = "Unconfined" } } } },
    { "container c: seccompProfile Unconfined", { containers = { container {
      seccompProfile = { type = "Unconfined" } } } } },
    { "appArmorProfile Unconfined", { securityContext = {
      appArmorProfile = { type = "Unconfined" } } } },
    { "seLinuxOptions", { securityContext = { seLinuxOptions = {
      type = "spc_t" } } } },
    { "container c: seLinuxOptions", { containers = { container {
      seLinuxOptions = { user = "system_u" } } } } },
    { "windowsOptions.hostProcess", { securityContext = {
      windowsOptions = { hostProcess = true } } } },
    { "sysctl kernel.core_pattern", { securityContext = { sysctls = {
      { name = "kernel.core_pattern", value = "|/x" } } } } },
    { "container c: privileged", { initContainers = { container {
      privileged = true } } } },
    { "container c: privileged", { ephemeralContainers = { container {
      privileged = true } } } },
  }
  for _, b in ipairs(bad) do
    t.eq(ps.reasons(pod(b[2]), none), { b[1] }, b[1])
  end
  t.eq(ps.reasons(pod({ containers = { container() } },
    { ["container.apparmor.security.beta.kubernetes.io/c"] = "unconfined" }),
    none), { "AppArmor annotation unconfined" })
  local good = pod({
    hostNetwork = false, hostPID = false, hostIPC = false,
    securityContext = { seccompProfile = { type = "RuntimeDefault" },
      appArmorProfile = { type = "Localhost" },
      seLinuxOptions = { type = "container_t" },
      sysctls = { { name = "net.ipv4.ip_unprivileged_port_start" },
                  { name = "net.ipv4.tcp_keepalive_time" } } },
    volumes = { { name = "d", emptyDir = {} } },
    containers = { container({ privileged = false, procMount = "Default",
      capabilities = { add = { "NET_BIND_SERVICE", "CHOWN" },
                       drop = { "ALL" } } },
      { ports = { { containerPort = 53, hostPort = 0 } } }) } },
    { ["container.apparmor.security.beta.kubernetes.io/c"] = "runtime/default" })
  t.eq(ps.reasons(good, none), {})
end)

t.case("pod templates of every workload kind are checked", function()
  local spec = { hostNetwork = true, containers = { container() } }
  local tmpl = { spec = spec }
  for _, o in ipairs {
    { kind = "Deployment", spec = { template = tmpl } },
    { kind = "DaemonSet", spec = { template = tmpl } },
    { kind = "StatefulSet", spec = { template = tmpl } },
    { kind = "ReplicaSet", spec = { template = tmpl } },
    { kind = "ReplicationController", spec = { template = tmpl } },
    { kind = "Job", spec = { template = tmpl } },
    { kind = "CronJob", spec = { jobTemplate = { spec = { template = tmpl } } } },
    { kind = "PodTemplate", template = tmpl },
  } do
    o.apiVersion, o.metadata = "v1", { name = "w", namespace = "default" }
    t.eq(ps.reasons(o, none), { "hostNetwork" }, o.kind)
  end
  t.eq(ps.reasons({ kind = "ConfigMap", data = { hostNetwork = "true" } },
    none), {})
end)

local RBAC = "rbac.authorization.k8s.io/v1"

local function binding(kind, ref_kind, name)
  return { apiVersion = RBAC, kind = kind,
    metadata = { name = "b", namespace = kind == "RoleBinding" and "ns" or nil },
    roleRef = { apiGroup = "rbac.authorization.k8s.io", kind = ref_kind,
      name = name }, subjects = {} }
end

t.case("bindings to cluster-admin, admin, edit or a wildcard role", function()
  for _, n in ipairs { "cluster-admin", "admin", "edit" } do
    t.eq(ps.reasons(binding("ClusterRoleBinding", "ClusterRole", n), none),
      { "binds ClusterRole " .. n })
    t.eq(ps.reasons(binding("RoleBinding", "ClusterRole", n), none),
      { "binds ClusterRole " .. n })
  end
  t.eq(ps.reasons(binding("ClusterRoleBinding", "ClusterRole", "view"),
    none), {})
  local asked = {}
  local roles = {
    wide = { rules = { { apiGroups = { "" }, resources = { "*" },
      verbs = { "get" } } } },
    agg = { aggregationRule = { clusterRoleSelectors = {} } },
    narrow = { rules = { { apiGroups = { "" }, resources = { "pods" },
      verbs = { "get" } } } },
  }
  local function lookup(kind, name, ns)
    asked[#asked + 1] = kind .. " " .. tostring(ns) .. "/" .. name
    return roles[name]
  end
  t.eq(ps.reasons(binding("RoleBinding", "Role", "wide"), lookup),
    { 'binds Role wide, a rule with resources "*"' })
  t.eq(ps.reasons(binding("ClusterRoleBinding", "ClusterRole", "agg"), lookup),
    { "binds ClusterRole agg, aggregates other roles" })
  t.eq(ps.reasons(binding("ClusterRoleBinding", "ClusterRole", "narrow"),
    lookup), {})
  t.eq(asked, { RBAC .. "/Role ns/wide", RBAC .. "/ClusterRole nil/agg",
    RBAC .. "/ClusterRole nil/narrow" })
  -- a role itself
  t.eq(ps.reasons({ apiVersion = RBAC, kind = "ClusterRole",
    metadata = { name = "r" }, rules = { { apiGroups = { "x.io" },
    resources = { "things" }, verbs = { "*" } } } }, none),
    { 'a rule with verbs "*"' })
end)

t.case("the plan names what needs kube:privileged", function()
  local run = { entries = {} }
  plan.note(run, "privileged",
    "Pod default/p: hostNetwork; container c: capability SYS_ADMIN")
  local text = require("uphook.engine.plantext").render(run.entries)
  t.match(text, "!! PRIVILEGED: root on the nodes or in the cluster "
    .. "%(kube:privileged%):\n  %- Pod default/p: hostNetwork; container c: "
    .. "capability SYS_ADMIN\n")
end)

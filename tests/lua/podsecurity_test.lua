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

-- kube:cluster is not root (docs/security.md, "What permissions guarantee"):
-- the RBAC good practices, hostPath and local volumes, broad webhooks
local function role(kind, rules, extra)
  local o = { apiVersion = RBAC, kind = kind, metadata = { name = "r",
    namespace = kind == "Role" and "ns" or nil }, rules = rules }
  for k, v in pairs(extra or {}) do o[k] = v end
  return o
end

local function rule(groups, resources, verbs, names)
  return { apiGroups = groups, resources = resources, verbs = verbs,
    resourceNames = names }
end

t.case("roles: each RBAC good-practices rule is privileged, with its reason",
  function()
  local bad = {
    { "a rule with verb escalate", rule({ RBAC:match("^[^/]+") },
      { "clusterroles" }, { "escalate" }) },
    { "a rule with verb bind", rule({ "rbac.authorization.k8s.io" },
      { "roles" }, { "bind" }) },
    { "a rule with verb impersonate", rule({ "" }, { "users" },
      { "impersonate" }) },
    { 'a rule with resources "*"', rule({ "" }, { "*" }, { "get" }) },
    { 'a rule with apiGroups "*"', rule({ "*" }, { "pods" }, { "get" }) },
    { 'a rule with verbs "*"', rule({ "" }, { "configmaps" }, { "*" }) },
    { "reads secrets cluster-wide", rule({ "" }, { "secrets" }, { "watch" }) },
    { "creates pods/exec cluster-wide", rule({ "" }, { "pods/exec" },
      { "create" }) },
    { "creates serviceaccounts/token cluster-wide", rule({ "" },
      { "serviceaccounts/token" }, { "create" }) },
    { "a rule on nodes/proxy", rule({ "" }, { "nodes/proxy" }, { "get" }) },
    { "approves certificates of signer kubernetes.io/kubelet-serving",
      rule({ "certificates.k8s.io" }, { "signers" }, { "approve" },
        { "kubernetes.io/kubelet-serving" }) },
    { "approves certificates of every signer", rule({ "certificates.k8s.io" },
      { "signers" }, { "approve" }) },
    { "writes clusterrolebindings", rule({ "rbac.authorization.k8s.io" },
      { "clusterrolebindings" }, { "create" }) },
    { "writes validatingwebhookconfigurations",
      rule({ "admissionregistration.k8s.io" },
        { "validatingwebhookconfigurations" }, { "patch" }) },
  }
  for _, b in ipairs(bad) do
    t.eq(ps.reasons(role("ClusterRole", { b[2] }), none), { b[1] }, b[1])
  end
  -- what stays unprivileged
  local fine = {
    rule({ "" }, { "secrets" }, { "get" }),          -- in a Role: one namespace
    rule({ "" }, { "pods", "services" }, { "get", "list", "watch" }),
    rule({ "certificates.k8s.io" }, { "signers" }, { "approve" },
      { "example.com/my-signer" }),
    rule({ "rbac.authorization.k8s.io" }, { "clusterroles" }, { "get" }),
  }
  t.eq(ps.reasons(role("Role", { fine[1] }), none), {})
  for i = 2, #fine do
    t.eq(ps.reasons(role("ClusterRole", { fine[i] }), none), {}, i)
  end
  -- `*` verbs on a group only the hook's own CRDs define
  local own = role("ClusterRole", { rule({ "acme.example.com" }, { "widgets" },
    { "*" }) })
  t.eq(ps.reasons(own, none, { ["acme.example.com"] = true }), {})
  t.eq(ps.reasons(own, none), { 'a rule with verbs "*"' })
  t.eq(ps.reasons(role("ClusterRole", { rule({ "" }, { "configmaps" },
    { "*" }) }), none, { [""] = true }), { 'a rule with verbs "*"' },
    "never the core group")
end)

t.case("a binding to a role with such a rule: cluster-wide only for a "
  .. "ClusterRoleBinding", function()
  local peek = role("ClusterRole", { rule({ "" }, { "secrets" }, { "list" }) })
  local function lookup() return peek end
  t.eq(ps.reasons(binding("ClusterRoleBinding", "ClusterRole", "peek"), lookup),
    { "binds ClusterRole peek, reads secrets cluster-wide" })
  t.eq(ps.reasons(binding("RoleBinding", "ClusterRole", "peek"), lookup), {},
    "a RoleBinding grants it in one namespace")
end)

t.case("hostPath and local PersistentVolumes, webhooks on every object or "
  .. "on Pods and Secrets", function()
  local function pv(spec)
    return { apiVersion = "v1", kind = "PersistentVolume",
      metadata = { name = "v" }, spec = spec }
  end
  t.eq(ps.reasons(pv { hostPath = { path = "/" } }, none),
    { "hostPath PersistentVolume (/)" })
  t.eq(ps.reasons(pv { ["local"] = { path = "/mnt/disk" } }, none),
    { "local PersistentVolume (/mnt/disk)" })
  t.eq(ps.reasons(pv { nfs = { server = "n", path = "/x" } }, none), {})
  local function hook(kind, groups, resources)
    return { apiVersion = "admissionregistration.k8s.io/v1", kind = kind,
      metadata = { name = "w" }, webhooks = { { name = "w.example.com",
        rules = { { apiGroups = groups, apiVersions = { "v1" },
          operations = { "CREATE" }, resources = resources } } } } }
  end
  t.eq(ps.reasons(hook("MutatingWebhookConfiguration", { "*" }, { "*" }), none),
    { "webhook w.example.com matches every resource" })
  t.eq(ps.reasons(hook("ValidatingWebhookConfiguration", { "" }, { "secrets" }),
    none), { "webhook w.example.com matches secrets" })
  t.eq(ps.reasons(hook("MutatingWebhookConfiguration", { "" }, { "pods" }),
    none), { "webhook w.example.com matches pods" })
  t.eq(ps.reasons(hook("ValidatingWebhookConfiguration", { "acme.example.com" },
    { "widgets" }), none), {})
end)

t.case("the question that grants kube:privileged says why", function()
  local consent = require "uphook.engine.consent"
  local lines = consent.question({ addon = "a", from = "1.0.0", to = "2.0.0",
    hook = { permissions = { "kube:cluster", "kube:privileged" } },
    new_permissions = { ["kube:privileged"] = true } }, false)
  t.match(table.concat(lines, "\n"), "PRIVILEGED: kube:privileged lets the "
    .. "hook become root on the nodes or cluster%-admin")
end)

-- expect: 4 ClusterRole own: a rule with apiGroups "\*" needs "kube:privileged"
-- docs/security.md "Namespace permission as root": nor writes a role whose
-- rules use "*".
return { version = "2.0.0", from = ">=1.0.0", permissions = { "kube:cluster" },
  detect = function() return "1.0.0" end,
  upgrade = function()
    kube.apply { apiVersion = "rbac.authorization.k8s.io/v1",
      kind = "ClusterRole", metadata = { name = "own" },
      rules = { { apiGroups = { "*" }, resources = { "*" }, verbs = { "*" } } } }
  end }

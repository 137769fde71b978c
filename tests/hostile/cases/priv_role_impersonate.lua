-- expect: 4 ClusterRole imp: a rule with verb impersonate needs "kube:privileged"
-- kube:cluster is not root: impersonating system:masters is cluster-admin.
return { version = "2.0.0", from = ">=1.0.0", permissions = { "kube:cluster" },
  detect = function() return "1.0.0" end,
  upgrade = function()
    kube.apply { apiVersion = "rbac.authorization.k8s.io/v1",
      kind = "ClusterRole", metadata = { name = "imp" },
      rules = { { apiGroups = { "" }, resources = { "users", "groups" },
        verbs = { "impersonate" } } } }
  end }

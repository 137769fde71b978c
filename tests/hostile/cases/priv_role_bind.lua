-- expect: 4 ClusterRole bnd: a rule with verb bind needs "kube:privileged"
-- kube:cluster is not root: bind lets a subject bind cluster-admin.
return { version = "2.0.0", from = ">=1.0.0", permissions = { "kube:cluster" },
  detect = function() return "1.0.0" end,
  upgrade = function()
    kube.apply { apiVersion = "rbac.authorization.k8s.io/v1",
      kind = "ClusterRole", metadata = { name = "bnd" },
      rules = { { apiGroups = { "rbac.authorization.k8s.io" },
        resources = { "clusterroles" }, verbs = { "bind" },
        resourceNames = { "cluster-admin" } } } }
  end }

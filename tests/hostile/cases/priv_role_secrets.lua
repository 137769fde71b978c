-- expect: 4 ClusterRole peek: reads secrets cluster-wide needs "kube:privileged"
-- kube:cluster is not root: every service account token is a Secret.
return { version = "2.0.0", from = ">=1.0.0", permissions = { "kube:cluster" },
  detect = function() return "1.0.0" end,
  upgrade = function()
    kube.apply { apiVersion = "rbac.authorization.k8s.io/v1",
      kind = "ClusterRole", metadata = { name = "peek" },
      rules = { { apiGroups = { "" }, resources = { "secrets" },
        verbs = { "list" } } } }
  end }

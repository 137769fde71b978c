-- expect: 4 ClusterRole esc: a rule with verb escalate needs "kube:privileged"
-- kube:cluster is not root: escalate lets a role grant what it lacks.
return { version = "2.0.0", from = ">=1.0.0", permissions = { "kube:cluster" },
  detect = function() return "1.0.0" end,
  upgrade = function()
    kube.apply { apiVersion = "rbac.authorization.k8s.io/v1",
      kind = "ClusterRole", metadata = { name = "esc" },
      rules = { { apiGroups = { "rbac.authorization.k8s.io" },
        resources = { "clusterroles" }, verbs = { "escalate", "get" } } } }
  end }

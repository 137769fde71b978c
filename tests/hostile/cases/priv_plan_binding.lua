-- expect: 0 ^  - ClusterRoleBinding own: binds ClusterRole cluster-admin$
-- command: plan
-- docs/security.md "Namespace permission as root": the plan names bindings
-- that need kube:privileged too, under "!! PRIVILEGED" (priv_plan_names:
-- pods).
return { version = "2.0.0", from = ">=1.0.0",
  permissions = { "kube:cluster", "kube:privileged" },
  detect = function() return "1.0.0" end,
  upgrade = function()
    kube.apply { apiVersion = "rbac.authorization.k8s.io/v1",
      kind = "ClusterRoleBinding", metadata = { name = "own" },
      roleRef = { apiGroup = "rbac.authorization.k8s.io",
        kind = "ClusterRole", name = "cluster-admin" },
      subjects = { { kind = "ServiceAccount", name = "x",
        namespace = "default" } } }
  end }

-- expect: 4 ClusterRoleBinding own: binds ClusterRole cluster-admin needs "kube:privileged"
-- docs/security.md "Namespace permission as root": kube:cluster alone no
-- longer binds cluster-admin.
return { version = "2.0.0", from = ">=1.0.0", permissions = { "kube:cluster" },
  detect = function() return "1.0.0" end,
  upgrade = function()
    kube.apply { apiVersion = "rbac.authorization.k8s.io/v1",
      kind = "ClusterRoleBinding", metadata = { name = "own" },
      roleRef = { apiGroup = "rbac.authorization.k8s.io", kind = "ClusterRole",
        name = "cluster-admin" },
      subjects = { { kind = "ServiceAccount", name = "default",
        namespace = "default" } } }
  end }

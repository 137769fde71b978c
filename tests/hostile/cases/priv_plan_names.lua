-- expect: 0 ^  - Pod default/p: hostNetwork; container c: capability SYS_ADMIN$
-- command: plan
-- (under "!! PRIVILEGED: root on the nodes or in the cluster
-- (kube:privileged):", whose rendering tests/lua/podsecurity_test.lua checks)
-- docs/security.md "Namespace permission as root": with kube:privileged
-- declared, plan names the object and why it needs it.
return { version = "2.0.0", from = ">=1.0.0",
  permissions = { "kube:default", "kube:privileged" },
  detect = function() return "1.0.0" end,
  upgrade = function()
    kube.apply { apiVersion = "v1", kind = "Pod",
      metadata = { name = "p", namespace = "default" },
      spec = { hostNetwork = true, containers = { { name = "c", image = "x",
        securityContext = { capabilities = { add = { "SYS_ADMIN" } } } } } } }
  end }

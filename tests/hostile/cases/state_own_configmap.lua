-- expect: 4 ConfigMap kube-system/uphook-state-own-configmap belongs to uphook
-- docs/security.md "Other addons' state": nor its own: the engine writes the
-- state.
return { version = "2.0.0", from = ">=1.0.0", permissions = { "kube:*" },
  detect = function() return "1.0.0" end,
  upgrade = function()
    kube.apply { apiVersion = "v1", kind = "ConfigMap",
      metadata = { name = "uphook-state-own-configmap", namespace = "kube-system" },
      data = { version = "9.9.9" } }
  end }

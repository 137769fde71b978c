-- Two objects `microk8s enable` made client side, applied in one call:
-- their client-side apply upgrades go as one batch.
return {
  version = "1.2.0", from = ">=1.0.0 <1.2.0",
  permissions = { "kube:default" },
  detect = function() return "1.1.0" end,
  upgrade = function()
    kube.apply {
      { apiVersion = "v1", kind = "ConfigMap",
        metadata = { name = "hello", namespace = "default" },
        data = { color = "blue" } },
      { apiVersion = "v1", kind = "ConfigMap",
        metadata = { name = "other", namespace = "default" },
        data = { color = "blue" } },
    }
  end,
}

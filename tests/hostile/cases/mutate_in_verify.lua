-- expect: 1 not allowed in verify
return { version = "2.0.0", from = ">=1.0.0", permissions = { "kube:default" },
  detect = function() return "1.0.0" end,
  upgrade = function() kube.apply({ apiVersion = "v1", kind = "ConfigMap",
    metadata = { name = "a", namespace = "default" } }) end,
  verify = function() kube.delete("ConfigMap", "a", "default") end }

-- expect: 4 not allowed in check
return { version = "2.0.0", from = ">=1.0.0", permissions = { "kube:default" },
  detect = function() return "1.0.0" end,
  check = function() kube.apply({ apiVersion = "v1", kind = "ConfigMap",
    metadata = { name = "x", namespace = "default" } }) end,
  upgrade = function() end }

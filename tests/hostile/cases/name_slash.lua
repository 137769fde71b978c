-- expect: 4 ConfigMap name "a/b" is invalid
-- docs/security.md "Dots and slashes in names": a "/" in a name would address
-- a subresource.
return { version = "2.0.0", from = ">=1.0.0", permissions = { "kube:default" },
  detect = function() return "1.0.0" end,
  upgrade = function()
    kube.apply { apiVersion = "v1", kind = "ConfigMap",
      metadata = { name = "a/b", namespace = "default" } }
  end }

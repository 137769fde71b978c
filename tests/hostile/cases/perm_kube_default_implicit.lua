-- expect: 0 Upgraded
-- docs/security.md "No namespace wrote into default": kube:default covers an
-- object without a namespace (it was refused, and the error asked for
-- kube:nil).
return { version = "2.0.0", from = ">=1.0.0", permissions = { "kube:default" },
  detect = function() return "1.0.0" end,
  upgrade = function()
    kube.apply { apiVersion = "v1", kind = "ConfigMap",
      metadata = { name = "x" }, data = { a = "b" } }
    assert(kube.get("ConfigMap", "x", "default"), "not in default")
  end }

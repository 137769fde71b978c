-- expect: 4 needs "kube:default"
-- docs/security.md "No namespace wrote into default": an object without a
-- namespace goes to default and needs kube:default, as kubectl sends it;
-- "kube:nil" names a namespace called nil and no longer stands for "no
-- namespace".
return { version = "2.0.0", from = ">=1.0.0", permissions = { "kube:nil" },
  detect = function() return "1.0.0" end,
  upgrade = function()
    kube.apply { apiVersion = "v1", kind = "ConfigMap",
      metadata = { name = "x" }, data = { a = "b" } }
  end }

-- expect: 4 unknown permission "root"
return { version = "2.0.0", from = ">=1.0.0", permissions = { "root" },
  upgrade = function() end }

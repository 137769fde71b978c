-- expect: 4 not allowed in load
config.write("state:x", "y")
return { version = "2.0.0", from = ">=1.0.0", permissions = {},
  upgrade = function() end }

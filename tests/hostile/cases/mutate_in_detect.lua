-- expect: 4 not allowed in detect
return { version = "2.0.0", from = ">=1.0.0", permissions = {},
  detect = function() config.write("state:x", "y"); return "1.0.0" end,
  upgrade = function() end }

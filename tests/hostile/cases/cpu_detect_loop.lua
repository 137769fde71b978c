-- expect: 4 timeout
return { version = "2.0.0", from = ">=1.0.0", permissions = {},
  detect = function() while true do end end,
  upgrade = function() end }

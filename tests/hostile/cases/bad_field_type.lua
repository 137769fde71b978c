-- expect: 4 field 'version' must be a string
return { version = 2, from = ">=1.0.0", permissions = {},
  upgrade = function() end }

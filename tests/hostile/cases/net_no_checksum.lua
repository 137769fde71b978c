-- expect: 4 checksum is required
return { version = "2.0.0", from = ">=1.0.0", permissions = { "net:example.com" },
  detect = function() return "1.0.0" end,
  upgrade = function() net.download("https://example.com/x", {}) end }

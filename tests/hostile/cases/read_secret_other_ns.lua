-- expect: 4 kube.get of Secret other/token .*needs "kube:other"
-- docs/security.md "Unchecked reads": reading a Secret needs its namespace's
-- permission.
return { version = "2.0.0", from = ">=1.0.0",
  permissions = { "kube:demo", "net:example.com" },
  detect = function() return "1.0.0" end,
  upgrade = function()
    local s = kube.get("Secret", "token", "other")
    error("read the Secret: " .. tostring(s and s.data and s.data.token))
  end }

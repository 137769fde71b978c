-- expect: 4 more than --state-quota \(1048576 bytes\)
-- command: plan
-- options: --state-quota 1
-- docs/security.md "State without a quota": plan refuses what the upgrade
-- would refuse, and --state-quota sets the quota (in MiB).
return { version = "2.0.0", from = ">=1.0.0", permissions = {},
  detect = function() return "1.0.0" end,
  upgrade = function()
    local half = string.rep("x", 600 << 10)
    config.write("state:a", half)
    config.write("state:b", half)
  end }

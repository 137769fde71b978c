-- expect: 4 invalid kind
-- command: plan
-- docs/security.md "Broker work outside the timeout": under plan, kube.get's
-- kind went through an unanchored pattern (the square of its length); kinds
-- are now checked first, linearly, and long ones refused.
return { version = "2.0.0", from = ">=1.0.0", permissions = {},
  detect = function() return "1.0.0" end,
  upgrade = function()
    kube.get(string.rep("a", 8 << 20) .. "/", "x")
  end }

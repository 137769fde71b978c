-- Test addon for tests/lua/nodes_test.lua: a config file under args:
-- (an event rate limit configuration, as cis-hardening's enable writes
-- one), which changes on this node only, beside a service's flags.
return {
  version = "2.0.0", from = ">=1.0.0 <2.0.0",
  description = "writes eventconfig.yaml",
  permissions = { "args:eventconfig.yaml", "args:kube-apiserver" },
  detect = function() return "1.0.0" end,
  upgrade = function()
    config.write("args:eventconfig.yaml", "kind: Configuration\n",
      { nodes = "this" })
  end,
}

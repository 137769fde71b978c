-- Test addon for tests/lua/broker_test.lua: one change, then a request
-- that the test's backend makes slow (kube.get of ConfigMap "slow").
return {
  version = "2.0.0", from = ">=1.0.0 <2.0.0",
  description = "a change, then a request the broker is slow to serve",
  permissions = { "kube:default" },
  detect = function() return "1.0.0" end,
  upgrade = function()
    kube.apply { apiVersion = "v1", kind = "ConfigMap",
      metadata = { name = "made", namespace = "default" },
      data = { by = "slowbroker" } }
    kube.get("ConfigMap", "slow", "default")
  end,
}

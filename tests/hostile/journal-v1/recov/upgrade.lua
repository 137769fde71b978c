-- The test addon of tests/hostile/recover_test.sh: two ConfigMaps, one
-- change each, so that a crash after the first leaves a journal.
return {
  version = "2.0.0", from = ">=1.0.0 <2.0.0",
  description = "two ConfigMaps, for crash and recover tests",
  permissions = { "kube:default" },
  detect = function() return "1.0.0" end,
  upgrade = function()
    kube.apply { apiVersion = "v1", kind = "ConfigMap",
      metadata = { name = "made", namespace = "default" },
      data = { by = "uphook", step = "1" } }
    kube.apply { apiVersion = "v1", kind = "ConfigMap",
      metadata = { name = "old", namespace = "default" },
      data = { by = "uphook", step = "2" } }
  end,
}

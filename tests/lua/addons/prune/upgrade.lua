--- A probe for tests/lua/prune_test.lua: version 2.0.0 ships the
--- ConfigMap "kept" (and, with --case keep, keeps "old-a" by name);
--- everything else of the addon's ConfigMaps and Deployments goes.
local CASES = {
  basic = { kinds = { "ConfigMap", "apps/v1/Deployment" }, namespace = "default" },
  everywhere = { kinds = { "ConfigMap" } },
  pvc = { kinds = { "PersistentVolumeClaim" }, namespace = "default" },
  pvc_allowed = { kinds = { "PersistentVolumeClaim" }, namespace = "default",
                  allow_data_loss = true },
  keep = { kinds = { "ConfigMap" }, namespace = "default",
           keep = { { kind = "ConfigMap", name = "old-a", namespace = "default" } } },
  enable_era = { kinds = { "ConfigMap" }, namespace = "default",
                 labels = { app = "prune-enable" } },
  unserved = { kinds = { "example.com/v1/Widget", "ConfigMap" }, namespace = "default" },
}

return {
  version = "2.0.0", from = "1.0.0",
  description = "prune probe",
  permissions = { "kube:default" },
  params = { case = { default = "basic" } },
  detect = function() return "1.0.0" end,
  check = function(ctx)
    if ctx.params.case == "in_check" then kube.prune { kinds = { "ConfigMap" } } end
  end,
  upgrade = function(ctx)
    log.step("apply 2.0.0")
    kube.apply { apiVersion = "v1", kind = "ConfigMap",
      metadata = { name = "kept", namespace = "default" }, data = { v = "2" } }
    log.step("prune")
    local gone = kube.prune(CASES[ctx.params.case])
    local names = {}
    for _, r in ipairs(gone) do names[#names + 1] = r.kind .. " " .. (r.namespace or "") .. "/" .. r.name end
    log.info("pruned: %s", table.concat(names, ", "))
  end,
}

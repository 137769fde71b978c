-- A test hook: migrates an immutable StorageClass field by delete and
-- re-create, keeps the detected reclaim policy, and uses a module of its
-- own folder.
local names = require "names"
return {
  version = "2.0.0", from = ">=1.0.0 <2.0.0",
  permissions = { "kube:cluster" },
  params = { ["reclaim-policy"] = { default = "Delete",
                                    choices = { "Delete", "Retain" } } },
  detect = function()
    local sc = kube.get("StorageClass", names.class)
    if not sc then return nil end
    return "1.0.0", { ["reclaim-policy"] = sc.reclaimPolicy }
  end,
  upgrade = function(ctx)
    kube.delete("StorageClass", names.class)
    kube.apply({ apiVersion = "storage.k8s.io/v1", kind = "StorageClass",
      metadata = { name = names.class }, provisioner = "example.com/p",
      reclaimPolicy = ctx.params["reclaim-policy"],
      volumeBindingMode = "WaitForFirstConsumer" })
  end,
}

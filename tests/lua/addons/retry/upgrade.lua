-- Applies one ConfigMap, trying up to three times: a hook that swallows
-- a failed change (the harness tests fault it).
return {
  version = "1.2.0", from = ">=1.0.0 <1.2.0",
  permissions = { "kube:default" },
  detect = function() return "1.1.0" end,
  upgrade = function()
    for _ = 1, 3 do
      if pcall(kube.apply, { apiVersion = "v1", kind = "ConfigMap",
          metadata = { name = "tried", namespace = "default" },
          data = { a = "1" } }) then
        return
      end
    end
  end,
}

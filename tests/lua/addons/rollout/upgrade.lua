-- Reads, then applies a Deployment and waits for its rollout (for the
-- harness's read and watch faults).
return {
  version = "1.2.0", from = ">=1.0.0 <1.2.0",
  permissions = { "kube:default" },
  detect = function() return "1.1.0" end,
  upgrade = function()
    local cm = kube.get("ConfigMap", "hello", "default")
    log.info("hello is %s", cm and "there" or "absent")
    log.info("%d configmaps", #kube.list("ConfigMap", { namespace = "default" }))
    kube.apply { apiVersion = "apps/v1", kind = "Deployment",
      metadata = { name = "web", namespace = "default" },
      spec = { selector = { matchLabels = { app = "web" } },
        template = { metadata = { labels = { app = "web" } },
          spec = { containers = { { name = "web", image = "web:2" } } } } } }
    kube.rollout("Deployment", "web", "default", { timeout = 30 })
  end,
}

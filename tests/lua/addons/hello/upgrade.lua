return {
  uphook = ">=0.2",
  version = "1.2.0", from = ">=1.0.0 <1.2.0",
  permissions = { "kube:default" },
  params = { color = { default = "blue", choices = {"blue", "red"} } },
  detect = function(ctx) return "1.1.0" end,
  upgrade = function(ctx)
    log.step("apply the config")
    local r = kube.apply({ apiVersion = "v1", kind = "ConfigMap",
      metadata = { name = "hello", namespace = "default" },
      data = { color = ctx.params.color } })
    log.info("%s %s", r[1].name, r[1].action)
  end,
}

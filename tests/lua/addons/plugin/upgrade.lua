-- Test addon for tests/lua/plugins_test.lua: installs kube-bench into
-- plugins: as cis-hardening's enable does, then records it in a ConfigMap
-- (a later change whose failure rolls the plugin back).
return {
  version = "2.0.0", from = ">=1.0.0 <2.0.0",
  description = "installs the kube-bench plugin",
  permissions = { "kube:default", "net:example.com", "plugins:kube-bench" },
  params = { path = { default = "plugins:kube-bench" },
    content = { default = "#!/bin/sh\necho kube-bench\n" } },
  detect = function() return "1.0.0" end,
  upgrade = function(ctx)
    local p = ctx.params
    local f = net.download("https://example.com/kube-bench",
      { sha256 = hash.sha256(p.content) })
    config.install(f, p.path, { mode = "0755" })
    kube.apply { apiVersion = "v1", kind = "ConfigMap",
      metadata = { name = "kube-bench", namespace = "default" },
      data = { installed = p.path } }
  end,
}

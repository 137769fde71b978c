-- The hook of tests/compat/api01 migrated to hook API 0.2 (docs/guide.md
-- "Migrating hooks"): it declares `uphook = ">=0.2"` and its positional
-- argument, and passes YAML structure as manifest.raw(...). No warning;
-- the hostPort still needs kube:privileged (tests/compat/api02/api02_test.lua).
local manifest = require "manifest"

return {
  uphook = ">=0.2",
  version = "1.1.0", from = ">=1.0.0 <1.1.0",
  description = "a hook of hook API 0.2",
  permissions = { "kube:default" },
  params = { hostport = { default = "false", choices = { "true", "false" } } },
  positional = { "region" },
  detect = function() return "1.0.0" end,
  upgrade = function(ctx)
    local region = ctx.positional[1] or "none"
    kube.apply(manifest.load("app.yaml", { REGION = region,
      EXTRA = manifest.raw('  mode: "migrated"') }))
    if ctx.params.hostport == "true" then
      kube.apply(manifest.load("hostport.yaml"))
    end
  end,
}

-- A hook written for hook API 0.1: it declares no `uphook`, so uphook
-- runs it as API 0.1 (docs/reference.md "API versions"). It uses the two
-- conveniences 0.2 deprecated, which keep working with a warning each, and
-- a hostPort under kube:default alone, which fails for every API version
-- (tests/compat/api01/api01_test.lua).
local manifest = require "manifest"

return {
  version = "1.1.0", from = ">=1.0.0 <1.1.0",
  description = "a hook of hook API 0.1",
  permissions = { "kube:default" },
  params = { hostport = { default = "false", choices = { "true", "false" } } },
  detect = function() return "1.0.0" end,
  upgrade = function(ctx)
    local region = ctx.positional[1] or "none"   -- undeclared positional
    kube.apply(manifest.load("app.yaml", { REGION = region,
      EXTRA = '  mode: "legacy"' }))                -- a key: value as text
    if ctx.params.hostport == "true" then
      kube.apply(manifest.load("hostport.yaml"))
    end
  end,
}

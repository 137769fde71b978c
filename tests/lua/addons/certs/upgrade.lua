-- Test addon for tests/lua/certs_test.lua: asks config.exists in every
-- phase and refuses to upgrade when the certificate is missing, as
-- cis-hardening's enable should before it points kube-apiserver at it.
-- It declares no permission: config.exists needs none.
local CERT = "certs:front-proxy-client.crt"
local function say(phase)
  log.info("%s: %s %s", phase, CERT, tostring(config.exists(CERT)))
end

return {
  version = "2.0.0", from = ">=1.0.0 <2.0.0",
  description = "checks a certificate",
  permissions = {},
  params = { path = { default = "" }, read = { default = "" } },
  detect = function() say("detect"); return "1.0.0" end,
  check = function(ctx)
    say("check")
    if ctx.params.path ~= "" then config.exists(ctx.params.path) end
    if ctx.params.read ~= "" then config.read(ctx.params.read) end
    if not config.exists(CERT) then
      error(CERT .. " is missing: the upgrade would break kube-apiserver", 0)
    end
  end,
  upgrade = function() say("upgrade") end,
  verify = function() say("verify") end,
}

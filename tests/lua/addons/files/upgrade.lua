-- Test addon for tests/lua/files_test.lua: config.write or config.install
-- of one file, chosen by the parameters.
local function opt(v) if v ~= "" then return v end end

return {
  version = "2.0.0", from = ">=1.0.0 <2.0.0",
  description = "writes one file",
  permissions = { "args:kubelet", "bin:tool", "net:example.com" },
  params = { path = { default = "args:kubelet" },
    content = { default = "--v=2\n" }, mode = { default = "" },
    install = { default = "" } },
  detect = function() return "1.0.0" end,
  upgrade = function(ctx)
    local p = ctx.params
    if p.install ~= "" then
      local f = net.download(p.install, { sha256 = hash.sha256(p.content) })
      config.install(f, p.path, { mode = opt(p.mode) })
    else
      config.write(p.path, p.content, { mode = opt(p.mode) })
    end
  end,
}

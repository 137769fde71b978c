-- An addon whose version string never changed (every enable said 1.0.0),
-- told apart by a fingerprint of the file its enable wrote: detect returns
-- 1.0.0+<fingerprint> (docs/guide.md "Versions that never changed";
-- tests/lua/semver_build_test.lua).
local POLICY = "args:fprint-policy.yaml"
local NEW = "policy: 3\n"       -- sha256 e9783f8603e3...

return {
  version = "1.0.0+e9783f8603e3", from = "1.0.0",
  description = "fprint 1.0.0, policy 3",
  permissions = { "args:fprint-policy.yaml" },
  detect = function()
    local ok, sum = pcall(hash.file, POLICY)
    if not ok then return nil end
    return "1.0.0+" .. sum:sub(1, 12)
  end,
  upgrade = function() config.write(POLICY, NEW) end,
}

--- uphook.core.cfamilies: the C families of the trusted parent (host/families.c,
--- `uphook.c.<name>`), loaded once into the one table `c` that the
--- engine, both backends and the test harness share.
local M = {}

local NAMES = { "agent", "argsfile", "broker", "cli", "fs", "hash", "helm", "http",
  "journal", "json", "kube", "sys", "testpoint", "yaml" }

local loaded

---The C families, loaded once; a family this build lacks is absent.
---@return table<string, table> c
function M.load()
  if loaded then return loaded end
  local c = {}
  for _, n in ipairs(NAMES) do
    local ok, m = pcall(require, "uphook.c." .. n)
    if ok then c[n] = m end
  end
  loaded = c
  return c
end

return M

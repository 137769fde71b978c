-- Run pure-Lua *_test.lua files with the system interpreter during
-- development: lua5.4 tests/lua/dev.lua FILE_test.lua...
-- (`uphook test` is the real runner; this only maps module names the
-- way host/embed.sh does: uphook.X.Y -> lua/X/Y.lua, semver -> stdlib/.)
table.insert(package.searchers, 2, function(name)
  local rel = name:match("^uphook%.(.+)$")
  local path = rel and ("lua/" .. rel:gsub("%.", "/") .. ".lua")
               or ("stdlib/" .. name:gsub("%.", "/") .. ".lua")
  local f = io.open(path)
  if not f then return "\n\tno file '" .. path .. "'" end
  f:close()
  return assert(loadfile(path)), path
end)
local t = require "uphook.test"
local _, p, f, s = t.run(arg, {
  loader = function(path) return assert(loadfile(path))() end,
  clock = os.clock,
})
print(string.format("%d passed, %d failed%s", p, f,
  s > 0 and (", " .. s .. " skipped") or ""))
os.exit(f == 0 and 0 or 1)

-- Run pure-Lua *_test.lua files with the system interpreter during
-- development: lua5.4 tests/lua/dev.lua FILE_test.lua...
-- (`uphook test` is the real runner; this only finds the modules in the
-- tree, tests/lua/searcher.lua.)
dofile("tests/lua/searcher.lua")
local t = require "uphook.test"
local _, p, f, s = t.run(arg, {
  loader = function(path) return assert(loadfile(path))() end,
  clock = os.clock,
})
print(string.format("%d passed, %d failed%s", p, f,
  s > 0 and (", " .. s .. " skipped") or ""))
os.exit(f == 0 and 0 or 1)

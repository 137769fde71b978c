-- Find uphook's Lua modules in the source tree for the system
-- interpreter, as host/embed.c names them: uphook.X.Y -> lua/X/Y.lua,
-- any other name -> stdlib/<name>.lua. Run from the repository's root;
-- dofile("tests/lua/searcher.lua") (dev.lua, tests/bench/bench_mock.lua).
table.insert(package.searchers, 2, function(name)
  local rel = name:match("^uphook%.(.+)$")
  local path = rel and ("lua/" .. rel:gsub("%.", "/") .. ".lua")
               or ("stdlib/" .. name:gsub("%.", "/") .. ".lua")
  local f = io.open(path)
  if not f then return "\n\tno file '" .. path .. "'" end
  f:close()
  return assert(loadfile(path)), path
end)

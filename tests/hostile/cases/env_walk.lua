-- expect: 4 walk clean
-- Walk everything reachable from the hook's environment and refuse to
-- finish if any dangerous function is reachable.
local bad = { io = 1, os = 1, debug = 1, package = 1, dump = 1,
  loadfile = 1, dofile = 1, loadstring = 1, setfenv = 1, getfenv = 1,
  getregistry = 1, setupvalue = 1, getupvalue = 1, sethook = 1,
  execute = 1, popen = 1, loadlib = 1, print = 1 }
local seen, n = {}, 0
local function walk(v, path)
  if type(v) ~= "table" or seen[v] then return end
  seen[v] = true
  for k, x in pairs(v) do
    n = n + 1
    if bad[k] then error("reachable: " .. path .. "." .. tostring(k)) end
    walk(x, path .. "." .. tostring(k))
  end
  local mt = getmetatable(v)
  if type(mt) == "table" then walk(mt, path .. "<mt>") end
end
walk(_G, "_G")
walk(getmetatable(""), "string<mt>")
error("walk clean: " .. n .. " entries")

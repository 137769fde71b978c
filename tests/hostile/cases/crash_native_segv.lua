-- expect: 4 no crash reachable without native code
-- a hook that corrupts its own VM gets only a dead child
local t = {}
for i = 1, 100 do t[i] = string.rep("a", i) end
error("no crash reachable without native code")

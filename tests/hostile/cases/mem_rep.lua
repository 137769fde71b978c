-- expect: 4 memory limit
local s = string.rep("x", 1 << 30)

-- expect: 4 too large
local s = string.rep("x", 2^62)

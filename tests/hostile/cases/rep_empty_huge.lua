-- expect: 4 survived
local s = string.rep("", 2^62)
local t = string.rep("", 2^62, "")
error("survived: " .. #s .. #t)

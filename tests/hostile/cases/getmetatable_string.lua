-- expect: 4 attempt to index a nil value
local mt = getmetatable("")
local dump = mt.__index.dump

-- expect: 4 timeout
local t = setmetatable({}, { __tostring = function() while true do end end })
local s = tostring(t)

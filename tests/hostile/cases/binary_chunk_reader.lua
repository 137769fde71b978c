-- expect: 4 attempt to load a binary chunk
local parts = { "\27Lua", "\84\0" }
local i = 0
local f, err = load(function() i = i + 1; return parts[i] end)
error(tostring(err))

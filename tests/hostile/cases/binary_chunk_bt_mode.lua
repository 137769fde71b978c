-- expect: 4 attempt to load a binary chunk
local f, err = load("\27Lua\84\0", "x", "bt")
error(tostring(err))

-- expect: 4 attempt to load a binary chunk
local f, err = load("\27Lua\84\0\25\147\13\10\26\10\4\8\8\120\86", "x", "b")
error(tostring(err))

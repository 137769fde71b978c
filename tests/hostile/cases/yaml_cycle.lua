-- expect: 4 contains itself
local t = {}
t.self = t
yaml.encode(t)

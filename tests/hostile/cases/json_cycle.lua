-- expect: 4 contains itself|cycle
local t = { a = {} }
t.a.b = t
json.encode(t)

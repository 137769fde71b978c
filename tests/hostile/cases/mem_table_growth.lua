-- expect: 4 memory limit
local t = {}
for i = 1, math.maxinteger do t[i] = i end

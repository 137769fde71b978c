-- expect: 4 memory limit
local t = {}
for i = 1, 1e6 do t[i] = "0123456789abcdef0123456789abcdef" end
while true do t = { table.concat(t), table.concat(t) } end

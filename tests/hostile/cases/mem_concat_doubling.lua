-- expect: 4 memory limit
local s = "x"
while true do s = s .. s end

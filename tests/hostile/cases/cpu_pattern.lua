-- expect: 4 timeout
local s = string.rep("a", 40)
while true do
  string.find(s .. "b", string.rep("a*", 40) .. "c")
end

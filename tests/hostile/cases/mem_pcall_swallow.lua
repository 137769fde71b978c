-- expect: 4 timeout|memory limit
while true do
  pcall(function() local s = "x"; while true do s = s .. s end end)
end

-- expect: 4 timeout
while true do
  xpcall(function() error("x") end, function() while true do end end)
end

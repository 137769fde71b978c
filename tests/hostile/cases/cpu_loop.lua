-- expect: 4 timeout
while true do end

-- expect: 4 nothing dangerous reachable
for _, n in ipairs { "io", "os", "debug", "package", "dofile", "loadfile",
                     "print", "loadstring", "setfenv", "getfenv" } do
  if rawget(_G, n) ~= nil then error("reachable: " .. n) end
end
error("nothing dangerous reachable")

-- expect: 4 timeout
-- A loop inside a coroutine that swallows every error it can.
local co = coroutine.wrap(function()
  while true do pcall(function() while true do end end) end
end)
co()

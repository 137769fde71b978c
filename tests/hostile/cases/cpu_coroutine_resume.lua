-- expect: 4 timeout
-- The main thread keeps resuming a coroutine that yields from inside
-- pcall; neither thread may outlive the deadline.
local co = coroutine.create(function()
  while true do pcall(coroutine.yield) end
end)
while true do coroutine.resume(co) end

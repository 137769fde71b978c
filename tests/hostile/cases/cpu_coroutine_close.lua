-- expect: 4 timeout
-- A __close handler that loops, run by coroutine.close of a suspended
-- coroutine, with the close itself inside pcall.
local co = coroutine.create(function()
  local _ <close> = setmetatable({}, { __close = function()
    while true do end
  end })
  coroutine.yield()
end)
coroutine.resume(co)
while true do pcall(coroutine.close, co) end

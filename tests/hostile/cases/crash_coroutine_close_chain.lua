-- expect: 4 killed by signal|stack.overflow
-- Debian's liblua5.4 5.4.4 segfaults closing a long chain of coroutines
-- whose pending to-be-closed variables close the next one (lua_closethread
-- restarts the C-call count, so the C stack overflows).  Coroutines are
-- allowed: the crash must stay in the confined child.
local inner = coroutine.create(function() end)
for _ = 1, 20000 do
  local prev = inner
  local co = coroutine.create(function()
    local _ <close> = setmetatable({}, { __close = function()
      coroutine.close(prev)
    end })
    coroutine.yield()
  end)
  coroutine.resume(co)
  inner = co
end
coroutine.close(inner)
error("survived the coroutine.close chain")

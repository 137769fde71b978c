-- A hook that produces its objects from a coroutine generator and calls
-- primitives from inside the coroutine: coroutines are plain Lua in hooks.
local function objects(n)
  return coroutine.wrap(function()
    for i = 1, n do
      coroutine.yield { apiVersion = "v1", kind = "ConfigMap",
        metadata = { name = "gen-" .. i, namespace = "default" },
        data = { index = tostring(i) } }
    end
  end)
end

return {
  version = "1.2.0", from = ">=1.0.0 <1.2.0",
  permissions = { "kube:default" },
  detect = function() return "1.1.0" end,
  upgrade = function()
    for obj in objects(3) do kube.apply(obj) end
    local co = coroutine.create(function()
      local r = kube.apply { apiVersion = "v1", kind = "ConfigMap",
        metadata = { name = "from-coroutine", namespace = "default" } }
      coroutine.yield(r[1].action)
      error("after the yield")
    end)
    local ok, action = coroutine.resume(co)
    assert(ok and action == "created", tostring(action))
    local ok2, err = coroutine.resume(co)
    assert(not ok2 and err:match("after the yield"), tostring(err))
    assert(coroutine.status(co) == "dead")
  end,
}

-- expect: 4 undeclared global 'coroutine'
local co = coroutine.create(function() end)

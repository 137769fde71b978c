-- expect: 4 only collectgarbage\("count"\) is allowed
collectgarbage("collect")

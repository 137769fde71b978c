-- expect: 4 undeclared global 'io'
local f = load("return io")
local io = f()

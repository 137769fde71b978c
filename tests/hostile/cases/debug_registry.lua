-- expect: 4 undeclared global 'debug'
local r = debug.getregistry()

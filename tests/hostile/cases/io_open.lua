-- expect: 4 undeclared global 'io'
local f = io.open("/etc/passwd")

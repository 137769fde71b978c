-- expect: 4 upvalue '_ENV'|undeclared global 'os'
local f = load("return os.getenv('HOME')", "x", "t", nil)
f()

-- expect: 4 module 'io' not found
local io = require("io")

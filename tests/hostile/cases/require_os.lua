-- expect: 4 module 'os' not found
require("os").execute("id")

-- expect: 4 module 'debug' not found
require "debug"

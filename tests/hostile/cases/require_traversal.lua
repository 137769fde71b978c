-- expect: 4 module '../../etc/passwd' not found
require "../../etc/passwd"

-- expect: 4 module 'uphook.engine' not found
require "uphook.engine"

-- expect: 4 module 'uphook.engine.phases' not found
require "uphook.engine.phases"

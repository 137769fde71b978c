-- expect: 4 .
-- the runner plants args/evil -> /etc before the run
local s = config.read("args:evil/passwd")
error("read through a symlink: " .. tostring(s and #s))

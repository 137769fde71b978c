-- expect: 4 still refused
local ok, err = pcall(config.write, "bin:x", "y")
if not ok then error("still refused: " .. err) end

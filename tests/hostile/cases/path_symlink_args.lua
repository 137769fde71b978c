-- expect: 4 refused: .*path leaves its root: evil/passwd
-- the runner plants args/evil -> /etc before the run: reading through it
-- must be refused, where an escape would read /etc/passwd
local ok, s = pcall(config.read, "args:evil/passwd")
if ok then
  error("escaped: read " .. tostring(s and #s) .. " bytes through the symlink")
end
error("refused: " .. tostring(s))

-- expect: 1 config.write\(state:f16\): the addon's state: files would take [0-9]+ bytes, more than --state-quota \(16777216 bytes\)
-- docs/security.md "State without a quota": a hook with no permissions cannot
-- fill the node's disk through state: (no quota before: every write
-- succeeded).
local mib = string.rep("x", 1 << 20)
for i = 1, 40 do config.write("state:f" .. i, mib) end

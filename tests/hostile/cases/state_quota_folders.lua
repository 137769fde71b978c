-- expect: 1 more than --state-quota
-- options: --state-quota 1
-- docs/security.md "State without a quota": folders count too (each at least
-- a 4 KiB block): empty files in deep folders cannot exhaust the disk's
-- inodes either.
local deep = string.rep("d/", 200)
for i = 1, 100 do config.write("state:" .. i .. "/" .. deep .. "f", "") end

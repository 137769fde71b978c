-- expect: 4 survived 24 logs
-- docs/security.md "Unbounded run record": log lines are cut at 4 KiB, so
-- 24 logs of 16 MiB neither stay in the broker (its report kept every
-- line: 384 MiB) nor reach the terminal whole.  It runs with the suite's
-- long --timeout: 384 MiB through the RPC takes more than 3 s under ASan
-- or on a busy machine.
local big = string.rep("x", 16 << 20)
for _ = 1, 24 do log.info(big) end
error("survived 24 logs")

-- expect: 4 survived 24 logs
-- options: --timeout 15
-- issue 15 point 1: log lines are cut at 4 KiB, so 24 logs of 16 MiB
-- neither stay in the broker (its report kept every line: 384 MiB) nor
-- reach the terminal whole.  Its own --timeout is for the sanitizer
-- build, where 384 MiB through the RPC takes longer than 3 s; the plain
-- build is still held to the suite's --timeout plus its grace.
local big = string.rep("x", 16 << 20)
for _ = 1, 24 do log.info(big) end
error("survived 24 logs")

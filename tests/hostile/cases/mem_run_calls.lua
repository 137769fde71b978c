-- expect: 4 survived 24 calls
-- docs/security.md "Unbounded run record": the broker keeps no hook arguments
-- past their call (40 calls with 16 MiB arguments took it to 678 MiB when
-- every call was recorded; these 24 would keep 384 MiB); the suite holds the
-- broker under its RSS ceiling.
local big = string.rep("x", 16 << 20)
for _ = 1, 12 do pcall(config.read, "state:" .. big) end
for _ = 1, 12 do pcall(kube.get, "ConfigMap", "x", "default", big) end
error("survived 24 calls")

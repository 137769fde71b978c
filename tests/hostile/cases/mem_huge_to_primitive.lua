-- expect: 4 memory limit: the hook used more than --memory-limit
local big = string.rep("x", 40 << 20)
kube.get(big, big, big)

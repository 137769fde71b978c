-- expect: 4 .
local big = string.rep("x", 40 << 20)
kube.get(big, big, big)

-- expect: 4 .
local t = {}
t.t = t
kube.apply(t)

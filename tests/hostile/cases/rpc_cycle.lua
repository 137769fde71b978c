-- expect: 4 kube.apply: msgpack: cannot encode a cycle
local t = {}
t.t = t
kube.apply(t)

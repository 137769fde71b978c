-- expect: 4 needs "kube:cluster"
kube.apply({ apiVersion = "rbac.authorization.k8s.io/v1", kind = "ClusterRole",
  metadata = { name = "x" }, rules = {} })

-- expect: 4 needs "kube:default"
kube.apply({ apiVersion = "v1", kind = "ConfigMap",
  metadata = { name = "x", namespace = "default" } })

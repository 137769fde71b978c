-- expect: 4 PersistentVolume root-pv: hostPath PersistentVolume \(/\) needs "kube:privileged"
-- kube:cluster is not root: a hostPath PersistentVolume of / mounted
-- through a claim is the node's whole file system.
return { version = "2.0.0", from = ">=1.0.0", permissions = { "kube:cluster" },
  detect = function() return "1.0.0" end,
  upgrade = function()
    kube.apply { apiVersion = "v1", kind = "PersistentVolume",
      metadata = { name = "root-pv" },
      spec = { capacity = { storage = "1Gi" }, accessModes = { "ReadWriteOnce" },
        hostPath = { path = "/" }, storageClassName = "manual" } }
  end }

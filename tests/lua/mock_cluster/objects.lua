-- The objects the mock cluster's tests start from: a cluster with
-- hostpath-storage enabled (tests/lua/mock_cluster/*_test.lua).
local t = require "uphook.test"
local cluster = require "uphook.backend.mock.cluster"

local M = {}
local NS = "kube-system"
M.NS = NS

-- the hostpath provisioner's Deployment with image, extra under spec
function M.deployment(image, extra)
  local d = {
    apiVersion = "apps/v1", kind = "Deployment",
    metadata = { name = "hostpath-provisioner", namespace = NS,
                 labels = { ["k8s-app"] = "hostpath-provisioner" } },
    spec = {
      replicas = 1,
      selector = { matchLabels = { ["k8s-app"] = "hostpath-provisioner" } },
      template = {
        metadata = { labels = { ["k8s-app"] = "hostpath-provisioner" } },
        spec = {
          serviceAccountName = "microk8s-hostpath",
          containers = { {
            name = "hostpath-provisioner", image = image,
            env = { { name = "NODE_NAME", valueFrom = { fieldRef = {
                      fieldPath = "spec.nodeName" } } },
                    { name = "PV_DIR", value = "/var/snap/default-storage" } },
            volumeMounts = { { name = "pv-volume",
                               mountPath = "/var/snap/default-storage" } },
          } },
          volumes = { { name = "pv-volume", hostPath = {
                          path = "/var/snap/default-storage" } } },
        },
      },
    },
  }
  for k, v in pairs(extra or {}) do d.spec[k] = v end
  return d
end

-- microk8s-hostpath, the default StorageClass, extra at its top
function M.storageclass(extra)
  local sc = {
    apiVersion = "storage.k8s.io/v1", kind = "StorageClass",
    metadata = { name = "microk8s-hostpath", annotations = {
      ["storageclass.kubernetes.io/is-default-class"] = "true" } },
    provisioner = "microk8s.io/hostpath",
  }
  for k, v in pairs(extra or {}) do sc[k] = v end
  return sc
end

-- the registry's Service, extra under spec
function M.service(extra)
  local s = { apiVersion = "v1", kind = "Service",
    metadata = { name = "registry", namespace = NS },
    spec = { selector = { app = "registry" },
             ports = { { name = "http", port = 5000 } } } }
  for k, v in pairs(extra or {}) do s.spec[k] = v end
  return s
end

-- the objects of a cluster with hostpath-storage 1.1.0 enabled: a node,
-- the provisioner, its StorageClass and RBAC, state, a bound claim
function M.fixture()
  return {
    { apiVersion = "v1", kind = "Node", metadata = { name = "node-1",
      labels = { ["kubernetes.io/arch"] = "amd64",
                 ["node-role.kubernetes.io/control-plane"] = "" } },
      status = { conditions = { { type = "Ready", status = "True" } },
                 nodeInfo = { kubeletVersion = "v1.29.4",
                              architecture = "amd64",
                              operatingSystem = "linux" },
                 addresses = { { type = "InternalIP",
                                 address = "10.0.0.5" } } } },
    M.deployment("cdkbot/hostpath-provisioner:1.1.0"),
    M.storageclass(),
    { apiVersion = "v1", kind = "ServiceAccount",
      metadata = { name = "microk8s-hostpath", namespace = NS } },
    { apiVersion = "rbac.authorization.k8s.io/v1", kind = "ClusterRole",
      metadata = { name = "microk8s-hostpath" },
      rules = { { apiGroups = { "" }, resources = { "persistentvolumes" },
                  verbs = { "get", "list" } },
                { apiGroups = { "" }, resources = { "events" },
                  verbs = { "create" } } } },
    { apiVersion = "rbac.authorization.k8s.io/v1", kind = "ClusterRoleBinding",
      metadata = { name = "microk8s-hostpath" },
      roleRef = { apiGroup = "rbac.authorization.k8s.io",
                  kind = "ClusterRole", name = "microk8s-hostpath" },
      subjects = { { kind = "ServiceAccount", name = "microk8s-hostpath",
                     namespace = NS } } },
    { apiVersion = "v1", kind = "ConfigMap",
      metadata = { name = "uphook-hostpath-storage", namespace = NS },
      data = { version = "1.1.0" } },
    { apiVersion = "v1", kind = "PersistentVolumeClaim",
      metadata = { name = "data", namespace = "default" },
      spec = { accessModes = { "ReadWriteOnce" },
               storageClassName = "microk8s-hostpath",
               volumeName = "pvc-1",
               resources = { requests = { storage = "1Gi" } } },
      status = { phase = "Bound", capacity = { storage = "1Gi" } } },
    M.service(),
  }
end

-- a mock cluster of opts, fixture()'s objects unless opts.objects
function M.new(opts)
  opts = opts or {}
  opts.objects = opts.objects or M.fixture()
  return cluster.new(opts)
end

-- the error fn raises (it must raise one)
function M.err_of(fn)
  local ok, e = pcall(fn)
  t.ok(not ok, "expected an error")
  return e
end

return M

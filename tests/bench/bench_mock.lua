-- The mock cluster's speed, in CPU time: one hook test's worth of mock
-- work (a cluster of 10 objects, one apply, one rollout wait), the
-- cluster built from decoded objects or from a prepared seed (what
-- `uphook test` does for a fixture used by many cases).
-- Run by bench_mock.sh: lua5.4 tests/bench/bench_mock.lua
dofile("tests/lua/searcher.lua")
local cluster = require "uphook.backend.mock.cluster"

local NS = "kube-system"
local LABELS = { ["k8s-app"] = "hostpath-provisioner" }

local function deployment(image)
  return { apiVersion = "apps/v1", kind = "Deployment",
    metadata = { name = "hostpath-provisioner", namespace = NS,
                 labels = LABELS },
    spec = { replicas = 1, selector = { matchLabels = LABELS },
      template = { metadata = { labels = LABELS },
        spec = { containers = { { name = "hostpath-provisioner",
                                  image = image } } } } } }
end

local function objects()
  local out = {
    { apiVersion = "v1", kind = "Node", metadata = { name = "node-1" },
      status = { conditions = { { type = "Ready", status = "True" } } } },
    deployment("cdkbot/hostpath-provisioner:1.1.0"),
    { apiVersion = "storage.k8s.io/v1", kind = "StorageClass",
      metadata = { name = "microk8s-hostpath" },
      provisioner = "microk8s.io/hostpath", reclaimPolicy = "Delete",
      volumeBindingMode = "WaitForFirstConsumer" },
  }
  for i = 1, 7 do
    out[#out + 1] = { apiVersion = "v1", kind = "ConfigMap",
      metadata = { name = "cm-" .. i, namespace = NS },
      data = { key = string.rep("v", 100) } }
  end
  return out
end

local function rolled_out(d)
  local s = d and d.status
  return s ~= nil and s.observedGeneration == d.metadata.generation
    and (s.updatedReplicas or 0) == (d.spec.replicas or 1)
end

local function rate(make)
  local upgraded = deployment("cdkbot/hostpath-provisioner:1.4.2")
  local n, c0 = 0, os.clock()
  repeat
    for _ = 1, 100 do
      local b = make()
      b:apply(upgraded)
      assert(b:watch("Deployment", "hostpath-provisioner", NS, rolled_out,
                     300))
    end
    n = n + 100
  until os.clock() - c0 > 1.0
  return n / (os.clock() - c0)
end

local objs, seed = objects(), cluster.seed(objects())
local r1 = rate(function() return cluster.new { objects = objs } end)
local r2 = rate(function() return cluster.new { seed = seed } end)
print("| mock cluster, 10 objects + apply + watch | per s (CPU) | goal |")
print("|---|---:|---:|")
print(string.format("| from decoded objects | %.0f | >= 1000 |", r1))
print(string.format("| from a prepared seed | %.0f | >= 2000 |", r2))
print(string.format("seed / objects: %.1fx", r2 / r1))

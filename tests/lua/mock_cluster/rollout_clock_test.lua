-- The mock cluster's fidelity (docs/contract.md §6): rollouts, watches and
-- restarts in mock time.
-- The objects the cases start from: tests/lua/mock_cluster/objects.lua.
local t = require "uphook.test"
local objects = require "objects"

local NS, deployment, new = objects.NS, objects.deployment, objects.new

local function rolled_out(d)
  if not d or not d.status then return false end
  local s, want = d.status, d.spec.replicas or 1
  return s.observedGeneration == d.metadata.generation
     and (s.updatedReplicas or 0) == want
     and (s.availableReplicas or 0) == want
end

t.case("workloads roll out at once", function()
  local b = new()
  b:apply(deployment("img:2", { replicas = 3 }))
  local d = b:get("Deployment", "hostpath-provisioner", NS)
  t.ok(rolled_out(d))
  t.eq(d.status.readyReplicas, 3)
  local conds = {}
  for _, c in ipairs(d.status.conditions) do conds[c.type] = c.reason end
  t.eq(conds, { Available = "MinimumReplicasAvailable",
                Progressing = "NewReplicaSetAvailable" })
  local t0 = b:now()
  local ok, last = b:watch("Deployment", "hostpath-provisioner", NS,
                           rolled_out, 300)
  t.ok(ok)
  t.eq(last.spec.replicas, 3)
  t.eq(b:now(), t0, "a satisfied watch takes no mock time")
  -- DaemonSet follows the number of nodes
  local ds = deployment("img:1")
  ds.kind, ds.metadata.name, ds.spec.replicas = "DaemonSet", "ds", nil
  b:apply(ds)
  local s = b:get("DaemonSet", "ds", NS).status
  t.eq(s.desiredNumberScheduled, 1)
  t.eq(s.updatedNumberScheduled, 1)
  t.eq(s.numberAvailable, 1)
  b:apply{ apiVersion = "v1", kind = "Node", metadata = { name = "node-2" } }
  s = b:get("DaemonSet", "ds", NS).status
  t.eq(s.desiredNumberScheduled, 2)
  t.eq(s.numberReady, 2)
  -- StatefulSet
  local sts = deployment("img:1")
  sts.kind, sts.metadata.name = "StatefulSet", "sts"
  b:apply(sts)
  s = b:get("StatefulSet", "sts", NS).status
  t.eq(s.currentRevision, s.updateRevision)
  t.eq(s.readyReplicas, 1)
  t.eq(s.observedGeneration, 1)
  -- a Job completes
  b:apply{ apiVersion = "batch/v1", kind = "Job",
    metadata = { name = "j", namespace = NS },
    spec = { template = { spec = { restartPolicy = "Never",
      containers = { { name = "m", image = "m:1" } } } } } }
  local j = b:get("Job", "j", NS)
  t.eq(j.status.succeeded, 1)
  t.eq(j.status.conditions[2].type, "Complete")
end)

t.case("a stalled rollout times out in mock time, not real time", function()
  local b = new()
  b:stall("Deployment", "hostpath-provisioner", NS)
  b:apply(deployment("img:2", { replicas = 2 }))
  local d = b:get("Deployment", "hostpath-provisioner", NS)
  t.eq(d.status.observedGeneration, d.metadata.generation)
  t.eq(d.status.updatedReplicas, 1)
  t.ok(not rolled_out(d))
  -- (a real 300 s wait would outlast the suite's deadline)
  local t0 = b:now()
  local ok, last = b:watch("apps/v1/Deployment", "hostpath-provisioner", NS,
                           rolled_out, 300)
  t.eq(ok, false)
  t.eq(last.status.updatedReplicas, 1)
  t.eq(b:now() - t0, 300)
  -- unstall finishes it
  b:unstall("Deployment", "hostpath-provisioner", NS)
  t.ok(rolled_out(b:get("Deployment", "hostpath-provisioner", NS)))
  -- a stall for N seconds finishes on the mock clock
  b:stall("Deployment", "hostpath-provisioner", NS, 30)
  b:apply(deployment("img:3", { replicas = 2 }))
  t.ok(not rolled_out(b:get("Deployment", "hostpath-provisioner", NS)))
  local calls = 0
  t0 = b:now()
  ok, last = b:watch("Deployment", "hostpath-provisioner", NS, function(o)
    calls = calls + 1
    return rolled_out(o)
  end, 300)
  t.ok(ok)
  t.eq(b:now() - t0, 30)
  t.eq(calls, 2, "fn sees the current object and the one change")
  t.eq(last.spec.template.spec.containers[1].image, "img:3")
end)

t.case("watch an absent object until it appears or the timeout", function()
  local b = new()
  local ok, last = b:watch("ConfigMap", "later", NS,
                           function(o) return o ~= nil end, 10)
  t.eq(ok, false)
  t.eq(last, nil)
  b.clock:after(5, function()
    b:apply{ apiVersion = "v1", kind = "ConfigMap",
             metadata = { name = "later", namespace = NS } }
  end)
  local t0 = b:now()
  ok, last = b:watch("ConfigMap", "later", NS,
                     function(o) return o ~= nil end, 10)
  t.ok(ok)
  t.eq(last.metadata.name, "later")
  t.eq(b:now() - t0, 5)
end)

t.case("sleep and now use the mock clock", function()
  local b = new()
  local t0 = b:now()
  b:sleep(3600)
  t.eq(b:now() - t0, 3600)
  local clock = require("uphook.backend.mock.clock").new{ start = 0 }
  local b2 = new{ clock = clock }
  t.eq(b2:now(), 0)
  b2:sleep(1.5)
  t.eq(clock:now(), 1.5)
  t.eq(require("uphook.backend.mock.clock").rfc3339(1704067200 + 86400 * 60 + 61),
       "2024-03-01T00:01:01Z")
end)

t.case("restart records the service and the mock time", function()
  local b = new()
  b:sleep(10)
  b:restart("kubelite")
  t.eq(b.restarts, { { service = "kubelite", time = b:now() } })
end)

-- The mock's fidelity to the API server (docs/mock.md), each case run on
-- the mock and on the fake API server (tests/lua/fidelity/worlds.lua):
-- The controllers: rollouts per node, Pods, ReplicaSets, and what a
-- snapshot leaves out.
local t = require "uphook.test"
local worlds = require "worlds"

local NS, case, deployment = worlds.NS, worlds.case, worlds.deployment

-- kubectl rollout status (kubectl@fd89c3d1:pkg/polymorphichelpers/
-- rollout_status.go): a DaemonSet is rolled out when updatedNumberScheduled
-- and numberAvailable reach desiredNumberScheduled. The DaemonSet
-- controller schedules a pod on each Node whose labels match the
-- template's nodeSelector and whose NoSchedule/NoExecute taints it
-- tolerates (it adds not-ready, unreachable, *-pressure and unschedulable
-- tolerations itself, daemon/util/daemonset_util.go); a pod on a NotReady
-- node never becomes available (kubelet does not run it).
local rolled_out = require("uphook.engine.prims").rolled_out

local function daemonset(pod_spec)
  local ps = { containers = { { name = "c", image = "img:1" } } }
  for k, v in pairs(pod_spec or {}) do ps[k] = v end
  return { apiVersion = "apps/v1", kind = "DaemonSet",
    metadata = { name = "ds", namespace = NS },
    spec = { selector = { matchLabels = { app = "ds" } },
      template = { metadata = { labels = { app = "ds" } }, spec = ps } } }
end

-- the Pods in NS whose names start with prefix, sorted by name
local function pods_of(w, prefix)
  local out = {}
  for _, p in ipairs(w.list("v1/Pod")) do
    if p.metadata.name:sub(1, #prefix) == prefix then out[#out + 1] = p end
  end
  table.sort(out, function(a, b) return a.metadata.name < b.metadata.name end)
  return out
end

case("a DaemonSet rollout does not finish with a NotReady node", function(w)
  local pool = { ["fidelity.example.com/pool"] = "a" }
  w.node("fid-n1", true, pool)
  w.node("fid-n2", false, pool)
  w.apply(daemonset { nodeSelector = pool }, "uphook")
  local ds = w.settled("DaemonSet", "ds", NS)
  local done, why = rolled_out(ds)
  t.eq(done, false)
  t.eq(why, "1/2 updated pods available")
  t.eq(ds.status.numberUnavailable, 1)
  -- the node comes back (its kubelet reports Ready): the rollout finishes
  w.node("fid-n2", true, pool)
  done, why = rolled_out(w.settled("DaemonSet", "ds", NS))
  t.eq(done, true, why)
  t.eq(why, "2/2 pods updated and available")
  w.delete("DaemonSet", "ds", NS)
end)

-- The scheduler places a Deployment's or StatefulSet's pods only on a
-- Node whose labels match the template's nodeSelector and whose taints
-- it tolerates; the node lifecycle controller taints a NotReady node
-- node.kubernetes.io/not-ready:NoSchedule (kubernetes/kubernetes@v1.32.3
-- pkg/controller/nodelifecycle, TaintNodeNotReady), and that node's
-- kubelet runs nothing. So with only NotReady nodes to go to, the pods
-- stay Pending, none is available, and kubectl rollout status waits
-- (rollout_status.go: availableReplicas < updatedReplicas; a
-- StatefulSet's readyReplicas < replicas); it finishes when a node is
-- Ready.
case("a Deployment rollout does not finish with only NotReady nodes",
  function(w)
    local pool = { ["fidelity.example.com/pool"] = "d" }
    w.node("fid-d1", false, pool)
    local d = deployment("nr", { app = "nr" }, { replicas = 2 })
    d.spec.template.spec.nodeSelector = pool
    w.apply(d, "uphook")
    local done, why = rolled_out(w.settled("Deployment", "nr", NS))
    t.eq(done, false)
    t.eq(why, "0/2 updated replicas available")
    w.node("fid-d1", true, pool)
    done, why = rolled_out(w.settled("Deployment", "nr", NS))
    t.eq(done, true, why)
    t.eq(why, "2/2 replicas updated and available")
    w.delete("Deployment", "nr", NS)
  end)

case("a StatefulSet rollout does not finish with only NotReady nodes",
  function(w)
    local pool = { ["fidelity.example.com/pool"] = "s" }
    w.node("fid-s1", false, pool)
    local ss = { apiVersion = "apps/v1", kind = "StatefulSet",
      metadata = { name = "nr", namespace = NS },
      spec = { serviceName = "nr", replicas = 1,
        selector = { matchLabels = { app = "nrs" } },
        template = { metadata = { labels = { app = "nrs" } },
          spec = { nodeSelector = pool,
            containers = { { name = "c", image = "img:1" } } } } } }
    w.apply(ss, "uphook")
    local done, why = rolled_out(w.settled("StatefulSet", "nr", NS))
    t.eq(done, false)
    t.eq(why, "0/1 pods ready")
    w.node("fid-s1", true, pool)
    done = rolled_out(w.settled("StatefulSet", "nr", NS))
    t.eq(done, true)
    w.delete("StatefulSet", "nr", NS)
  end)

-- kube-scheduler (kubernetes/kubernetes@v1.32.3 pkg/scheduler/framework/
-- plugins: NodeAffinity's nodeSelector match, TaintToleration for
-- NoSchedule/NoExecute taints, NodeUnschedulable) binds a pod to a node
-- (spec.nodeName); a pod it can bind nowhere stays Pending without one.
-- A NotReady node carries node.kubernetes.io/not-ready:NoSchedule
-- (nodelifecycle, TaintNodeNotReady).
case("a Deployment's pods go to a Ready node; none: Pending", function(w)
  local pool = { ["fidelity.example.com/pool"] = "p" }
  w.node("fid-p1", false, pool)
  w.node("fid-p2", true, pool, { taints = { { key = "dedicated",
    value = "gpu", effect = "NoSchedule" } } })
  -- p1 is NotReady, p2's taint is not tolerated: nowhere to run
  local d = deployment("web", { app = "web" })
  d.spec.template.spec.nodeSelector = pool
  w.apply(d, "uphook")
  t.eq((rolled_out(w.settled("Deployment", "web", NS))), false)
  local ps = pods_of(w, "web-")
  t.eq(#ps, 1)
  t.eq(ps[1].spec.nodeName, nil)
  t.eq(ps[1].status.phase, "Pending")
  -- a toleration for p2's taint: the pods go there and are Ready
  d.spec.template.spec.tolerations = { { key = "dedicated",
    operator = "Exists", effect = "NoSchedule" } }
  w.apply(d, "uphook")
  t.eq((rolled_out(w.settled("Deployment", "web", NS))), true)
  ps = pods_of(w, "web-")
  t.eq(#ps, 1)
  t.eq(ps[1].spec.nodeName, "fid-p2")
  t.eq(ps[1].status.phase, "Running")
  t.eq(ps[1].status.conditions[1].status, "True")
end)

-- The DaemonSet controller (daemon/util/daemonset_util.go) adds the
-- not-ready, unreachable, *-pressure and unschedulable tolerations to its
-- pods itself, so a NotReady node gets one (never available); a taint it
-- does not tolerate keeps it off a node; nodeSelector picks nodes.
case("a DaemonSet runs where its nodeSelector and tolerations let it",
  function(w)
    local pool = { ["fidelity.example.com/pool"] = "t" }
    w.node("fid-t1", true, pool, { taints = { { key = "dedicated",
      value = "gpu", effect = "NoSchedule" } } })
    w.node("fid-t2", false, pool, { taints = { {
      key = "node.kubernetes.io/not-ready", effect = "NoExecute" } } })
    w.node("fid-t3", true, pool)
    w.apply(daemonset { nodeSelector = pool }, "uphook")
    local st = w.settled("DaemonSet", "ds", NS).status
    -- t1's taint is not tolerated; t2's not-ready taint is (but t2 is
    -- NotReady: its pod never becomes available)
    t.eq(st.desiredNumberScheduled, 2)
    t.eq(st.numberAvailable, 1)
    local on = {}
    for _, p in ipairs(pods_of(w, "ds-")) do
      on[p.spec.nodeName] = p.status.conditions[1].status
    end
    t.eq(on, { ["fid-t2"] = "False", ["fid-t3"] = "True" })
    w.apply(daemonset { tolerations = { { key = "dedicated",
      operator = "Equal", value = "gpu", effect = "NoSchedule" } },
      nodeSelector = { ["kubernetes.io/hostname"] = "fid-t1" } }, "uphook")
    local ds = w.settled("DaemonSet", "ds", NS)
    t.eq(ds.status.desiredNumberScheduled, 1)
    t.eq((rolled_out(ds)), true)
    local ps = pods_of(w, "ds-")
    t.eq(#ps, 1)
    t.eq(ps[1].spec.nodeName, "fid-t1")
    w.delete("DaemonSet", "ds", NS)
  end)

-- Workloads have Pods, as their controllers make them (a Deployment's
-- through its ReplicaSet: <rs>-<5 chars>, labelled pod-template-hash; a
-- DaemonSet's one per node, spec.nodeName; a StatefulSet's <name>-<i>),
-- so a check_status of pod/<name> (microk8s-core-addons' addons.yaml:
-- pod/coredns, pod/metrics-server, pod/speaker) says enabled offline.
-- Deployment controller: pkg/controller/deployment/sync.go
-- getNewReplicaSet (name <deployment>-<pod-template-hash>, the hash in
-- the pod labels and selector); ReplicaSet controller: pods named by
-- generateName <rs>- (pkg/controller/controller_utils.go
-- getPodsPrefix); the garbage collector deletes dependents
-- (ownerReferences) of a deleted owner.
local enabled = require "uphook.engine.enabled"

case("workloads have Pods; check_status pod/<name> sees them", function(w)
  local pool = { ["fidelity.example.com/pool"] = "w" }
  w.node("fid-w1", true, pool)
  w.node("fid-w2", false, pool)
  t.eq(enabled.check(w.backend, "pod/web"), false)
  local d = deployment("web", { app = "web" }, { replicas = 2 })
  d.spec.template.spec.nodeSelector = pool
  w.apply(d, "uphook")
  w.settled("Deployment", "web", NS)
  local ps = pods_of(w, "web-")
  t.eq(#ps, 2)
  local hash = ps[1].metadata.labels["pod-template-hash"]
  t.ok(hash, "pod-template-hash label")
  t.eq(ps[1].metadata.labels.app, "web")
  t.eq(ps[1].metadata.ownerReferences[1].kind, "ReplicaSet")
  t.eq(ps[1].metadata.ownerReferences[1].name, "web-" .. hash)
  t.ok(ps[1].metadata.name:match("^web%-" .. hash .. "%-%w%w%w%w%w$"),
       ps[1].metadata.name)
  t.eq(ps[1].spec.nodeName, "fid-w1")
  t.eq(ps[1].status.conditions[1].status, "True")
  t.eq(enabled.check(w.backend, "pod/web"), true)
  -- a new image: new Pods (new names), the old ones gone
  local before = ps[1].metadata.name
  d.spec.template.spec.containers[1].image = "img:2"
  w.apply(d, "uphook")
  w.settled("Deployment", "web", NS)
  ps = pods_of(w, "web-")
  t.eq(#ps, 2)
  t.ok(ps[1].metadata.name ~= before and ps[2].metadata.name ~= before)
  t.eq(ps[1].spec.containers[1].image, "img:2")
  t.ok(ps[1].metadata.labels["pod-template-hash"] ~= hash)
  -- a DaemonSet: one per node; the NotReady node's pod is not Ready
  w.apply(daemonset { nodeSelector = pool }, "uphook")
  w.settled("DaemonSet", "ds", NS)
  ps = pods_of(w, "ds-")
  t.eq(#ps, 2)
  local on = {}
  for _, p in ipairs(ps) do
    on[p.spec.nodeName] = p.status.conditions[1].status
  end
  t.eq(on, { ["fid-w1"] = "True", ["fid-w2"] = "False" })
  -- a StatefulSet: <name>-0, <name>-1
  w.apply({ apiVersion = "apps/v1", kind = "StatefulSet",
    metadata = { name = "db", namespace = NS },
    spec = { serviceName = "db", replicas = 2,
      selector = { matchLabels = { app = "db" } },
      template = { metadata = { labels = { app = "db" } },
        spec = { nodeSelector = pool,
          containers = { { name = "c", image = "img:1" } } } } } }, "uphook")
  w.settled("StatefulSet", "db", NS)
  local names = {}
  for _, p in ipairs(pods_of(w, "db-")) do names[#names + 1] = p.metadata.name end
  table.sort(names)
  t.eq(names, { "db-0", "db-1" })
  -- deleted workloads take their Pods along
  w.delete("Deployment", "web", NS)
  w.delete("DaemonSet", "ds", NS)
  w.delete("StatefulSet", "db", NS)
  t.eq(#pods_of(w, "web-"), 0)
  t.eq(#pods_of(w, "ds-"), 0)
  t.eq(#pods_of(w, "db-"), 0)
  t.eq(enabled.check(w.backend, "pod/web"), false)
end)

-- The Deployment controller (pkg/controller/deployment/sync.go,
-- getNewReplicaSet and scale) keeps one ReplicaSet per template it ran,
-- <name>-<pod-template-hash>, with the revision annotation: the new one
-- gets the replicas and the next revision, the old ones are scaled to 0
-- and kept (revisionHistoryLimit, default 10); its Pods are the new
-- ReplicaSet's (ownerReferences with its uid). The garbage collector
-- deletes a deleted Deployment's ReplicaSets.
case("a Deployment's ReplicaSets: the current one has the pods, older ones 0",
  function(w)
    local function rs_of(name)
      local out = {}
      for _, rs in ipairs(w.list("apps/v1/ReplicaSet")) do
        local o = rs.metadata.ownerReferences or {}
        if o[1] and o[1].kind == "Deployment" and o[1].name == name then
          out[rs.metadata.labels["pod-template-hash"]] = rs
        end
      end
      return out
    end
    local d = deployment("fid-rs", { app = "fid-rs" }, { replicas = 2 })
    w.apply(d, "uphook")
    local dep = w.settled("Deployment", "fid-rs", NS)
    local ps = pods_of(w, "fid-rs-")
    local h1 = ps[1].metadata.labels["pod-template-hash"]
    local rs1 = rs_of("fid-rs")[h1]
    t.ok(rs1, "the ReplicaSet fid-rs-<pod-template-hash> is stored")
    t.eq(rs1.metadata.name, "fid-rs-" .. h1)
    t.eq(rs1.metadata.ownerReferences[1].uid, dep.metadata.uid)
    t.eq(rs1.metadata.annotations["deployment.kubernetes.io/revision"], "1")
    t.eq(rs1.spec.replicas, 2)
    t.eq(rs1.spec.selector.matchLabels, { app = "fid-rs",
                                          ["pod-template-hash"] = h1 })
    t.eq(rs1.status.readyReplicas, 2)
    t.eq(ps[1].metadata.ownerReferences[1].uid, rs1.metadata.uid)
    -- a new image: a new ReplicaSet, revision 2; the old one at 0
    d.spec.template.spec.containers[1].image = "img:2"
    w.apply(d, "uphook")
    w.settled("Deployment", "fid-rs", NS)
    local all = rs_of("fid-rs")
    local n, new = 0, nil
    for h, rs in pairs(all) do
      n = n + 1
      if h ~= h1 then new = rs end
    end
    t.eq(n, 2)
    t.eq(all[h1].spec.replicas, 0)
    t.eq(new.spec.replicas, 2)
    t.eq(new.metadata.annotations["deployment.kubernetes.io/revision"], "2")
    ps = pods_of(w, "fid-rs-")
    t.eq(#ps, 2)
    t.eq(ps[1].metadata.ownerReferences[1].name, new.metadata.name)
    -- deleted, it takes them along
    w.delete("Deployment", "fid-rs", NS)
    t.eq(next(rs_of("fid-rs")), nil)
  end)

-- A fixture made with `kubectl get -o yaml` lists the Pods that run: they
-- are the workload's (its controller adopts them by its selector), and no
-- others are made; a workload the fixture lists no Pods of gets its own.
case("a fixture's own Pods are kept, no others made", function(w)
  local pod = { apiVersion = "v1", kind = "Pod", metadata = {
      name = "web-abc-xyz12", namespace = NS, labels = { app = "web" } },
    spec = { containers = { { name = "app", image = "img:1" } } },
    status = { phase = "Running" } }
  w.seed { deployment("web", { app = "web" }), pod,
           deployment("api", { app = "api" }) }
  w.settled("Deployment", "web", NS)
  w.settled("Deployment", "api", NS)
  local ps = pods_of(w, "web-")
  t.eq(#ps, 1)
  t.eq(ps[1].metadata.name, "web-abc-xyz12")
  ps = pods_of(w, "api-")
  t.eq(#ps, 1)
  t.eq(ps[1].metadata.labels.app, "api")
end)

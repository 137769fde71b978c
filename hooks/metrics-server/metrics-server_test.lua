local t = require "uphook.test"

local NS = "kube-system"

-- A MicroK8s kubelet args file before enable touched it ...
local KUBELET = table.concat({
  "--kubeconfig=${SNAP_DATA}/credentials/kubelet.config",
  "--cert-dir=${SNAP_DATA}/certs",
  "--client-ca-file=${SNAP_DATA}/certs/ca.crt",
  "--anonymous-auth=false",
  "--root-dir=${SNAP_COMMON}/var/lib/kubelet",
  "--fail-swap-on=false",
  '--eviction-hard="memory.available<100Mi,nodefs.available<1Gi,imagefs.available<1Gi"',
  "--container-runtime-endpoint=${SNAP_COMMON}/run/containerd.sock",
  "--containerd=${SNAP_COMMON}/run/containerd.sock",
  '--node-labels="microk8s.io/cluster=true,node.kubernetes.io/microk8s-controlplane=microk8s-controlplane"',
  "--read-only-port=0",
  "--cluster-domain=cluster.local",
  "--cluster-dns=10.152.183.10",
  "" }, "\n")
-- ... and as `microk8s enable metrics-server` leaves it.
local KUBELET_ENABLED = KUBELET .. "--authentication-token-webhook=true\n"

local function env(o)
  o = o or {}
  local e = { addon = ".", cluster = "fixtures/" .. (o.fixture
    or "cluster-v0.5.2-amd64.yaml"), args = { kubelet = o.kubelet
    or KUBELET_ENABLED }, state = o.state }
  return t.env(e)
end


local function deployment(e) return e:get("Deployment", "metrics-server", NS) end
local function image(e) return deployment(e).spec.template.spec.containers[1].image end
local function arch(e)
  return deployment(e).spec.template.spec.nodeSelector["kubernetes.io/arch"]
end

local function resources(e)
  local out = {}
  for _, r in ipairs(e:get("ClusterRole", "system:metrics-server").rules) do
    for _, res in ipairs(r.resources) do out[#out + 1] = res end
  end
  table.sort(out)
  return out
end

t.case("0.5.2 -> 0.8.1 with no state: registry.k8s.io, rules replaced", function()
  local e = env()
  local r = e:upgrade {}
  t.eq(r.code, 0, r.error)
  t.eq(image(e), "registry.k8s.io/metrics-server/metrics-server:v0.8.1")
  t.eq(e:state().version, "0.8.1")
  t.eq(e:state().history[1].from, "0.5.2")
  -- the whole rules list is v0.8.1's: nodes/stats, namespaces and
  -- configmaps are gone, not merged in
  t.eq(resources(e), { "nodes", "nodes/metrics", "pods" })
  t.eq(arch(e), "amd64")
  local api = e:get("APIService", "v1beta1.metrics.k8s.io")
  t.eq(api.metadata.annotations["addon.microk8s.io/version"], "0.8.1")
  -- enable already set the kubelet flag: no restart
  t.eq(#e:calls("service.restart"), 0)
  t.eq(e:file("args:kubelet"), KUBELET_ENABLED)
end)

t.case("kubelet without --authentication-token-webhook: set, kubelite restarted once", function()
  local e = env { kubelet = KUBELET }
  local r = e:upgrade {}
  t.eq(r.code, 0, r.error)
  t.eq(e:args("kubelet")["--authentication-token-webhook"], "true")
  t.eq(e:restarts(), { "kubelite" })
  -- every other line kept, in order
  t.eq(e:file("args:kubelet"):sub(1, #KUBELET), KUBELET)
end)

t.case("kubelet with --authentication-token-webhook=false: set to true", function()
  local e = env { kubelet = KUBELET .. "--authentication-token-webhook=false\n" }
  t.eq(e:upgrade({}).code, 0)
  t.eq(e:file("args:kubelet"), KUBELET_ENABLED)
  t.eq(#e:calls("service.restart"), 1)
end)

t.case("no state: the live nodeSelector arch is kept, not this node's", function()
  local e = env { fixture = "cluster-v0.5.2-mixed.yaml" }
  local r = e:upgrade {}
  t.eq(r.code, 0, r.error)
  t.eq(arch(e), "arm64")
  t.eq(e:state().params, {})
end)

t.case("--arch is refused: enable takes no parameters", function()
  local e = env()
  local before = e:snapshot()
  local r = e:upgrade { "--arch=amd64" }
  t.eq(r.code, 2)
  t.match(r.error, "unknown parameter %-%-arch for metrics%-server %(it takes none%)")
  t.eq(e:snapshot(), before)
end)

t.case("a live nodeSelector that is no architecture is refused before any change", function()
  local e = env()
  e:apply({ apiVersion = "apps/v1", kind = "Deployment",
    metadata = { name = "metrics-server", namespace = NS },
    spec = { template = { spec = { nodeSelector = {
      ["kubernetes.io/arch"] = "x86" } } } } }, {})
  local before = e:snapshot()
  local r = e:upgrade {}
  t.eq(r.code, 4)
  t.match(r.error, '"x86" %(from the live Deployment%) is not a Kubernetes node architecture')
  t.eq(e:snapshot(), before)
end)

t.case("plan changes nothing", function()
  local e = env { kubelet = KUBELET }
  local before = e:snapshot()
  local r = e:plan {}
  t.eq(r.code, 0, r.error)
  t.eq(e:snapshot(), before)
  t.eq(e:file("args:kubelet"), KUBELET)
  t.eq(e:state(), nil)
  local seen = {}
  for _, x in ipairs(r.plan) do
    if x.type == "kube" then seen[x.kind .. "/" .. x.name] = x.action
    elseif x.type == "file" or x.type == "restart" then
      seen[x.type] = x.path or x.service
    end
  end
  t.eq(seen["Deployment/metrics-server"], "configured")
  t.eq(seen["ClusterRole/system:metrics-server"], "configured")
  t.eq(seen.file, "args:kubelet")
  t.eq(seen.restart, "kubelite")
end)

t.case("a fault at every change rolls back exactly", function()
  -- 10 objects, the kubelet args, the restart, the state commit
  t.eq(t.each_fault(function() return env { kubelet = KUBELET } end), 13)
end)

t.case("a stalled rollout rolls back the manifest and the kubelet args", function()
  local e = env { kubelet = KUBELET }
  local before = e:snapshot()
  e:stall("Deployment", "metrics-server", NS)
  local r = e:upgrade {}
  t.eq(r.code, 1)
  t.match(r.error, "rollout of Deployment")
  t.eq(e:snapshot(), before)
  t.eq(e:file("args:kubelet"), KUBELET)
  -- restarted on the new args, then again on the restored ones
  t.eq(#e:restarts(), 2)
end)

t.case("a second run is a no-op", function()
  local e = env { kubelet = KUBELET }
  t.eq(e:upgrade({}).code, 0)
  local after, args = e:snapshot(), e:file("args:kubelet")
  local r = e:upgrade {}
  t.eq(r.code, 0, r.error)
  t.ok(r.noop, "no drift: already at 0.8.1")
  t.eq(e:snapshot(), after)
  t.eq(e:file("args:kubelet"), args)
  t.eq(e:restarts(), { "kubelite" }, "only the first run restarted")
end)

t.case("the saved state is used instead of detect", function()
  local e = env { state = { version = "0.5.2" } }
  e:apply({ apiVersion = "apps/v1", kind = "Deployment",
    metadata = { name = "metrics-server", namespace = NS },
    spec = { template = { spec = { containers = { { name = "metrics-server",
      image = "k8s.gcr.io/metrics-server/metrics-server:v0.6.4" } } } } } }, {})
  local r = e:upgrade {}
  t.eq(r.code, 0, r.error)
  t.eq(e:state().history[1].from, "0.5.2")
end)

t.case("a plain env:fail{on = \"config.set_args\"} rolls back with exit 1", function()
  local e = env { kubelet = "--authentication-token-webhook=false\n" }
  local before, args = e:snapshot(), e:file("args:kubelet")
  e:fail { on = "config.set_args", error = "injected" }
  local r = e:upgrade {}
  t.eq(r.code, 1, r.error)
  t.eq(e:snapshot(), before)
  t.eq(e:file("args:kubelet"), args)
end)

-- Several nodes ----------------------------------------------------------------

-- three nodes: this one (mk8s-node-1), node-b as enable left it, node-c
-- joined through a node that never had the flag
local function three(o)
  o = o or {}
  return t.env { addon = ".", cluster = "fixtures/cluster-v0.5.2-amd64.yaml",
    args = { kubelet = o.kubelet or KUBELET },
    nodes = { { name = "node-b", args = { kubelet = KUBELET_ENABLED } },
              { name = "node-c", args = { kubelet = KUBELET } } } }
end

t.case("three nodes: the flag on every node, kubelite restarted where it changed", function()
  local e = three()
  local r = e:upgrade {}
  t.eq(r.code, 0, r.error)
  for _, n in ipairs { "mk8s-node-1", "node-b", "node-c" } do
    t.eq(e:args("kubelet", n)["--authentication-token-webhook"], "true", n)
  end
  t.eq(e:restarts(), { "kubelite" })
  t.eq(e:restarts("node-b"), {}, "node-b had the flag: not restarted")
  t.eq(e:restarts("node-c"), { "kubelite" })
  -- verify read every node's kubelet configuration
  local seen = {}
  for _, c in ipairs(e:calls("nodes.kubelet_config")) do seen[#seen + 1] = c[1] end
  t.eq(seen, { "mk8s-node-1", "node-b", "node-c" })
end)

t.case("three nodes: the plan shows each node's change with its prior", function()
  local e = three()
  local r = e:plan {}
  t.eq(r.code, 0, r.error)
  local by = {}
  for _, x in ipairs(r.plan) do
    if x.type == "node_args" and not x.this then by[x.node] = x end
  end
  t.eq(by["node-b"], nil, "node-b already has it (read from its configz)")
  t.eq(by["node-c"].changes, { { flag = "--authentication-token-webhook",
    prior = false, how = "read", new = "true" } })
  t.eq(e:args("kubelet", "node-c")["--authentication-token-webhook"], nil)
end)

t.case("three nodes: node-c's agent failing rolls every node back", function()
  local e = three()
  local before = { e:file("args:kubelet"), e:file("args:kubelet", "node-b"),
                   e:file("args:kubelet", "node-c") }
  local snap = e:snapshot()
  e:fail { on = "config.set_args", node = "node-c", error = "disk full" }
  local r = e:upgrade {}
  t.eq(r.code, 1, r.error)
  t.match(r.error, "node node%-c %(10%.0%.1%.12%): disk full")
  t.eq(e:snapshot(), snap)
  t.eq(e:file("args:kubelet"), before[1])
  t.eq(e:file("args:kubelet", "node-b"), before[2])
  -- undone too (the agent may have written it before it failed): the
  -- agent's rewrite keeps a file without blank lines byte for byte
  t.eq(e:file("args:kubelet", "node-c"), before[3])
  t.eq(e:restarts("node-c"), {})
end)

t.case("three nodes: a second run changes nothing", function()
  local e = three()
  t.eq(e:upgrade({}).code, 0)
  local files = { e:file("args:kubelet"), e:file("args:kubelet", "node-b"),
                  e:file("args:kubelet", "node-c") }
  local r = e:upgrade {}
  t.eq(r.code, 0, r.error)
  t.ok(r.noop, "no drift")
  t.eq({ e:file("args:kubelet"), e:file("args:kubelet", "node-b"),
         e:file("args:kubelet", "node-c") }, files)
  t.eq(e:restarts("node-c"), { "kubelite" }, "not restarted again")
end)

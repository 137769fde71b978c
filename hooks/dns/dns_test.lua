-- Tests of the dns (CoreDNS) upgrade hook, from the real 1.6.6, 1.8.0 and
-- 1.10.1 manifests (fixtures/, placeholders filled as enable fills them)
-- to 1.14.3.
local t = require "uphook.test"

local NS = "kube-system"
local VERSIONS = { "1.6.6", "1.8.0", "1.10.1" }

local ADDON = "."      -- this folder (t.env paths are relative to the test file)

-- kubelet's args file as MicroK8s ships it, after `enable dns`.
local KUBELET = table.concat({
  "--kubeconfig=${SNAP_DATA}/credentials/kubelet.config",
  "--cert-dir=${SNAP_DATA}/certs",
  "--client-ca-file=${SNAP_DATA}/certs/ca.crt",
  "--anonymous-auth=false",
  "--root-dir=${SNAP_COMMON}/var/lib/kubelet",
  "--fail-swap-on=false",
  "--eviction-hard=\"memory.available<100Mi,nodefs.available<1Gi,imagefs.available<1Gi\"",
  "--container-runtime-endpoint=${SNAP_COMMON}/run/containerd.sock",
  "--node-labels=\"microk8s.io/cluster=true,node.kubernetes.io/microk8s-controlplane=microk8s-controlplane\"",
  "--authentication-token-webhook=true",
  "--read-only-port=0",
  "# DNS (set by microk8s enable dns)",
  "--cluster-domain=cluster.local",
  "--cluster-dns=10.152.183.10",
  "",
}, "\n")

local function env(fixture, extra)
  local o = { addon = ADDON, cluster = "fixtures/cluster-" .. fixture .. ".yaml",
              args = { kubelet = KUBELET } }
  for k, v in pairs(extra or {}) do o[k] = v end
  return t.env(o)
end

local function corefile(e)
  return e:get("ConfigMap", "coredns", NS).data.Corefile
end

local function rbac_has_endpointslices(e)
  for _, r in ipairs(e:get("ClusterRole", "coredns").rules) do
    if r.apiGroups[1] == "discovery.k8s.io"
       and r.resources[1] == "endpointslices" then
      return true
    end
  end
  return false
end

local function upgraded(e, r)
  t.eq(r.code, 0, r.error)
  local dep = e:get("Deployment", "coredns", NS)
  local c = dep.spec.template.spec.containers[1]
  t.eq(c.image, "coredns/coredns:1.14.3")
  t.eq(c.securityContext.allowPrivilegeEscalation, false)
  t.ok(rbac_has_endpointslices(e), "endpointslices RBAC")
  t.eq(e:state().version, "1.14.3")
  t.eq(#e:calls("kube.rollout"), 1)
  local svc = e:get("Service", "kube-dns", NS)
  t.eq(e:args("kubelet")["--cluster-dns"], svc.spec.clusterIP)
  return dep, svc
end

-- 1. An upgrade from each previous version in the corpus -----------------

for _, v in ipairs(VERSIONS) do
  t.case(v .. " -> 1.14.3 without state: detected, Corefile and IP kept, "
    .. "no restart", function()
    local e = env(v)
    local cf, svc0 = corefile(e), e:get("Service", "kube-dns", NS)
    local r = e:upgrade {}
    local _, svc = upgraded(e, r)
    t.eq(corefile(e), cf, "the Corefile is not touched")
    t.eq(svc.spec.clusterIP, "10.152.183.10")
    t.eq(svc.metadata.uid, svc0.metadata.uid, "the Service is not recreated")
    t.eq(e:file("args:kubelet"), KUBELET, "args already matched")
    t.eq(#e:calls("service.restart"), 0)
    t.eq(#e:calls("config.set_args"), 1)
    t.eq(e:state().history[1].from, v)
    -- the EnsureExists ConfigMap is not even applied
    for _, call in ipairs(e:calls("kube.apply")) do
      local objs = call[1].kind and { call[1] } or call[1]
      for _, o in ipairs(objs) do t.ok(o.kind ~= "ConfigMap", "ConfigMap applied") end
    end
  end)

  t.case(v .. " -> 1.14.3 with state saved by uphook", function()
    local e = env(v, { state = { version = v } })
    upgraded(e, e:upgrade {})
  end)
end

t.case("1.6.6: the critical-pod annotation enable set goes; the labels stay", function()
  -- enable's client-side apply owned the annotation; on the first upgrade
  -- its fields move to uphook (as `kubectl apply --server-side` moves
  -- them), and the 1.14.3 manifest no longer sets it, so it is removed
  local e = env("1.6.6")
  local dep = upgraded(e, e:upgrade {})
  local tpl = dep.spec.template.metadata
  t.eq(tpl.annotations["scheduler.alpha.kubernetes.io/critical-pod"], nil)
  t.eq(tpl.labels["k8s-app"], "kube-dns")
  t.eq(dep.metadata.annotations["kubectl.kubernetes.io/last-applied-configuration"],
       nil, "the stale last-applied-configuration goes too")
  local owners = {}
  for _, m in ipairs(dep.metadata.managedFields) do owners[#owners + 1] = m.manager .. "/" .. m.operation end
  t.eq(owners, { "uphook/Apply" })
end)

t.case("1.6.6: the pod template keeps its replicas, scaled by the user", function()
  local e = env("1.6.6")
  -- `kubectl scale` (or a patch): another manager owns the replicas now
  e:patch("Deployment", "coredns", NS, { spec = { replicas = 2 } })
  local dep = upgraded(e, e:upgrade {})
  t.eq(dep.spec.replicas, 2)
end)

-- 2. Parameters preserved with no state -------------------------------------

t.case("no state, a custom IP, domain and Corefile: all kept", function()
  local args = KUBELET:gsub("cluster%.local", "k8s.lab")
                      :gsub("10%.152%.183%.10", "10.152.183.53")
  local e = env("1.10.1-custom", { args = { kubelet = args } })
  local cf = corefile(e)
  local r = e:upgrade {}
  local _, svc = upgraded(e, r)
  t.eq(svc.spec.clusterIP, "10.152.183.53")
  t.eq(corefile(e), cf)
  t.eq(e:args("kubelet")["--cluster-domain"], "k8s.lab")
  t.eq(e:file("args:kubelet"), args)
  t.eq(#e:calls("service.restart"), 0)
end)

t.case("kubelet out of step with the cluster: args fixed, kubelite restarted once",
  function()
    -- the Corefile serves k8s.lab and kube-dns is .53, kubelet says otherwise
    local e = env("1.10.1-custom")
    local r = e:upgrade {}
    upgraded(e, r)
    local a = e:args("kubelet")
    t.eq(a["--cluster-domain"], "k8s.lab")
    t.eq(a["--cluster-dns"], "10.152.183.53")
    t.eq(#e:calls("service.restart"), 1)
    t.eq(e:calls("service.restart")[1][1], "kubelite")
    -- other lines and the comment kept, in order
    t.eq(e:file("args:kubelet"), (KUBELET:gsub("cluster%.local", "k8s.lab")
      :gsub("10%.152%.183%.10", "10.152.183.53")))
  end)

t.case("no kubelet args lines at all: added, kubelite restarted", function()
  local e = env("1.8.0", { args = { kubelet = "--read-only-port=0\n" } })
  upgraded(e, e:upgrade {})
  t.eq(e:args("kubelet")["--cluster-domain"], "cluster.local")
  t.eq(e:args("kubelet")["--cluster-dns"], "10.152.183.10")
  t.eq(e:args("kubelet")["--read-only-port"], "0")
  t.eq(#e:calls("service.restart"), 1)
end)

-- 3. Parameters given on the command line -------------------------------------

t.case("nameservers given: only the forward line changes", function()
  local e = env("1.6.6")
  local before = corefile(e)
  local r = e:upgrade { "1.1.1.1,9.9.9.9" }
  upgraded(e, r)
  local want = before:gsub("forward %. 8%.8%.8%.8 8%.8%.4%.4",
                           "forward . 1.1.1.1 9.9.9.9")
  t.ok(want ~= before)
  t.eq(corefile(e), want)
  t.eq(#e:calls("service.restart"), 0, "a Corefile change needs no restart")
  -- kubectl applied them (enable): uphook's apply takes over what kubectl
  -- owned, so leaving them out of it would remove them
  local labels = e:get("ConfigMap", "coredns", NS).metadata.labels
  t.eq({ labels["k8s-app"], labels["addonmanager.kubernetes.io/mode"] },
    { "kube-dns", "EnsureExists" }, "the ConfigMap keeps its labels")
end)

t.case("nameservers on an edited Corefile: comments, options block, stub "
  .. "zone and hosts kept", function()
  local e = env("1.10.1-custom")
  local before = corefile(e)
  local r = e:upgrade { "8.8.8.8,[2001:4860:4860::8888]:53" }
  t.eq(r.code, 0, r.error)
  local after = corefile(e)
  local want = before:gsub("forward %.  1%.1%.1%.1 1%.0%.0%.1 {",
    "forward . 8.8.8.8 [2001:4860:4860::8888]:53 {")
  t.ok(want ~= before)
  t.eq(after, want)
  t.match(after, "lab%.internal:53 {\n    errors\n    cache 30\n"
    .. "    forward %. 10%.0%.0%.53\n}")
  t.match(after, "hosts {\n      10%.0%.0%.5 registry%.k8s%.lab")
  t.match(after, "max_concurrent 1000")
end)

t.case("/etc/resolv.conf as the nameserver", function()
  local e = env("1.10.1")
  upgraded(e, e:upgrade { "/etc/resolv.conf" })
  t.match(corefile(e), "\n    forward %. /etc/resolv%.conf\n")
end)

t.case("the same IP and domain given explicitly: accepted, nothing extra", function()
  local e = env("1.8.0")
  local cf = corefile(e)
  upgraded(e, e:upgrade { "", "10.152.183.10", "cluster.local" })
  t.eq(corefile(e), cf)
  t.eq(#e:calls("service.restart"), 0)
end)

t.case("a different service IP is refused before any change", function()
  local e = env("1.8.0")
  local before = e:snapshot()
  local r = e:upgrade { "8.8.8.8", "10.152.183.20" }
  t.eq(r.code, 4)
  t.match(r.error, "clusterIP 10%.152%.183%.10; it cannot change to 10%.152%.183%.20")
  t.eq(e:snapshot(), before)
  t.eq(e:file("args:kubelet"), KUBELET)
end)

t.case("a domain the Corefile does not serve is refused before any change",
  function()
    local e = env("1.10.1")
    local before = e:snapshot()
    local r = e:upgrade { "", "", "k8s.lab" }
    t.eq(r.code, 4)
    t.match(r.error, "serves the cluster domain cluster%.local, not k8s%.lab")
    t.eq(e:snapshot(), before)
  end)

t.case("bad nameservers are refused with a clear error", function()
  for _, bad in ipairs { "8.8.8", "dns.google", "1.1.1.1,300.1.1.1",
                         "1.1.1.1:99999", "2001:db8:::1" } do
    local e = env("1.10.1")
    local r = e:upgrade { bad }
    t.eq(r.code, 4, bad)
    t.match(r.error, "is not an IP address")
  end
end)

t.case("a missing ConfigMap is created as enable would", function()
  local e = env("1.8.0", { args = { kubelet = KUBELET
    .. "--resolv-conf=/run/systemd/resolve/resolv.conf\n" } })
  e:delete("v1/ConfigMap", "coredns", NS)
  upgraded(e, e:upgrade {})
  local cf = corefile(e)
  t.match(cf, "forward %. /etc/resolv%.conf\n")
  t.match(cf, "kubernetes cluster%.local in%-addr%.arpa")
end)

-- 4. plan changes nothing -----------------------------------------------------

for _, v in ipairs { "1.6.6", "1.8.0", "1.10.1", "1.10.1-custom" } do
  t.case("plan from " .. v .. " changes nothing", function()
    local e = env(v)
    local before = e:snapshot()
    local r = e:plan { "9.9.9.9" }
    t.eq(r.code, 0, r.error)
    t.eq(e:snapshot(), before)
    t.eq(e:file("args:kubelet"), KUBELET)
    t.eq(e:state(), nil)
    t.ok(#r.plan > 0)
  end)
end

-- 5. A fault at every change rolls back to the fixture exactly -------------

-- Every path: nameservers given (a Corefile change) and kubelet out of step
-- (an args change and a restart), so every kind of change is faulted.
local PATHS = {
  { "1.6.6", { "1.1.1.1" }, "--cluster-dns=10.152.183.99\n" },
  { "1.8.0", { "1.1.1.1,8.8.8.8" }, "--cluster-domain=old.local\n" },
  { "1.10.1", {}, "" },
  { "1.10.1-custom", { "9.9.9.9" }, KUBELET },
}

for _, p in ipairs(PATHS) do
  local v, argv, kubelet = p[1], p[2], p[3]
  t.case("from " .. v .. ": a fault at every change rolls back exactly",
    function()
      local n = t.each_fault(function()
        return env(v, { args = { kubelet = kubelet } })
      end, { args = argv })
      t.ok(n >= 6, "changes seen: " .. n)
    end)
end

for _, on in ipairs { "config.set_args", "service.restart" } do
  t.case("a plain fault at " .. on .. " rolls back with exit 1", function()
    local e = env("1.6.6", { args = { kubelet = "--cluster-dns=1.2.3.4\n" } })
    local before, args = e:snapshot(), e:file("args:kubelet")
    e:fail { on = on, error = "injected" }
    local r = e:upgrade {}
    t.eq(r.code, 1, r.error)
    t.match(r.error, "injected")
    t.eq(e:snapshot(), before)
    t.eq(e:file("args:kubelet"), args)
  end)
end

t.case("CoreDNS that never rolls out: verify times out, all rolled back", function()
  local e = env("1.6.6", { args = { kubelet = "--cluster-dns=10.0.0.1\n" } })
  local before = e:snapshot()
  e:stall("Deployment", "coredns", NS)
  local r = e:upgrade { "1.1.1.1" }
  t.eq(r.code, 1)
  t.match(r.error, "rollout of Deployment kube%-system/coredns")
  t.eq(e:snapshot(), before)
  t.eq(e:file("args:kubelet"), "--cluster-dns=10.0.0.1\n")
end)

-- 6. A second run is a no-op ---------------------------------------------------

for _, v in ipairs(VERSIONS) do
  t.case("from " .. v .. ": a second run changes nothing", function()
    local e = env(v, { args = { kubelet = "" } })
    t.eq(e:upgrade { "1.1.1.1" }.code, 0)
    local after, args = e:snapshot(), e:file("args:kubelet")
    local r = e:upgrade { "8.8.8.8" }
    t.eq(r.code, 0, r.error)
    -- at 1.14.3 the hook's plan ran (looking for node drift), silently
    t.ok(r.noop, "no drift: nothing to do")
    t.eq(r.log, {})
    t.eq(e:snapshot(), after)
    t.eq(e:file("args:kubelet"), args)
    t.eq(e:restarts(), { "kubelite" }, "only the first run restarted")
  end)
end

-- Detection --------------------------------------------------------------------

t.case("not enabled: detect finds nothing, exit 4", function()
  local r = t.env({ addon = ADDON }):upgrade {}
  t.eq(r.code, 4)
  t.match(r.error, "does not look installed")
end)

t.case("an image without a version tag: detected from the objects", function()
  local e = env("1.10.1")
  e:apply({ apiVersion = "apps/v1", kind = "Deployment",
    metadata = { name = "coredns", namespace = NS },
    spec = { template = { spec = { containers = { { name = "coredns",
      image = "registry.local/coredns@sha256:" .. ("ab"):rep(32) } } } } } })
  local r = e:upgrade {}
  t.eq(r.code, 0, r.error)
  t.eq(e:state().history[1].from, "1.10.1")
end)

-- 7. Several nodes ------------------------------------------------------------

-- kubelet's args with the given DNS IP and domain (KUBELET's other lines)
local function kubelet(ip_, domain_)
  return (KUBELET:gsub("10%.152%.183%.10", ip_):gsub("cluster%.local", domain_))
end

-- The custom cluster (kube-dns .53, domain k8s.lab) on three nodes: this
-- one (mk8s-node1) and node-c out of step, node-b already right and
-- node-c once given another IP by hand.
local function three(extra)
  local o = { addon = ADDON, cluster = "fixtures/cluster-1.10.1-custom.yaml",
    args = { kubelet = KUBELET },
    nodes = { { name = "node-b", args = { kubelet = kubelet("10.152.183.53", "k8s.lab") } },
              { name = "node-c", args = { kubelet = kubelet("10.152.183.99", "cluster.local") } } } }
  for k, v in pairs(extra or {}) do o[k] = v end
  return t.env(o)
end

local NODES = { "mk8s-node1", "node-b", "node-c" }

local function files(e)
  local out = {}
  for _, n in ipairs(NODES) do out[n] = e:file("args:kubelet", n) end
  return out
end

t.case("three nodes: every kubelet gets the Service IP and domain, "
  .. "restarted where a line changed, this node last", function()
  local e = three()
  local r = e:upgrade {}
  t.eq(r.code, 0, r.error)
  for _, n in ipairs(NODES) do
    t.eq(e:args("kubelet", n)["--cluster-dns"], "10.152.183.53", n)
    t.eq(e:args("kubelet", n)["--cluster-domain"], "k8s.lab", n)
    local kc = e:kubelet_config(n)
    t.eq(kc.clusterDNS, { "10.152.183.53" }, n .. " runs with it")
    t.eq(kc.clusterDomain, "k8s.lab", n)
  end
  t.eq(e:restarts(), { "kubelite" })
  t.eq(e:restarts("node-b"), {}, "node-b already matched")
  t.eq(e:restarts("node-c"), { "kubelite" })
  -- this node's file keeps its comment and order; node-c's only changes
  -- the two lines (its file has no blank lines to drop)
  t.eq(e:file("args:kubelet"), kubelet("10.152.183.53", "k8s.lab"))
  t.eq(e:file("args:kubelet", "node-c"), kubelet("10.152.183.53", "k8s.lab"))
  -- the rolling order: node-c's restart before this node's
  local order = {}
  for _, ch in ipairs(e:changes()) do
    if ch.on == "service.restart" then order[#order + 1] = ch.node end
  end
  t.eq(order, { "node-c", "mk8s-node1" })
end)

t.case("three nodes: the plan lists each node with its prior, read from "
  .. "its kubelet", function()
  local e = three()
  local before = files(e)
  local r = e:plan {}
  t.eq(r.code, 0, r.error)
  t.eq(files(e), before, "plan changes no node")
  local by, restarts = {}, {}
  for _, x in ipairs(r.plan) do
    if x.type == "node_args" and not x.this then by[x.node] = x.changes end
    if x.type == "restart" then restarts[#restarts + 1] = x.node end
  end
  t.eq(by["node-b"], nil)
  t.eq(by["node-c"], {
    { flag = "--cluster-dns", prior = "10.152.183.99", how = "read", new = "10.152.183.53" },
    { flag = "--cluster-domain", prior = "cluster.local", how = "read", new = "k8s.lab" } })
  t.eq(restarts, { "node-c", "mk8s-node1" })
end)

t.case("three nodes: node-c failing rolls every node back to its own prior",
  function()
    local e = three()
    local before, snap = files(e), e:snapshot()
    e:fail { on = "config.set_args", node = "node-c", error = "disk full" }
    local r = e:upgrade {}
    t.eq(r.code, 1, r.error)
    t.match(r.error, "node node%-c %(10%.0%.1%.12%): disk full")
    t.eq(e:snapshot(), snap)
    t.eq(files(e), before, "each node has its own prior back (node-c: .99)")
    t.eq(e:restarts("node-c"), {})
    t.eq(e:restarts(), {})
  end)

t.case("three nodes: a failed restart on node-c restores every node and "
  .. "restarts the restored ones again", function()
    local e = three { nodes = { "node-b", { name = "node-c",
      args = { kubelet = kubelet("10.152.183.99", "cluster.local") } } } }
    local before = files(e)
    e:fail { on = "service.restart", node = "node-c", error = "snapctl failed" }
    local r = e:upgrade {}
    t.eq(r.code, 1, r.error)
    t.match(r.error, "node node%-c %(10%.0%.1%.12%): snapctl failed")
    -- node-b (default args: no DNS lines) was changed and restarted
    -- before node-c: restored, then restarted again
    t.eq(e:args("kubelet", "node-b")["--cluster-dns"], nil)
    t.eq(e:restarts("node-b"), { "kubelite", "kubelite" })
    t.eq(e:restarts("node-c"), { "kubelite" }, "again, on its restored args")
    t.eq(e:restarts(), {}, "this node never got to its restart")
    t.eq(e:file("args:kubelet"), before["mk8s-node1"])
    t.eq(e:file("args:kubelet", "node-c"), before["node-c"])
    t.eq(e:kubelet_config("node-b").clusterDNS, nil)
  end)

for _, case in ipairs {
  { "unreachable", "cannot connect to https://10%.0%.1%.12:25000" },
  { "tls", "not signed by the cluster CA" },
  { "token", "invalid token" },
} do
  t.case("three nodes: node-c's agent " .. case[1] .. ": exit 4 before any "
    .. "change, naming the node", function()
    local e = three { nodes = { "node-b", { name = "node-c", agent = case[1] } } }
    local before, snap = files(e), e:snapshot()
    local r = e:upgrade {}
    t.eq(r.code, 4, r.error)
    t.match(r.error, "^preflight: node node%-c %(10%.0%.1%.12%): ")
    t.match(r.error, case[2])
    t.match(r.error, "nothing was changed$")
    t.eq(files(e), before)
    t.eq(e:snapshot(), snap)
    t.eq(e:state(), nil)
  end)
end

t.case("three nodes: a NotReady node stops the run before any change", function()
  local e = three { nodes = { "node-b", { name = "node-c", ready = false } } }
  local before = files(e)
  local r = e:upgrade {}
  t.eq(r.code, 4, r.error)
  t.match(r.error, "node node%-c is not Ready")
  t.eq(files(e), before)
end)

t.case("at 1.14.3, a node that drifted is repaired like an upgrade", function()
  local e = three { state = { version = "1.14.3" },
    args = { kubelet = kubelet("10.152.183.53", "k8s.lab") } }
  local r = e:upgrade {}
  t.eq(r.code, 0, r.error)
  t.ok(not r.noop, "not nothing to do")
  local warned = false
  for _, l in ipairs(r.log) do
    warned = warned or l:find("drift: args:kubelet on node node-c (10.0.1.12): "
      .. "--cluster-dns is \"10.152.183.99\" (read), the hook sets "
      .. "\"10.152.183.53\"", 1, true) ~= nil
  end
  t.ok(warned, "the drift is reported: " .. t.repr(r.log))
  t.eq(e:args("kubelet", "node-c")["--cluster-dns"], "10.152.183.53")
  t.eq(e:restarts("node-c"), { "kubelite" })
  t.eq(e:restarts(), {}, "this node did not drift: not restarted")
  t.eq(e:state().history[1].result, "repaired")
  -- and then there is nothing left to do
  local again = e:upgrade {}
  t.eq(again.code, 0, again.error)
  t.ok(again.noop)
end)

t.case("at 1.14.3, plan shows the drift and changes nothing", function()
  local e = three { state = { version = "1.14.3" },
    args = { kubelet = kubelet("10.152.183.53", "k8s.lab") } }
  local before = files(e)
  local r = e:plan {}
  t.eq(r.code, 0, r.error)
  t.ok(not r.noop)
  local changed = {}
  for _, x in ipairs(r.plan) do
    if x.type == "node_args" and not x.this then changed[#changed + 1] = x.node end
  end
  t.eq(changed, { "node-c" })
  t.eq(files(e), before)
end)

-- 8. --resolv-conf as enable sets it -------------------------------------------

local STUB = "nameserver 127.0.0.53\noptions edns0 trust-ad\nsearch lan\n"
local REAL = "# systemd-resolved's upstream servers\nnameserver 10.0.0.2\nnameserver fe80::1%2\n"

t.case("no --resolv-conf: the first host resolv.conf without loopback "
  .. "nameservers goes on every node's kubelet", function()
  local e = three { resolv_conf = { ["/etc/resolv.conf"] = STUB,
    ["/run/systemd/resolve/resolv.conf"] = REAL } }
  local r = e:upgrade {}
  t.eq(r.code, 0, r.error)
  for _, n in ipairs(NODES) do
    t.eq(e:args("kubelet", n)["--resolv-conf"], "/run/systemd/resolve/resolv.conf", n)
    t.eq(e:kubelet_config(n).resolvConf, "/run/systemd/resolve/resolv.conf", n)
  end
  t.eq(e:restarts("node-b"), { "kubelite" }, "node-b's line changed")
end)

t.case("/etc/resolv.conf itself has upstream nameservers: that one", function()
  local e = env("1.10.1", { resolv_conf = { ["/etc/resolv.conf"] = "nameserver 1.1.1.1\n",
    ["/run/systemd/resolve/resolv.conf"] = REAL } })
  upgraded(e, e:upgrade {})
  t.eq(e:args("kubelet")["--resolv-conf"], "/etc/resolv.conf")
end)

t.case("--resolv-conf is left alone: kubelet has one, only loopback "
  .. "servers, or nameservers given", function()
  local custom = KUBELET .. "--resolv-conf=/etc/kubelet-resolv.conf\n"
  local e = env("1.10.1", { args = { kubelet = custom },
    resolv_conf = { ["/etc/resolv.conf"] = "nameserver 1.1.1.1\n" } })
  upgraded(e, e:upgrade {})
  t.eq(e:file("args:kubelet"), custom)
  e = env("1.10.1", { resolv_conf = { ["/etc/resolv.conf"] = STUB,
    ["/run/systemd/resolve/resolv.conf"] = "nameserver 127.0.0.1\nnameserver ::1\n" } })
  upgraded(e, e:upgrade {})
  t.eq(e:args("kubelet")["--resolv-conf"], nil)
  e = env("1.10.1", { resolv_conf = { ["/etc/resolv.conf"] = "nameserver 1.1.1.1\n" } })
  upgraded(e, e:upgrade { "9.9.9.9" })
  t.eq(e:args("kubelet")["--resolv-conf"], nil)
  -- an invalid address makes a file unusable, as find-resolv-conf.py says
  e = env("1.10.1", { resolv_conf = { ["/etc/resolv.conf"] = "nameserver 1.1.1\n" } })
  upgraded(e, e:upgrade {})
  t.eq(e:args("kubelet")["--resolv-conf"], nil)
end)

-- 9. enable's DNS IP default ----------------------------------------------------

t.case("no kube-dns Service: 10.152.183.10 when the service range starts "
  .. "with MicroK8s' default, dual-stack too", function()
  for _, range in ipairs { "10.152.183.0/24", "10.152.183.0/24,fd98::/108" } do
    local e = env("1.10.1", { args = { kubelet = KUBELET,
      ["kube-apiserver"] = "--service-cluster-ip-range=" .. range .. "\n" } })
    e:delete("v1/Service", "kube-dns", NS)
    local r = e:upgrade {}
    t.eq(r.code, 0, r.error)
    t.eq(e:get("Service", "kube-dns", NS).spec.clusterIP, "10.152.183.10", range)
  end
  local e = env("1.10.1", { args = { kubelet = KUBELET,
    ["kube-apiserver"] = "--service-cluster-ip-range=10.100.0.0/16\n" } })
  e:delete("v1/Service", "kube-dns", NS)
  local r = e:upgrade {}
  t.eq(r.code, 0, r.error)
  t.ok(e:get("Service", "kube-dns", NS).spec.clusterIP ~= "10.152.183.10",
    "another range: the server picks the IP")
end)

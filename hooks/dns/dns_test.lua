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
    local n = #e:calls("kube.apply") + #e:calls("config.set_args")
    local r = e:upgrade { "8.8.8.8" }
    t.eq(r.code, 0, r.error)
    t.eq(r.log, {}, "the hook's upgrade did not run")
    t.eq(#e:calls("kube.apply") + #e:calls("config.set_args"), n)
    t.eq(e:snapshot(), after)
    t.eq(e:file("args:kubelet"), args)
    t.eq(#e:calls("service.restart"), 1)
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

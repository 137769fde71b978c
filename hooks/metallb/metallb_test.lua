local t = require "uphook.test"

local NS = "metallb-system"
local POOL_KIND = "metallb.io/v1beta1/IPAddressPool"
local L2_KIND = "metallb.io/v1beta1/L2Advertisement"
local FIXTURES = { "0.13.3", "0.14.9" }
local ENABLED_RANGES = { "10.64.140.43-10.64.140.49", "192.168.0.105/32" }

local function env(fixture, extra)
  local o = { addon = ".", cluster = "fixtures/" .. fixture }
  for k, v in pairs(extra or {}) do o[k] = v end
  return t.env(o)
end

local function image(e, kind, name)
  local o = e:get(kind, name, NS)
  return o.spec.template.spec.containers[1].image
end

local function addresses(e, name)
  local p = e:get(POOL_KIND, name or "default-addresspool", NS)
  return p and p.spec.addresses
end

local function logged(r, pattern)
  for _, l in ipairs(r.log) do
    local s = type(l) == "table" and (l.text or l.message or "") or tostring(l)
    if s:find(pattern) then return true end
  end
  return false
end

--- Every mutating call the happy path made, as env:fail specs: one per
--- applied object (kube.apply faults fire per object), plus the state
--- commit, which is one more kube.apply.
for _, v in ipairs(FIXTURES) do
  local fixture = "cluster-v" .. v .. ".yaml"

  t.case(v .. " -> 0.15.3 with no state: detect, new images, ranges kept", function()
    local e = env(fixture)
    local r = e:upgrade {}
    t.eq(r.code, 0, r.error)
    t.eq(image(e, "Deployment", "controller"), "quay.io/metallb/controller:v0.15.3")
    t.eq(image(e, "DaemonSet", "speaker"), "quay.io/metallb/speaker:v0.15.3")
    t.eq(e:state().version, "0.15.3")
    t.eq(e:state().history[1].from, v)
    -- the pool and the L2Advertisement are kept as enable made them
    t.eq(addresses(e), ENABLED_RANGES)
    local l2 = e:get(L2_KIND, "default-advertise-all-pools", NS)
    t.ok(l2, "L2Advertisement kept")
    t.eq(l2.spec, nil)
    t.eq(l2.metadata.annotations["addon.microk8s.io/version"], "0.15.3")
    -- new in 0.15: the servicebgpstatuses CRD and RBAC for it
    t.ok(e:get("CustomResourceDefinition", "servicebgpstatuses.metallb.io"))
    local rules = e:get("ClusterRole", "metallb-system:controller").rules
    local found = false
    for _, rule in ipairs(e:get("Role", "controller", NS).rules) do
      for _, res in ipairs(rule.resources or {}) do
        if res == "ipaddresspools/status" then found = true end
      end
    end
    t.ok(found, "Role controller may update ipaddresspools/status")
    t.ok(#rules > 0)
    -- what the controller wrote is kept
    t.eq(e:get("Secret", "metallb-webhook-cert", NS).data["tls.key"],
      "Y29udHJvbGxlci1nZW5lcmF0ZWQta2V5")
    t.ok(e:get("Secret", "memberlist", NS).data.secretkey)
  end)

  t.case(v .. ": CRDs first and Established before any custom resource", function()
    local e = env(fixture)
    local r = e:upgrade {}
    t.eq(r.code, 0, r.error)
    local seq = {}
    for _, c in ipairs(r.calls) do
      if c.name == "kube.apply" or c.name == "kube.wait"
         or c.name == "kube.rollout" then
        local a = c.args[1]
        local what = c.name ~= "kube.apply" and a
          or type(a) == "string"
            and (a:find("kind: CustomResourceDefinition", 1, true) and "crds"
                 or "manifest")
          or a.kind
        seq[#seq + 1] = c.name .. " " .. what
      end
    end
    t.eq(seq[1], "kube.apply crds")
    local waits = {}
    for i = 2, 9 do waits[#waits + 1] = seq[i] end
    t.eq(waits, { "kube.wait CustomResourceDefinition",
      "kube.wait CustomResourceDefinition", "kube.wait CustomResourceDefinition",
      "kube.wait CustomResourceDefinition", "kube.wait CustomResourceDefinition",
      "kube.wait CustomResourceDefinition", "kube.wait CustomResourceDefinition",
      "kube.wait CustomResourceDefinition" })
    t.eq({ seq[10], seq[11], seq[12], seq[13], seq[14] }, {
      "kube.apply manifest", "kube.rollout Deployment",
      "kube.apply IPAddressPool", "kube.apply L2Advertisement",
      "kube.rollout DaemonSet" })
    for _, w in ipairs(e:calls("kube.wait")) do
      t.eq(w[4].condition, "Established")
    end
  end)

  t.case(v .. ": ranges given on the command line replace the pool's", function()
    local e = env(fixture)
    local r = e:upgrade { "10.0.0.10-10.0.0.20,fd00:10::/120" }
    t.eq(r.code, 0, r.error)
    t.eq(addresses(e), { "10.0.0.10-10.0.0.20", "fd00:10::/120" })
    t.ok(e:get(L2_KIND, "default-advertise-all-pools", NS))
  end)

  t.case(v .. ": plan changes nothing", function()
    local e = env(fixture)
    local before = e:snapshot()
    local r = e:plan { "metallb:10.0.0.10-10.0.0.20" }
    t.eq(r.code, 0, r.error)
    t.eq(e:snapshot(), before)
    t.eq(e:state(), nil)
    local seen = {}
    for _, x in ipairs(r.plan) do
      if x.type == "kube" then seen[x.kind .. "/" .. x.name] = x.action end
    end
    t.eq(seen["Deployment/controller"], "configured")
    t.eq(seen["CustomResourceDefinition/servicebgpstatuses.metallb.io"], "created")
    t.eq(seen["IPAddressPool/default-addresspool"], "configured")
  end)

  t.case(v .. ": a fault at every change rolls back exactly", function()
    local n = t.each_fault(function() return env(fixture) end)
    t.ok(n >= 28, "expected every object applied and the state, got " .. n)
  end)

  t.case(v .. ": a second run is a no-op", function()
    local e = env(fixture)
    t.eq(e:upgrade({ "10.0.0.10-10.0.0.20" }).code, 0)
    local after = e:snapshot()
    local r = e:upgrade {}
    t.eq(r.code, 0, r.error)
    -- (the "already at" line is report:info, which t.env's capture drops)
    t.ok(r.noop, "nothing ran: already at 0.15.3")
    t.eq(#e:calls("kube.apply"), 4, "only the first run applied")
    t.eq(e:snapshot(), after)
    t.eq(#e:state().history, 1)
  end)
end

t.case("pre-0.13 ConfigMap: converted to IPAddressPools and an L2Advertisement", function()
  local e = env("cluster-configmap.yaml")
  t.eq(e:get(POOL_KIND, "default-addresspool", NS), nil)
  local r = e:upgrade {}
  t.eq(r.code, 0, r.error)
  t.eq(addresses(e), ENABLED_RANGES)
  local lab = e:get(POOL_KIND, "lab", NS)
  t.eq(lab.spec, { addresses = { "fd00:10:64::/120" }, autoAssign = false })
  t.ok(e:get(L2_KIND, "default-advertise-all-pools", NS))
  -- the ConfigMap is left for the user, with a warning
  t.ok(e:get("ConfigMap", "config", NS).data.config)
  t.ok(logged(r, "ignores ConfigMap metallb%-system/config"))
end)

t.case("pre-0.13 ConfigMap: ranges on the command line win for the default pool", function()
  local e = env("cluster-configmap.yaml")
  local r = e:upgrade { "10.1.0.0/24" }
  t.eq(r.code, 0, r.error)
  t.eq(addresses(e), { "10.1.0.0/24" })
  t.eq(addresses(e, "lab"), { "fd00:10:64::/120" })
end)

t.case("pre-0.13 ConfigMap: a fault at every change rolls back exactly", function()
  t.each_fault(function() return env("cluster-configmap.yaml") end)
end)

t.case("pre-0.13 ConfigMap with a BGP pool: refused before any change", function()
  local e = env("cluster-configmap-bgp.yaml")
  local before = e:snapshot()
  local r = e:upgrade {}
  t.eq(r.code, 4)
  t.match(r.error, "pool \"aux\" uses protocol bgp")
  t.eq(e:snapshot(), before)
end)

t.case("a stalled controller rollout rolls everything back", function()
  local e = env("cluster-v0.14.9.yaml")
  local before = e:snapshot()
  e:stall("Deployment", "controller", NS)
  local r = e:upgrade {}
  t.eq(r.code, 1)
  t.match(r.error, "rollout of Deployment")
  t.eq(e:snapshot(), before)
end)

t.case("bad ranges are refused before any change, naming the range", function()
  local bad = {
    ["10.0.0.300-10.0.0.5"] = "above 255",
    ["10.0.0.9-10.0.0.1"] = "10%.0%.0%.9 is above 10%.0%.0%.1",
    ["10.0.0.1"] = "write 10%.0%.0%.1/32",
    ["10.0.0.0/33"] = "prefix length must be 0%-32",
    ["fd00::/129"] = "prefix length must be 0%-128",
    ["fd00::1-10.0.0.9"] = "mixes IPv4 and IPv6",
    ["fd00::1::2/64"] = "'::' appears more than once",
    ["1:2:3:4:5:6:7:8:9/64"] = "8 groups",
    ["01.2.3.4/32"] = "leading zero",
    ["fe80::1%eth0/64"] = "zones",
    ["lb.example.com"] = "FIRST%-LAST or ADDRESS/PREFIX",
    ["10.0.0.1-10.0.0.2-10.0.0.3"] = "more than one",
  }
  local e = env("cluster-v0.14.9.yaml")
  local before = e:snapshot()
  for arg, why in pairs(bad) do
    local r = e:upgrade { "10.9.0.0/24," .. arg }
    t.eq(r.code, 4, arg)
    t.match(r.error, '"' .. arg:gsub("%p", "%%%0") .. '" is not a valid IP range')
    t.match(r.error, why)
  end
  t.eq(e:snapshot(), before)
end)

t.case("good ranges: IPv4, IPv6, CIDR with host bits, blanks and metallb:", function()
  local e = env("cluster-v0.14.9.yaml")
  local r = e:plan { "metallb:192.168.1.240/24, ::ffff:10.0.0.1/128",
    "fd00::1-fd00::ff", "1:2:3:4:5:6:7:8/128", "0.0.0.0-255.255.255.255" }
  t.eq(r.code, 0, r.error)
  local e2 = env("cluster-v0.14.9.yaml")
  t.eq(e2:upgrade({ "metallb:192.168.1.240/24,fd00::1-fd00::ff" }).code, 0)
  t.eq(addresses(e2), { "192.168.1.240/24", "fd00::1-fd00::ff" })
end)

t.case("an installed state is used instead of detect", function()
  local e = env("cluster-v0.14.9.yaml", { state = { version = "0.14.9" } })
  local r = e:upgrade {}
  t.eq(r.code, 0, r.error)
  t.eq(#e:state().history, 1)
  t.eq(addresses(e), ENABLED_RANGES)
end)

--- v0.9.3 (MicroK8s 1.24) --------------------------------------------------

local V09 = "cluster-v0.9.3.yaml"

t.case("0.9.3 (MicroK8s 1.24) -> 0.15.3 with no state: its ConfigMap becomes the pool", function()
  local e = env(V09)
  local secret = e:get("Secret", "memberlist", NS).data.secretkey
  local r = e:upgrade {}
  t.eq(r.code, 0, r.error)
  t.eq(r.from, "0.9.3")
  t.eq(e:state().history[1].from, "0.9.3")
  t.eq(image(e, "Deployment", "controller"), "quay.io/metallb/controller:v0.15.3")
  t.eq(image(e, "DaemonSet", "speaker"), "quay.io/metallb/speaker:v0.15.3")
  -- the ranges enable wrote into the ConfigMap, now an IPAddressPool
  t.eq(addresses(e), ENABLED_RANGES)
  t.ok(e:get(L2_KIND, "default-advertise-all-pools", NS))
  t.ok(logged(r, "ignores ConfigMap metallb%-system/config"))
  -- v0.9's memberlist key is kept; its config-watcher RBAC is pruned
  t.eq(e:get("Secret", "memberlist", NS).data.secretkey, secret)
  t.eq(e:get("Role", "config-watcher", NS), nil)
  t.eq(e:get("RoleBinding", "config-watcher", NS), nil)
  t.ok(e:get("Role", "pod-lister", NS), "pod-lister is v0.15.3's too")
  -- beta.kubernetes.io/os (v0.9) gave way to kubernetes.io/os
  local sel = e:get("DaemonSet", "speaker", NS).spec.template.spec.nodeSelector
  t.eq(sel, { ["kubernetes.io/os"] = "linux" })
end)

t.case("0.9.3: the plan shows the pruned RBAC as no longer shipped, and changes nothing", function()
  local e = env(V09)
  local before = e:snapshot()
  local r = e:plan {}
  t.eq(r.code, 0, r.error)
  t.eq(e:snapshot(), before)
  local pruned = {}
  for _, x in ipairs(r.plan) do
    if x.type == "kube" and x.action == "deleted" then
      pruned[#pruned + 1] = x.kind .. " " .. x.name .. ": " .. tostring(x.reason)
    end
  end
  t.eq(pruned, { "Role config-watcher: no longer in metallb 0.15.3",
                 "RoleBinding config-watcher: no longer in metallb 0.15.3" })
  -- the pool its CRD brings, said in words
  t.ok(logged(r, "plan: would create IPAddressPool metallb%-system/default%-addresspool "
    .. "with 10%.64%.140%.43%-10%.64%.140%.49, 192%.168%.0%.105/32"), t.repr(r.log))
end)

t.case("0.9.3: ranges given as enable takes them replace the ConfigMap's", function()
  local e = env(V09)
  local r = e:upgrade { "10.1.0.10-10.1.0.20,10.1.1.0/28" }
  t.eq(r.code, 0, r.error)
  t.eq(addresses(e), { "10.1.0.10-10.1.0.20", "10.1.1.0/28" })
end)

t.case("0.9.3: a fault at every change rolls back exactly", function()
  t.each_fault(function() return env(V09) end)
end)

t.case("a version below 0.9 (no MicroK8s shipped one) is refused before any change", function()
  local e = env(V09)
  e:patch("Deployment", "controller", NS, { spec = { template = { spec = {
    containers = { { name = "controller",
      image = "quay.io/metallb/controller:v0.8.3" } } } } } })
  local before = e:snapshot()
  local r = e:upgrade {}
  t.eq(r.code, 4)
  t.match(r.error, "metallb 0%.8%.3 cannot be upgraded by this hook: it upgrades "
    .. "versions >=0%.9%.0 <0%.15%.3")
  t.eq(e:snapshot(), before)
end)

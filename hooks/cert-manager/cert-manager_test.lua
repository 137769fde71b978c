local t = require "uphook.test"

local NS = "cert-manager"
local FIXTURE = "fixtures/cluster-v1.8.0.yaml"
local DEPLOYMENTS = { "cert-manager-cainjector", "cert-manager",
                      "cert-manager-webhook" }

local function env(extra)
  local o = { addon = ".", cluster = FIXTURE }
  for k, v in pairs(extra or {}) do o[k] = v end
  return t.env(o)
end


--- Every user object the upgrade must not touch, from a snapshot.
local function user_data(snap)
  local out = {}
  for key, o in pairs(snap) do
    local kind, ns, name = o.kind, o.metadata.namespace, o.metadata.name
    local user = kind == "Certificate" or kind == "Issuer"
      or kind == "ClusterIssuer"
      or (kind == "Secret" and name ~= "cert-manager-webhook-ca")
    if user then out[key] = o end
    local _ = ns
  end
  return out
end

local function containers(e, name)
  local out = {}
  for _, c in ipairs(e:get("Deployment", name, NS).spec.template.spec.containers) do
    out[#out + 1] = c.name .. "=" .. c.image
  end
  return out
end

t.case("1.8.0 -> 1.14.5 with no state: new images, one container each", function()
  local e = env()
  local r = e:upgrade {}
  t.eq(r.code, 0, r.error)
  t.eq(e:state().version, "1.14.5")
  t.eq(e:state().history[1].from, "1.8.0")
  t.eq(containers(e, "cert-manager-cainjector"),
    { "cert-manager-cainjector=quay.io/jetstack/cert-manager-cainjector:v1.14.5" })
  t.eq(containers(e, "cert-manager"),
    { "cert-manager-controller=quay.io/jetstack/cert-manager-controller:v1.14.5" })
  t.eq(containers(e, "cert-manager-webhook"),
    { "cert-manager-webhook=quay.io/jetstack/cert-manager-webhook:v1.14.5" })
  -- new in 1.14: the cluster-view ClusterRole
  t.ok(e:get("ClusterRole", "cert-manager-cluster-view"))
  -- every CRD is at 1.14.5
  for _, crd in ipairs(e:list("CustomResourceDefinition")) do
    t.eq(crd.metadata.annotations["addon.microk8s.io/version"], "1.14.5",
      crd.metadata.name)
  end
  -- the webhook CA cert-manager wrote is kept
  t.eq(e:get("Secret", "cert-manager-webhook-ca", NS).data["tls.key"],
    "d2ViaG9vay1jYS1rZXk=")
end)

t.case("every Certificate, Issuer, ClusterIssuer and Secret is untouched", function()
  local e = env()
  local before = user_data(e:snapshot())
  local n = 0
  for _ in pairs(before) do n = n + 1 end
  t.eq(n, 8, "the fixture seeds 2 Certificates, 2 Issuers, 1 ClusterIssuer, 3 Secrets")
  t.eq(e:upgrade({}).code, 0)
  t.eq(user_data(e:snapshot()), before)
  -- not even re-applied: no stamp, same resourceVersion
  local cert = e:get("Certificate", "shop", "web")
  t.eq(cert.metadata.labels, nil)
  t.eq(cert.status.conditions[1].status, "True")
  for _, c in ipairs(e:calls("kube.apply")) do
    for _, o in ipairs(c[1].kind and { c[1] } or c[1]) do
      t.ok(o.kind ~= "Certificate" and o.kind ~= "Issuer"
        and o.kind ~= "ClusterIssuer" and o.kind ~= "Secret",
        "applied " .. tostring(o.kind))
    end
  end
end)

t.case("CRDs first and Established, then the rest, then rollouts in order", function()
  local e = env()
  local r = e:upgrade {}
  t.eq(r.code, 0, r.error)
  local seq = {}
  for _, c in ipairs(r.calls) do
    local a = c.args
    if c.name == "kube.apply" then
      local list = a[1].kind and { a[1] } or a[1]
      local kinds = {}
      for _, o in ipairs(list) do kinds[o.kind] = true end
      seq[#seq + 1] = "apply " .. (kinds.CustomResourceDefinition and "crds"
        or (#list == 1 and list[1].kind .. " " .. list[1].metadata.name)
        or "rest")
    elseif c.name == "kube.wait" then
      seq[#seq + 1] = "wait " .. a[4].condition
    elseif c.name == "kube.rollout" or c.name == "kube.delete" then
      seq[#seq + 1] = c.name:sub(6) .. " " .. a[1] .. " " .. a[2]
    end
  end
  t.eq(seq, {
    "apply crds",
    "wait Established", "wait Established", "wait Established",
    "wait Established", "wait Established", "wait Established",
    "apply rest",
    "delete Deployment cert-manager-cainjector",
    "apply Deployment cert-manager-cainjector",
    "rollout Deployment cert-manager-cainjector",
    "delete Deployment cert-manager",
    "apply Deployment cert-manager",
    "rollout Deployment cert-manager",
    "delete Deployment cert-manager-webhook",
    "apply Deployment cert-manager-webhook",
    "rollout Deployment cert-manager-webhook",
  })
end)

t.case("plan changes nothing", function()
  local e = env()
  local before = e:snapshot()
  local r = e:plan {}
  t.eq(r.code, 0, r.error)
  t.eq(e:snapshot(), before)
  t.eq(e:state(), nil)
  local changes = {}
  for _, x in ipairs(r.plan) do
    if x.type == "kube" and (x.action == "created" or x.action == "deleted") then
      changes[#changes + 1] = x.action .. " " .. x.kind .. " " .. x.name
    end
  end
  -- the plan shows the Deployments recreated for their renamed containers
  t.eq(changes, { "created ClusterRole cert-manager-cluster-view",
    "deleted Deployment cert-manager-cainjector",
    "created Deployment cert-manager-cainjector",
    "deleted Deployment cert-manager", "created Deployment cert-manager",
    "deleted Deployment cert-manager-webhook",
    "created Deployment cert-manager-webhook" })
end)

t.case("cert-manager takes no parameters: --foo is a usage error, nothing changes", function()
  local e = env()
  local before = e:snapshot()
  local r = e:upgrade { "--namespace=other" }
  t.eq(r.code, 2)
  t.match(r.error, "unknown parameter %-%-namespace for cert%-manager %(it takes none%)")
  t.eq(e:snapshot(), before)
end)

t.case("a fault at every change rolls back exactly", function()
  -- 46 objects applied, 3 old Deployments deleted, the state commit
  t.eq(t.each_fault(env), 50)
end)

t.case("a stalled webhook rollout rolls everything back, user data included", function()
  local e = env()
  local before = e:snapshot()
  e:stall("Deployment", "cert-manager-webhook", NS)
  local r = e:upgrade {}
  t.eq(r.code, 1)
  t.match(r.error, "rollout of Deployment cert%-manager/cert%-manager%-webhook")
  t.eq(e:snapshot(), before)
end)

t.case("a second run is a no-op", function()
  local e = env()
  t.eq(e:upgrade({}).code, 0)
  local after = e:snapshot()
  local r = e:upgrade {}
  t.eq(r.code, 0, r.error)
  t.ok(r.noop, "nothing ran: already at 1.14.5")
  t.eq(e:snapshot(), after)
  t.eq(#e:calls("kube.apply"), 5)
end)

t.case("the saved state is used instead of detect", function()
  local e = env { state = { version = "1.8.0" } }
  local r = e:upgrade {}
  t.eq(r.code, 0, r.error)
  t.eq(#e:state().history, 1)
end)

t.case("a plain env:fail{on = \"kube.delete\"} rolls back with exit 1", function()
  local e = env()
  local before = e:snapshot()
  e:fail { on = "kube.delete", error = "injected" }
  local r = e:upgrade {}
  t.eq(r.code, 1, r.error)
  t.eq(e:snapshot(), before)
  t.eq(#e:list("Lease", { namespace = "kube-system" }), 0)
end)

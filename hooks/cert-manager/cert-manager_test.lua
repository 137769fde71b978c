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
  -- and the v1.8 ConfigMap pruned
  t.eq(changes, { "created ClusterRole cert-manager-cluster-view",
    "deleted Deployment cert-manager-cainjector",
    "created Deployment cert-manager-cainjector",
    "deleted Deployment cert-manager", "created Deployment cert-manager",
    "deleted Deployment cert-manager-webhook",
    "created Deployment cert-manager-webhook",
    "deleted ConfigMap cert-manager-webhook" })
end)

t.case("cert-manager takes none of enable's Helm options but -r/-V: --foo is a usage error", function()
  local e = env()
  local before = e:snapshot()
  local r = e:upgrade { "--namespace=other" }
  t.eq(r.code, 2)
  t.match(r.error, "unknown parameter %-%-namespace for cert%-manager")
  t.eq(e:snapshot(), before)
end)

t.case("a fault at every change rolls back exactly", function()
  -- 46 objects applied, 3 old Deployments deleted, 1 pruned, the state
  -- commit
  t.eq(t.each_fault(env), 51)
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

--- Helm ------------------------------------------------------------------

local HELM_UPGRADE = "microk8s helm3 upgrade cert-manager cert-manager "
  .. "--repo https://charts.jetstack.io --version v1.20.2 --namespace "
  .. "cert-manager --set crds.enabled=true"

local function helm_env(extra)
  return env(setmetatable({ cluster = "fixtures/cluster-v1.17.1-helm.yaml" },
    { __index = extra }))
end

local function plain(s) return (s:gsub("%p", "%%%0")) end

t.case("a cert-manager Helm installed: exit 4 naming its release and the helm upgrade to run", function()
  for _, run in ipairs { "upgrade", "plan" } do
    local e = helm_env()
    local before = e:snapshot()
    local r = e[run](e, {})
    t.eq(r.code, 4, run)
    t.match(r.error, "^detect failed: cert%-manager was installed with Helm %(its Helm release "
      .. "Secret cert%-manager/sh%.helm%.release%.v1%.cert%-manager%.v1 exists%)")
    t.match(r.error, plain(HELM_UPGRADE))
    -- no version was read from it: nothing says 1.17.1 is "newer"
    t.ok(not r.error:find("1.17.1", 1, true), r.error)
    t.eq(e:snapshot(), before)
  end
end)

t.case("Helm's label without its release Secret, or with saved state: still refused", function()
  local e = helm_env()
  e:delete("Secret", "sh.helm.release.v1.cert-manager.v1", NS)
  local r = e:upgrade {}
  t.eq(r.code, 4)
  t.match(r.error, "its Deployment cert%-manager/cert%-manager is labelled "
    .. "app%.kubernetes%.io/managed%-by=Helm %(release cert%-manager%)")
  -- with state (uphook upgraded it before Helm took over): check refuses
  local e2 = helm_env { state = { version = "1.8.0" } }
  local r2 = e2:upgrade {}
  t.eq(r2.code, 4)
  t.match(r2.error, "installed with Helm")
end)

local ADOPT = { label = "Helm", name = "cert-manager", namespace = "cert-manager" }

local function marks(o)
  local md = o.metadata
  return { label = (md.labels or {})["app.kubernetes.io/managed-by"],
    name = (md.annotations or {})["meta.helm.sh/release-name"],
    namespace = (md.annotations or {})["meta.helm.sh/release-namespace"] }
end

t.case("every object it applies is marked for Helm adoption, CRDs included; user data is not", function()
  local e = env()
  local user = user_data(e:snapshot())
  t.eq(e:upgrade({}).code, 0)
  local n, crds = 0, 0
  for _, o in pairs(e:snapshot()) do
    local md = o.metadata
    if (md.labels or {})["addon.microk8s.io/name"] == "cert-manager"
        and md.name ~= "uphook-cert-manager" then    -- uphook's state
      if o.kind == "Namespace" then
        t.eq(marks(o), {}, "the chart does not render the Namespace")
      else
        t.eq(marks(o), ADOPT, o.kind .. " " .. md.name)
        n = n + 1
        if o.kind == "CustomResourceDefinition" then crds = crds + 1 end
      end
    end
  end
  t.eq(n, 45, "46 documents less the Namespace")
  t.eq(crds, 6)
  -- the kube-system leader-election Roles are the chart's too
  t.eq(marks(e:get("Role", "cert-manager:leaderelection", "kube-system")), ADOPT)
  t.eq(user_data(e:snapshot()), user)
  for _, o in pairs(user) do t.eq(marks(o), {}, o.kind .. " " .. o.metadata.name) end
end)

t.case("its own Helm marks are not a Helm install: a run after the state is lost still works", function()
  local e = env()
  t.eq(e:upgrade({}).code, 0)
  e:delete("ConfigMap", "uphook-cert-manager", "kube-system")
  local r = e:upgrade {}
  t.eq(r.code, 0, r.error)
  t.eq(r.from, "1.14.5")
end)

t.case("the plan says what to run next, and the v1.8 ConfigMap goes as no longer shipped", function()
  local e = env()
  local r = e:plan {}
  t.eq(r.code, 0, r.error)
  local warned, pruned = false, nil
  for _, x in ipairs(r.plan) do
    if x.type == "log" and x.level == "warn"
        and x.text:find("next: microk8s enable cert-manager", 1, true) then
      warned = true
    end
    if x.type == "kube" and x.kind == "ConfigMap" and x.action == "deleted" then
      pruned = x
    end
  end
  t.ok(warned, "no 'next:' warning in the plan")
  t.eq(pruned and pruned.name, "cert-manager-webhook")
  t.eq(pruned and pruned.reason, "no longer in cert-manager 1.14.5")
  local after = env()
  t.eq(after:upgrade({}).code, 0)
  t.eq(after:get("ConfigMap", "cert-manager-webhook", NS), nil)
end)

t.case("enable's -r and -V (Helm chart repository, version): refused, saying what to run", function()
  for _, args in ipairs { { "-V", "v1.20.2" }, { "-Vv1.20.2" },
                          { "-r", "https://charts.jetstack.io" } } do
    local e = env()
    local before = e:snapshot()
    local r = e:upgrade(args)
    t.eq(r.code, 2, table.concat(args, " "))
    t.match(r.error, "names a Helm chart, which microk8s enable cert%-manager installs")
    t.match(r.error, "then microk8s enable cert%-manager %-[rV] ")
    t.eq(e:snapshot(), before)
  end
end)

-- The ingress hook renders the Traefik chart with the real Helm
-- (t.helm_case: skipped, saying why, where there is none; a failure under
-- CI=true). Two starting points: the nginx controller manifest enable
-- applied before ce8e8d1 (fixtures/nginx-ingress-v1.14.0.yaml, with a
-- node and a user's Ingress), and the Traefik chart 39.0.8 enable
-- installs at f689811 (fixtures/enable-f689811.lua, the real Helm
-- through helm.upgrade, carried object by object into the hook's world).
local t = require "uphook.test"

local NS = "ingress"
local NGINX = "nginx-ingress-microk8s-controller"
local NODE = { "mk8s-node-1" }
local IC = "networking.k8s.io/v1/IngressClass"

local INGRESS = { apiVersion = "networking.k8s.io/v1", kind = "Ingress",
  metadata = { name = "shop", namespace = "web" },
  spec = { ingressClassName = "public", rules = { { host = "shop.example.com",
    http = { paths = { { path = "/", pathType = "Prefix", backend = {
      service = { name = "shop", port = { number = 80 } } } } } } } } } }

local function nginx_env()
  local e = t.env { addon = ".", cluster = "fixtures/nginx-ingress-v1.14.0.yaml",
                    nodes = NODE }
  e:apply { apiVersion = "v1", kind = "Namespace", metadata = { name = "web" } }
  e:apply(INGRESS)
  return e
end

-- nginx with enable's ingress:default-ssl-certificate=web/shop-tls
local function with_cert(e)
  local ds = e:get("DaemonSet", NGINX, NS)
  local args = ds.spec.template.spec.containers[1].args
  for i, a in ipairs(args) do
    if a == " " then args[i] = "--default-ssl-certificate=web/shop-tls" end
  end
  ds.metadata.managedFields, ds.metadata.resourceVersion = nil, nil
  ds.status = nil
  e:apply(ds)
  return e
end

-- A world where enable at f689811 ran: Gateway API v1.5.1 and Traefik
-- 39.0.8 (with args, enable's).
local function enabled(args)
  local enable = t.env { addon = ".", hook = "fixtures/enable-f689811.lua",
                         nodes = NODE }
  enable:apply { apiVersion = "v1", kind = "Namespace", metadata = { name = "web" } }
  local r = enable:upgrade(args or {})
  t.eq(r.code, 0, r.error)
  return enable
end

-- Traefik 39.0.8 as enable installs it, in a world of this hook.
local function traefik_env(args)
  local e = t.env { addon = ".", nodes = NODE }
  enabled(args):copy_to(e)
  e:apply(INGRESS)
  return e
end

local function release_secrets(e)
  local out = {}
  for _, s in ipairs(e:list("Secret", { namespace = NS,
      labels = { owner = "helm", name = "traefik" } })) do
    out[s.metadata.name] = s.metadata.labels.status
  end
  return out
end

local function args_of(e)
  return table.concat(e:get("DaemonSet", "traefik", NS).spec.template.spec
    .containers[1].args, " ")
end

local function classes(e)
  local out = {}
  for _, name in ipairs { "public", "nginx", "traefik" } do
    local ic = e:get(IC, name)
    out[name] = ic and ic.spec.controller
  end
  return out
end

local TRAEFIK = { public = "traefik.io/ingress-controller",
  nginx = "traefik.io/ingress-controller",
  traefik = "traefik.io/ingress-controller" }

t.helm_case("nginx v1.14.0 -> Traefik 41.3.0: nginx gone, classes Traefik's, the Ingress as it was", function()
  local e = nginx_env()
  local before = e:get("Ingress", "shop", "web")
  local r = e:upgrade {}
  t.eq(r.code, 0, r.error)
  t.eq(e:state().version, "41.3.0")
  t.eq(e:state().history[1].from, "1.14.0")
  t.eq(e:get("DaemonSet", NGINX, NS), nil)
  for _, n in ipairs { "nginx-ingress-microk8s-serviceaccount" } do
    t.eq(e:get("ServiceAccount", n, NS), nil)
  end
  t.eq(e:get("ClusterRole", "nginx-ingress-microk8s-clusterrole"), nil)
  t.eq(e:get("ConfigMap", "nginx-load-balancer-microk8s-conf", NS), nil)
  t.eq(release_secrets(e), { ["sh.helm.release.v1.traefik.v1"] = "deployed" })
  t.eq(classes(e), TRAEFIK)
  t.eq(e:get(IC, "public").metadata.annotations
    ["ingressclass.kubernetes.io/is-default-class"], "true")
  local ds = e:get("DaemonSet", "traefik", NS)
  local ports = {}
  for _, p in ipairs(ds.spec.template.spec.containers[1].ports) do
    if p.hostPort then ports[#ports + 1] = p.hostPort end
  end
  table.sort(ports)
  t.eq(ports, { 80, 443 })
  t.match(args_of(e), "%-%-providers%.kubernetesingressnginx")
  t.eq(e:get("Ingress", "shop", "web"), before, "the user's Ingress is untouched")
  t.ok(e:get("CustomResourceDefinition", "gateways.gateway.networking.k8s.io"))
  t.ok(e:get("CustomResourceDefinition", "tlsstores.traefik.io"))
end)

t.helm_case("the plan shows nginx's DaemonSet deleted before Traefik's is created, and the window", function()
  local e = nginx_env()
  -- The Gateway API and Traefik CRDs already there: this engine's plan
  -- dry-runs the chart's Gateway and IngressRoute, whose kinds must be
  -- served (planning a kind the plan's own CRDs bring is not in it yet)
  enabled():copy_to(e, { kinds = { "CustomResourceDefinition" } })
  local before = e:snapshot()
  local r = e:plan {}
  t.eq(r.code, 0, r.error)
  t.eq(e:snapshot(), before)
  local order, warned = {}, false
  for _, x in ipairs(r.plan) do
    if x.type == "kube" and (x.kind == "DaemonSet" or x.kind == "IngressClass") then
      order[#order + 1] = x.action .. " " .. x.kind .. " " .. x.name
    end
    if x.type == "log" and x.level == "warn" and x.text:find("ingress is down", 1, true) then
      warned = true
    end
  end
  t.ok(warned, "the plan says ingress is down until Traefik's pods are ready")
  t.eq(order[1], "deleted DaemonSet " .. NGINX)
  t.eq(order[2], "deleted IngressClass public")
  t.eq(order[3], "deleted IngressClass nginx")
  local created = {}
  for i = 4, #order do created[order[i]] = true end
  t.ok(created["created DaemonSet traefik"], table.concat(order, "\n"))
  t.ok(created["created IngressClass public"], table.concat(order, "\n"))
end)

t.helm_case("nginx's --default-ssl-certificate becomes enable's TLSStore default", function()
  local e = with_cert(nginx_env())
  local r = e:upgrade {}
  t.eq(r.code, 0, r.error)
  local ts = e:get("traefik.io/v1alpha1/TLSStore", "default", "web")
  t.eq(ts and ts.spec, { defaultCertificate = { secretName = "shop-tls" } })
end)

t.helm_case("a Traefik that does not roll out puts nginx back, whole", function()
  local e = nginx_env()
  local before = e:snapshot()
  e:stall("DaemonSet", "traefik", NS)
  local r = e:upgrade {}
  t.eq(r.code, 1)
  t.eq(e:snapshot(), before)
  t.eq(e:get(IC, "public").spec.controller, "k8s.io/ingress-nginx")
end)

t.helm_case("Traefik 39.0.8 -> 41.3.0: kubernetesIngressNginx renamed, revision 2, the TLSStore kept", function()
  local e = traefik_env { "--default-ssl-certificate", "web/shop-tls" }
  t.eq(release_secrets(e), { ["sh.helm.release.v1.traefik.v1"] = "deployed" })
  local ts = e:get("traefik.io/v1alpha1/TLSStore", "default", "web")
  local ing = e:get("Ingress", "shop", "web")
  local r = e:upgrade {}
  t.eq(r.code, 0, r.error)
  t.eq(r.from, "39.0.8")
  t.eq(release_secrets(e), { ["sh.helm.release.v1.traefik.v1"] = "superseded",
    ["sh.helm.release.v1.traefik.v2"] = "deployed" })
  t.match(args_of(e), "%-%-providers%.kubernetesingressnginx")
  t.eq(classes(e), TRAEFIK)
  t.eq(e:get("traefik.io/v1alpha1/TLSStore", "default", "web"), ts)
  t.eq(e:get("Ingress", "shop", "web"), ing)
end)

t.helm_case("a second run is a no-op", function()
  local e = nginx_env()
  t.eq(e:upgrade({}).code, 0)
  local after = e:snapshot()
  local r = e:upgrade {}
  t.eq(r.code, 0, r.error)
  t.ok(r.noop)
  t.eq(e:snapshot(), after)
end)

t.case("--default-ssl-certificate takes NAMESPACE/NAME, as enable checks it", function()
  local e = nginx_env()
  local before = e:snapshot()
  local r = e:upgrade { "--default-ssl-certificate", "shop-tls" }
  t.eq(r.code, 2)
  t.match(r.error, "must be NAMESPACE/NAME")
  t.eq(e:snapshot(), before)
end)

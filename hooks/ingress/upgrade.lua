--- ingress -> Traefik chart 41.3.0 (release traefik in namespace ingress)
--- with the Gateway API CRDs v1.5.1, from either:
--- - the Traefik chart 39.0.8 that `microk8s enable ingress` installs at
---   canonical/microk8s-core-addons@f6898115 (`helm upgrade --install
---   traefik traefik/traefik --version 39.0.8 --namespace ingress
---   --skip-crds --values values.yaml`; values-f689811.yaml here): the
---   user's values kept, `providers.kubernetesIngressNginx` renamed
---   `kubernetesIngressNGINX` (41.x's values.schema.json refuses the old
---   key). Traefik 41.3.0 names Gateway API v1.5.1, enable's too.
--- - the nginx ingress controller manifest enable applied before
---   ce8e8d1 (MicroK8s <= 1.34; TAG by commit of addons/ingress/enable:
---   06a5696/ef32c4b v1.14.0, 059f4dd v1.13.1, b320ee5 v1.12.1, 3af1d49
---   v1.12.0, ce946c6 v1.11.2, 184c39c/ef37d42 v1.8.0, 64b71f6 v1.5.1,
---   4df7c05 v1.2.0, a47841e v1.1.0): Traefik installed as enable installs
---   it now. Both bind hostPort 80 and 443, so the nginx DaemonSet goes
---   before Traefik's is created: ingress is down from that delete until
---   Traefik's pods are ready (the plan says so). The IngressClasses
---   `public` (the default) and `nginx` move from controller
---   k8s.io/ingress-nginx to traefik.io/ingress-controller; a class's
---   controller is immutable, so each is deleted and the chart creates it
---   again (extraObjects); the user's Ingresses name the classes, not
---   their controller, and keep working. nginx's
---   `--default-ssl-certificate=NS/NAME` becomes enable's TLSStore
---   `default` in NS. The rest of nginx goes by name, as disable deletes
---   it. Any failure rolls all of it back, nginx included.
--- `--default-ssl-certificate NAMESPACE/NAME` (enable's) writes that
--- TLSStore (outside the release, as enable writes it); without it, a
--- TLSStore the user has is kept as it is.
local values = require "values"
local manifest = require "manifest"

local NS, RELEASE = "ingress", "traefik"
local CHART = "charts/traefik-41.3.0.tgz"
local GATEWAY_API = "gateway-api/v1.5.1/standard-install.yaml"
local ENABLE_VALUES = "values-f689811.yaml"
local NGINX = "nginx-ingress-microk8s-controller"
--- What addons/ingress/disable deletes of nginx, by kind and name (in
--- namespace ingress unless cluster-scoped).
local NGINX_REST = {
  { "ServiceAccount", "nginx-ingress-microk8s-serviceaccount" },
  { "rbac.authorization.k8s.io/v1/ClusterRole", "nginx-ingress-microk8s-clusterrole" },
  { "rbac.authorization.k8s.io/v1/Role", "nginx-ingress-microk8s-role" },
  { "rbac.authorization.k8s.io/v1/ClusterRoleBinding", "nginx-ingress-microk8s" },
  { "rbac.authorization.k8s.io/v1/RoleBinding", "nginx-ingress-microk8s" },
  { "ConfigMap", "nginx-load-balancer-microk8s-conf" },
  { "ConfigMap", "nginx-ingress-tcp-microk8s-conf" },
  { "ConfigMap", "nginx-ingress-udp-microk8s-conf" },
}
local CLUSTER_KINDS = { ["rbac.authorization.k8s.io/v1/ClusterRole"] = true,
  ["rbac.authorization.k8s.io/v1/ClusterRoleBinding"] = true }

--- enable's check: exactly one `/`, both parts non-empty.
local function check_cert(v)
  if v == "" or v:match("^[^/]+/[^/]+$") then return true end
  return false, "--default-ssl-certificate must be NAMESPACE/NAME, got " .. v
end

--- The nginx DaemonSet's --default-ssl-certificate, or nil.
local function nginx_cert(ds)
  local spec = ds.spec.template.spec
  for _, c in ipairs(spec.containers or {}) do
    for _, a in ipairs(c.args or {}) do
      local v = type(a) == "string" and a:match("^%-%-default%-ssl%-certificate=(.+)$")
      if v then return v end
    end
  end
end

--- enable's TLSStore `default` (addons/ingress/tlsstore.tmpl.yaml).
local function tlsstore(cert)
  local ns, name = cert:match("^([^/]+)/([^/]+)$")
  return { apiVersion = "traefik.io/v1alpha1", kind = "TLSStore",
    metadata = { name = "default", namespace = ns },
    spec = { defaultCertificate = { secretName = name } } }
end

--- Gateway API v1.5.1: its CRDs, Established, and the safe-upgrades policy.
local function gateway_api()
  local objs = manifest.load(GATEWAY_API)
  log.step("Gateway API v1.5.1: %d objects", #objs)
  kube.apply(objs)
  for _, o in ipairs(objs) do
    if o.kind == "CustomResourceDefinition" then
      kube.wait("CustomResourceDefinition", o.metadata.name, nil,
        { condition = "Established", timeout = 60 })
    end
  end
end

--- enable's values, as 41.x names them.
local function migrate(v)
  values.rename(v, "providers.kubernetesIngressNginx",
    "providers.kubernetesIngressNGINX")
  return v
end

local function from_nginx(ds)
  log.warn("ingress is down from the delete of DaemonSet %s/%s until "
    .. "Traefik's pods are ready: both bind hostPort 80 and 443", NS, NGINX)
  kube.delete("DaemonSet", NGINX, NS)
  for _, class in ipairs { "public", "nginx" } do
    local ic = kube.get("networking.k8s.io/v1/IngressClass", class)
    if ic and ic.spec.controller ~= "traefik.io/ingress-controller" then
      log.info("IngressClass %s: controller %s is immutable: re-created "
        .. "for traefik.io/ingress-controller", class, ic.spec.controller)
      kube.delete("networking.k8s.io/v1/IngressClass", class)
    end
  end
  local v = migrate(yaml.decode(addon.read(ENABLE_VALUES)))
  return v, nginx_cert(ds)
end

local function remove_nginx()
  log.step("the rest of nginx, as disable deletes it")
  for _, it in ipairs(NGINX_REST) do
    local ns = not CLUSTER_KINDS[it[1]] and NS or nil
    if kube.get(it[1], it[2], ns) then kube.delete(it[1], it[2], ns) end
  end
end

return {
  uphook = ">=0.2",   -- the hook API it is written for (docs/reference.md)
  version = "41.3.0",
  from = ">=1.1.0 <41.3.0",
  description = "ingress: Traefik chart 41.3.0 (values migrated) and "
    .. "Gateway API v1.5.1, from Traefik 39.0.8 or from the nginx "
    .. "controller enable applied before ce8e8d1",
  -- kube:* for enable's TLSStore, written in the namespace of the
  -- user's certificate (--default-ssl-certificate NAMESPACE/NAME);
  -- kube:privileged for Traefik's hostPorts 80 and 443
  permissions = { "kube:ingress", "kube:cluster", "kube:privileged", "kube:*" },
  params = {
    ["default-ssl-certificate"] = { default = "", check = check_cert,
      description = "enable's NAMESPACE/NAME: the TLSStore default's "
        .. "certificate (kept as it is when not given)" },
  },

  detect = function()
    local rel = helm.release(RELEASE, NS)
    if rel then return rel.chart.version end
    local ds = kube.get("DaemonSet", NGINX, NS)
    local tag = ds and manifest.image_tag(ds)
    return tag and tag:match("^v?(%d+%.%d+%.%d+)") or nil
  end,

  check = function()
    local rel = helm.release(RELEASE, NS)
    if not rel and not kube.get("DaemonSet", NGINX, NS) then
      error("neither the Helm release traefik nor the DaemonSet " .. NGINX
        .. " is in namespace ingress", 0)
    end
  end,

  upgrade = function(ctx)
    local rel = helm.release(RELEASE, NS)
    gateway_api()
    local v, cert
    if rel then
      v = migrate(rel.values or {})
    else
      v, cert = from_nginx(kube.get("DaemonSet", NGINX, NS))
    end
    if ctx.params["default-ssl-certificate"] ~= "" then
      cert = ctx.params["default-ssl-certificate"]
    end
    log.step("helm release %s: chart 41.3.0", RELEASE)
    helm.upgrade { release = RELEASE, namespace = NS, chart = CHART,
      values = v, install = rel == nil, timeout = 300 }
    kube.rollout("DaemonSet", RELEASE, NS, { timeout = 300 })
    if cert then
      log.step("TLSStore default: %s", cert)
      kube.apply(tlsstore(cert))
    end
    if not rel then remove_nginx() end
  end,

  verify = function(ctx)
    if ctx.plan then return end
    local rel = helm.release(RELEASE, NS)
    if not (rel and rel.chart.version == "41.3.0") then
      error("helm release traefik is not at chart 41.3.0", 0)
    end
    for _, class in ipairs { "public", "nginx" } do
      local ic = kube.get("networking.k8s.io/v1/IngressClass", class)
      if not (ic and ic.spec.controller == "traefik.io/ingress-controller") then
        error("IngressClass " .. class .. " is not Traefik's", 0)
      end
    end
  end,
}

-- dns: upgrade CoreDNS to 1.14.3 (from 1.6.6, 1.8.0, 1.10.1 and the
-- versions in between).
--
-- The pattern is "reuse the enable manifest": coredns.yaml is 1.14.3's,
-- filled as `enable` fills it, and applied -- with three exceptions,
-- because the user and the API server own parts of the live addon:
--   * the ConfigMap coredns is `addonmanager.kubernetes.io/mode:
--     EnsureExists`: users edit its Corefile. It is never replaced. Only
--     its root server block's `forward .` line changes, and only when
--     nameservers are given. It is created only when it is missing.
--   * the Service kube-dns keeps its clusterIP (immutable); 1.10 made it a
--     parameter ($DNSIP), before it was 10.152.183.10.
--   * the cluster domain ($CLUSTERDOMAIN since 1.14) is what the live
--     Corefile's `kubernetes` plugin serves.
-- kubelet's --cluster-dns and --cluster-domain are made to match the
-- Service and the Corefile on every node of the cluster (and --resolv-conf
-- set as enable sets it, when kubelet has none); kubelite restarts on the
-- nodes where a line changed, one node at a time, and verify checks every
-- node's running kubelet configuration.
-- The ClusterRole gains endpointslices (discovery.k8s.io) on the way.
--
-- Parameters are enable's positional ones:
--   microk8s upgrade dns [NAMESERVERS [DNSIP [CLUSTERDOMAIN]]]
-- NAMESERVERS is a comma- (or space-) separated list of addresses, or
-- /etc/resolv.conf. An empty argument means "not given".
local ip = require "ip"
local manifest = require "manifest"
local semver = require "semver"

local NS = "kube-system"
local DEFAULT_DOMAIN = "cluster.local"
local WELL_KNOWN_IP = "10.152.183.10"
local SERVICE_RANGE = "10.152.183.0/24"

--- Addresses -----------------------------------------------------------

local function addr(s, version)
  local a = ip.parse(s)
  return a ~= nil and (version == nil or a.version == version)
end

-- A CoreDNS forward target: an address with an optional port
-- (1.1.1.1, 1.1.1.1:5353, [2606:4700::1]:53, 2606:4700::1) or a
-- resolv.conf-style file (/etc/resolv.conf).
local function nameserver(s)
  if s:match("^/[%w%._/%-]+$") then return true end
  local a, port = s:match("^%[([%x:%.]+)%]:(%d+)$")
  if a then return addr(a, 6) and tonumber(port) < 65536 end
  a, port = s:match("^([%d%.]+):(%d+)$")
  if a then return addr(a, 4) and tonumber(port) < 65536 end
  return addr(s)
end

local function domain(s)
  if #s > 253 or s:sub(-1) == "." then return false end
  for label in (s .. "."):gmatch("([^.]*)%.") do
    if not label:match("^[%l%d][%l%d%-]*$") or label:sub(-1) == "-"
       or #label > 63 then
      return false
    end
  end
  return true
end

--- Arguments -------------------------------------------------------------

-- enable's positional arguments: {nameservers = {...}|nil, ip =, domain =}.
local function arguments(ctx)
  local pos = ctx.positional or {}
  if #pos > 3 then
    error(string.format("dns takes at most 3 arguments (NAMESERVERS DNSIP "
      .. "CLUSTERDOMAIN), got %d: %s", #pos, table.concat(pos, " ")), 0)
  end
  local out = {}
  if pos[1] and pos[1]:match("%S") then
    out.nameservers = {}
    for ns in pos[1]:gmatch("[^,%s]+") do
      if not nameserver(ns) then
        error(string.format("nameserver %q is not an IP address (optionally "
          .. "with :port) or /etc/resolv.conf", ns), 0)
      end
      out.nameservers[#out.nameservers + 1] = ns
    end
  end
  if pos[2] and pos[2] ~= "" then
    if not addr(pos[2]) then
      error(string.format("DNS service IP %q is not an IP address", pos[2]), 0)
    end
    out.ip = pos[2]
  end
  if pos[3] and pos[3] ~= "" then
    if not domain(pos[3]) then
      error(string.format("cluster domain %q is not a DNS name", pos[3]), 0)
    end
    out.domain = pos[3]
  end
  return out
end

--- The Corefile ------------------------------------------------------------

local function lines_of(s)
  local out = {}
  for l in (s .. "\n"):gmatch("(.-)\n") do out[#out + 1] = l end
  return out     -- table.concat(out, "\n") == s
end

local function code_of(line) return (line:gsub("#.*$", "")) end

-- Is a server block's key list the root zone ("." or ".:53", any scheme)?
local function root_zone(keys)
  for key in keys:gmatch("%S+") do
    local z = key:gsub("^%a+://", "")
    if z == "." or z:match("^%.:%d+$") then return true end
  end
  return false
end

-- Walk the Corefile's directives at the top level of its server blocks:
-- fn(i, line, root) for each.
local function directives(lines, fn)
  local depth, root = 0, false
  for i, line in ipairs(lines) do
    local code = code_of(line)
    if depth == 0 then
      local keys = code:match("^%s*(.-)%s*{")
      if keys then root = root_zone(keys) end
    elseif depth == 1 and code:match("%S") then
      fn(i, line, root)
    end
    local _, opens = code:gsub("{", "")
    local _, closes = code:gsub("}", "")
    depth = math.max(0, depth + opens - closes)
  end
end

---The zone the root server block's `kubernetes` plugin serves (the
---cluster domain), or nil.
local function corefile_domain(corefile)
  local found
  directives(lines_of(corefile), function(_, line, root)
    local zone = code_of(line):match("^%s*kubernetes%s+(%S+)")
    if root and zone and zone ~= "{" and not found then
      found = zone:gsub("%.$", "")
    end
  end)
  return found
end

---The Corefile with the root block's `forward .` targets replaced by
---`servers` (indentation, options block and everything else kept), or
---nil when it has no such line. Second value: the old targets.
local function set_forward(corefile, servers)
  local lines, at = lines_of(corefile), nil
  directives(lines, function(i, line, root)
    if root and not at and code_of(line):match("^%s*forward%s+%.%s") then
      at = i
    end
  end)
  if not at then return nil end
  local line = lines[at]
  local indent, rest = line:match("^(%s*)forward%s+%.%s+(.*)$")
  local comment = rest:match("%s*#.*$") or ""
  rest = rest:sub(1, #rest - #comment)
  local targets, brace = rest:match("^(.-)%s*({?)%s*$")
  lines[at] = indent .. "forward . " .. table.concat(servers, " ")
              .. (brace ~= "" and " {" or "") .. comment
  return table.concat(lines, "\n"), targets
end

--- The live addon ------------------------------------------------------------

local function live()
  return { deployment = kube.get("Deployment", "coredns", NS),
           service = kube.get("Service", "kube-dns", NS),
           configmap = kube.get("ConfigMap", "coredns", NS),
           kubelet = config.args("kubelet") }
end

local function container(dep)
  local spec = dep and dep.spec and dep.spec.template
               and dep.spec.template.spec
  for _, c in ipairs(spec and spec.containers or {}) do
    if c.name == "coredns" then return c end
  end
end

local function corefile_of(cm)
  local d = cm and cm.data
  return type(d) == "table" and type(d.Corefile) == "string" and d.Corefile
         or nil
end

local function has_endpointslices()
  local cr = kube.get("ClusterRole", "coredns")
  for _, r in ipairs(cr and cr.rules or {}) do
    for _, res in ipairs(r.resources or {}) do
      if res == "endpointslices" then return true end
    end
  end
  return false
end

-- The Service IP: the live one (immutable), else the one given, else
-- enable's rule: the well-known address when the service range starts
-- with MicroK8s' default (grep '^--service-cluster-ip-range=10.152.183.0/24',
-- a prefix: a dual-stack "10.152.183.0/24,fd98::/108" matches too).
local function service_ip(a, l)
  local cur = l.service and l.service.spec and l.service.spec.clusterIP
  if cur == yaml.null or cur == "None" then cur = nil end
  if a.ip and cur and a.ip ~= cur then
    error(string.format("the Service kube-system/kube-dns has clusterIP %s; "
      .. "it cannot change to %s (immutable): disable and enable dns to "
      .. "move it", cur, a.ip), 0)
  end
  if cur or a.ip then return cur or a.ip end
  local range = config.args("kube-apiserver")["--service-cluster-ip-range"]
  if type(range) == "string" and range:sub(1, #SERVICE_RANGE) == SERVICE_RANGE
  then
    return WELL_KNOWN_IP
  end
end

-- The upstream nameservers, and the --resolv-conf to give kubelet, as
-- enable chooses them when no nameserver (or /etc/resolv.conf) is given:
-- the host's resolv.conf if kubelet has one; else the first host file
-- with non-loopback nameservers, which kubelet then gets on every node;
-- else Google's servers.
local function upstreams(a, l)
  local plain = not a.nameservers or (#a.nameservers == 1
    and a.nameservers[1] == "/etc/resolv.conf")
  if not plain then return a.nameservers end
  if l.kubelet["--resolv-conf"] then return { "/etc/resolv.conf" } end
  local found = nodes.resolv_conf()
  if found then return { "/etc/resolv.conf" }, found end
  return { "8.8.8.8", "8.8.4.4" }
end

-- Everything the upgrade needs, read-only; errors before any change.
local function settle(ctx)
  local a, l = arguments(ctx), live()
  if not l.deployment then
    error("Deployment kube-system/coredns is missing: dns does not look "
      .. "enabled (microk8s enable dns)", 0)
  end
  local s = { args = a, live = l }
  s.ip = service_ip(a, l)
  -- the cluster domain: what the live Corefile serves
  local corefile = corefile_of(l.configmap)
  local served = corefile and corefile_domain(corefile)
  if a.domain and served and a.domain ~= served then
    error(string.format("the Corefile (ConfigMap kube-system/coredns) serves "
      .. "the cluster domain %s, not %s; edit its kubernetes line first or "
      .. "leave the domain out", served, a.domain), 0)
  end
  s.domain = a.domain or served or l.kubelet["--cluster-domain"]
             or DEFAULT_DOMAIN
  -- the Corefile: kept; its forward line only when nameservers are given
  s.corefile = corefile
  if corefile and a.nameservers then
    local new = set_forward(corefile, a.nameservers)
    if not new then
      error("the Corefile (ConfigMap kube-system/coredns) has no `forward .` "
        .. "line in its root server block to set the nameservers on; add "
        .. "one or leave the nameservers out", 0)
    end
    s.new_corefile = new
  end
  local upstream
  upstream, s.resolv_conf = upstreams(a, l)
  if not corefile then s.nameservers = upstream end
  local sc = (container(l.deployment) or {}).securityContext
  local esc = type(sc) == "table" and sc.allowPrivilegeEscalation
  s.allow_escalation = esc == true and "true" or "false"
  return s
end

local function objects(s)
  local objs = manifest.load("coredns.yaml", {
    NAMESERVERS = table.concat(s.nameservers or { "/etc/resolv.conf" }, " "),
    DNSIP = s.ip or "",
    CLUSTERDOMAIN = s.domain,
    ALLOWESCALATION = s.allow_escalation,
  })
  local svc = manifest.find(objs, "Service", "kube-dns")
  if not s.ip then svc.spec.clusterIP = nil end   -- the server assigns one
  return objs
end

local function version_of(dep)
  local tag = manifest.image_tag(dep, "coredns")
  local v = tag and semver.parse(tag)
  if v then return semver.format(v) end
  local tpl = dep.spec.template.metadata or {}
  if has_endpointslices() then return "1.10.1" end
  if type(tpl.annotations) == "table"
     and tpl.annotations["scheduler.alpha.kubernetes.io/critical-pod"] then
    return "1.6.6"
  end
  return "1.8.0"
end

return {
  uphook = ">=0.2",   -- the hook API it is written for (docs/reference.md)
  version = "1.14.3",
  from = ">=1.6.0 <1.14.3",
  description = "CoreDNS 1.14.3: the live Corefile and the Service IP kept; "
    .. "edits kubelet's args on every node (--cluster-dns, --cluster-domain)",
  permissions = { "kube:kube-system", "kube:cluster", "args:kubelet",
                  "restart:kubelite" },
  params = {},
  -- enable's positional form: microk8s upgrade dns[:NS[:DNSIP[:DOMAIN]]]
  positional = {
    { name = "nameservers", description = "upstream nameservers, comma "
      .. "separated (or /etc/resolv.conf); empty: keep the Corefile's" },
    { name = "dnsip", description = "the kube-dns Service IP (must be the "
      .. "live one: it is immutable)" },
    { name = "domain", description = "the cluster domain (must be the one "
      .. "the Corefile serves)" },
  },

  detect = function()
    local dep = kube.get("Deployment", "coredns", NS)
    if not dep then return nil end
    return version_of(dep)
  end,

  check = function(ctx) settle(ctx) end,

  upgrade = function(ctx)
    local s = settle(ctx)
    local objs = objects(s)
    log.info("Service IP %s, cluster domain %s", tostring(s.ip or "(new)"),
             s.domain)

    log.step("RBAC (endpointslices)")
    kube.apply { manifest.find(objs, "ServiceAccount", "coredns"),
                 manifest.find(objs, "ClusterRole", "coredns"),
                 manifest.find(objs, "ClusterRoleBinding", "coredns") }

    log.step("Corefile")
    if not s.corefile then
      log.info("ConfigMap coredns is missing: creating it (forward . %s)",
               table.concat(s.nameservers, " "))
      kube.apply(manifest.find(objs, "ConfigMap", "coredns"))
    elseif s.new_corefile and s.new_corefile ~= s.corefile then
      log.info("forward . %s (only that line changes)",
               table.concat(s.args.nameservers, " "))
      -- with the manifest's labels: kubectl applied them at enable, and
      -- what this apply leaves out of kubectl's fields is removed
      local labels = manifest.find(objs, "ConfigMap", "coredns").metadata.labels
      kube.apply { apiVersion = "v1", kind = "ConfigMap",
        metadata = { name = "coredns", namespace = NS, labels = labels },
        data = { Corefile = s.new_corefile } }
    else
      log.info("kept as it is%s", s.args.nameservers
        and " (its forward line already says so)" or
        " (no nameservers given)")
    end

    log.step("CoreDNS %s", ctx.to)
    kube.apply { manifest.find(objs, "Service", "kube-dns"),
                 manifest.find(objs, "Deployment", "coredns") }

    log.step("kubelet on every node")
    local svc = kube.get("Service", "kube-dns", NS)
    local dns_ip = s.ip or (svc and svc.spec.clusterIP)
    local changes = { ["--cluster-domain"] = s.domain }
    if dns_ip then changes["--cluster-dns"] = dns_ip end
    if s.resolv_conf then
      log.info("the host's resolv.conf with upstream nameservers is %s: "
        .. "kubelet --resolv-conf", s.resolv_conf)
      changes["--resolv-conf"] = s.resolv_conf
    end
    if config.set_args("kubelet", changes) then
      log.info("--cluster-dns=%s --cluster-domain=%s: kubelite restarts "
        .. "where a line changed", tostring(dns_ip), s.domain)
      service.restart("kubelite", { nodes = "changed" })
    else
      log.info("kubelet's DNS settings already match on every node")
    end
  end,

  -- every node's kubelet really runs with the Service's IP and the domain
  verify = function(ctx)
    kube.rollout("Deployment", "coredns", NS, { timeout = 300 })
    if ctx.plan then return end
    local svc = kube.get("Service", "kube-dns", NS)
    local want = svc and svc.spec.clusterIP
    local domain_ = settle(ctx).domain
    for _, n in ipairs(nodes.list()) do
      local kc = nodes.kubelet_config(n.name)
      local found = false
      for _, x in ipairs(kc.clusterDNS or {}) do found = found or x == want end
      if not found or kc.clusterDomain ~= domain_ then
        error(string.format("the kubelet of node %s runs with clusterDNS %s "
          .. "and clusterDomain %s, not the Service kube-dns (%s) and %s",
          n.name, table.concat(kc.clusterDNS or {}, ","),
          tostring(kc.clusterDomain), tostring(want), domain_), 0)
      end
    end
  end,
}

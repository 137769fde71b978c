-- The mock's fidelity to the API server (docs/mock.md), each case run on
-- the mock and on the fake API server (tests/lua/fidelity/worlds.lua):
-- Services: type changes and IP families, and the fields a Service's
-- type drops.
local t = require "uphook.test"
local worlds = require "worlds"

local NS, case, refused = worlds.NS, worlds.case, worlds.refused

-- core ValidateServiceUpdate (kubernetes/kubernetes@v1.32.3
-- pkg/apis/core/validation/validation.go) and the Service strategy's
-- dropTypeDependentFields (pkg/registry/core/service/strategy.go).

local function service(name, spec)
  spec.ports = spec.ports or { { port = 80 } }
  return { apiVersion = "v1", kind = "Service",
    metadata = { name = name, namespace = NS }, spec = spec }
end

-- validateUpgradeDowngradeIPFamilies: "may not change once set" on
-- ipFamilies[0]; validateServiceClusterIPsRelatedFields: the cluster IP
-- must be of the family ipFamilies names.
case("a Service's ipFamilies may not change once set", function(w)
  local o = w.apply(service("fam", { selector = { app = "a" } }), "kubectl")
  local ip = o.spec.clusterIP
  t.match(ip, "^%d+%.%d+%.%d+%.%d+$")
  t.eq(w.apply(service("fam", { selector = { app = "a" },
    ipFamilies = { "IPv4" } }), "uphook").spec.clusterIP, ip)
  refused(w, service("fam", { selector = { app = "a" },
    ipFamilies = { "IPv6" } }), 'Service "fam" is invalid: '
    .. '[spec.ipFamilies[0]: Invalid value: []core.IPFamily{"IPv6"}: may '
    .. 'not change once set, spec.clusterIPs[0]: Invalid value: "' .. ip
    .. '": expected an IPv6 value as indicated by `ipFamilies[0]`]')
end)

-- dropTypeDependentFields: a Service turned ExternalName loses its
-- cluster IPs and IP families (the request left them as they were, so
-- the strategy wipes them and releases the IP); turned back, it gets a
-- new cluster IP. clusterIP's "may not change once set" does not apply
-- to or from ExternalName (validateUpgradeDowngradeClusterIPs).
case("a Service turned ExternalName drops its cluster IP, and back",
  function(w)
    w.apply(service("ext", { type = "ClusterIP", selector = { app = "a" } }),
            "kubectl")
    local o = w.apply(service("ext", { type = "ExternalName",
      externalName = "db.example.com" }), "uphook")
    t.eq(o.spec.type, "ExternalName")
    t.eq(o.spec.clusterIP, nil)
    t.eq(o.spec.clusterIPs, nil)
    t.eq(o.spec.ipFamilies, nil)
    o = w.apply(service("ext", { type = "ClusterIP" }), "uphook")
    t.eq(o.spec.externalName, nil)
    t.match(o.spec.clusterIP, "^%d+%.%d+%.%d+%.%d+$")
  end)

-- core ValidateServiceUpdate -> validateServiceClusterIPsRelatedFields
-- (kubernetes/kubernetes@v1.32.3 pkg/apis/core/validation/validation.go):
-- a cluster IP, once set, "may not change once set"; left out of a
-- request, the allocated one is kept.
case("a Service's clusterIP may not change once set", function(w)
  local o = w.apply(service("fid-ip", { clusterIP = "10.152.183.200" }),
                    "uphook")
  t.eq(o.spec.clusterIP, "10.152.183.200")
  refused(w, service("fid-ip", { clusterIP = "10.152.183.201" }),
    'Service "fid-ip" is invalid: spec.clusterIPs[0]: Invalid value: '
    .. '[]string{"10.152.183.201"}: may not change once set')
  o = w.apply(service("fid-ip", {}), "uphook")
  t.eq(o.spec.clusterIP, "10.152.183.200")
  w.delete("Service", "fid-ip", NS)
end)

-- core ValidateService, its ExternalName case (kubernetes/kubernetes@
-- v1.32.3 pkg/apis/core/validation/validation.go): externalName is
-- required (field.Required) and a DNS-1123 subdomain (a trailing dot,
-- fully qualified, allowed); clusterIPs, ipFamilies and ipFamilyPolicy
-- "may not be set for ExternalName services" (the strategy has copied
-- clusterIP into clusterIPs before).
case("an ExternalName Service needs an externalName and has no cluster IP",
  function(w)
    local function ext(extra)
      local spec = { type = "ExternalName" }
      for k, v in pairs(extra) do spec[k] = v end
      return service("fid-ext", spec)
    end
    refused(w, ext {}, 'Service "fid-ext" is invalid: spec.externalName: '
      .. "Required value")
    refused(w, ext { externalName = "Not_A_Host" }, 'Service "fid-ext" is '
      .. 'invalid: spec.externalName: Invalid value: "Not_A_Host": a '
      .. "lowercase RFC 1123 subdomain must consist of lower case "
      .. "alphanumeric characters, '-' or '.', and must start and end with "
      .. "an alphanumeric character (e.g. 'example.com', regex used for "
      .. "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*"
      .. "[a-z0-9])?)*')")
    refused(w, ext { externalName = "db.example.com",
      clusterIP = "10.152.183.77" }, 'Service "fid-ext" is invalid: '
      .. "spec.clusterIPs: Forbidden: may not be set for ExternalName "
      .. "services")
    local o = w.apply(ext { externalName = "db.example.com." }, "uphook")
    t.eq(o.spec.externalName, "db.example.com.")
    t.eq(o.spec.clusterIP, nil)
    -- an update may not drop it either (uphook owns it: applied without
    -- it, it would go)
    refused(w, ext {}, 'Service "fid-ext" is invalid: spec.externalName: '
      .. "Required value")
    w.delete("Service", "fid-ext", NS)
  end)

-- dropTypeDependentFields: NodePort -> ClusterIP drops the node ports the
-- request left as they were (here kubectl still owns one, so the apply's
-- merge keeps it); ValidateService refuses a node port it did change:
-- "may not be used when `type` is 'ClusterIP'".
case("a NodePort Service turned ClusterIP drops its node ports", function(w)
  w.apply(service("np", { type = "NodePort", selector = { app = "a" },
    ports = { { port = 80, nodePort = 30080 } } }), "kubectl")
  local e = w.err(function()
    w.apply(service("np", { type = "ClusterIP", selector = { app = "a" },
      ports = { { port = 80, nodePort = 30081 } } }), "uphook")
  end)
  t.eq(e.code, 422)
  t.eq(e.message, 'Service "np" is invalid: spec.ports[0].nodePort: '
    .. "Forbidden: may not be used when `type` is 'ClusterIP'")
  local o = w.apply(service("np", { type = "ClusterIP",
    selector = { app = "a" }, ports = { { port = 80 } } }), "uphook")
  t.eq(o.spec.type, "ClusterIP")
  t.eq(#o.spec.ports, 1)
  t.eq(o.spec.ports[1].nodePort, nil)
end)

-- validateLoadBalancerClassField: a LoadBalancer's loadBalancerClass
-- "may not change once set".
case("a LoadBalancer's loadBalancerClass may not change", function(w)
  w.apply(service("lb", { type = "LoadBalancer", selector = { app = "a" },
    loadBalancerClass = "example.com/a" }), "kubectl")
  refused(w, service("lb", { type = "LoadBalancer", selector = { app = "a" },
    loadBalancerClass = "example.com/b" }), 'Service "lb" is invalid: '
    .. 'spec.loadBalancerClass: Invalid value: "example.com/b": may not '
    .. 'change once set')
end)

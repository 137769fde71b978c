-- expect: 0 Upgraded
-- docs/security.md "Namespace permission as root": what baseline allows needs
-- only kube:<ns>: CoreDNS's NET_BIND_SERVICE, RuntimeDefault seccomp, safe
-- sysctls, hostPort 0.
return { version = "2.0.0", from = ">=1.0.0", permissions = { "kube:default" },
  detect = function() return "1.0.0" end,
  upgrade = function()
    kube.apply { apiVersion = "apps/v1", kind = "Deployment",
      metadata = { name = "dns", namespace = "default" },
      spec = { selector = { matchLabels = { app = "dns" } },
        template = { metadata = { labels = { app = "dns" } },
          spec = { securityContext = { seccompProfile = { type = "RuntimeDefault" },
              sysctls = { { name = "net.ipv4.ip_unprivileged_port_start", value = "0" } } },
            containers = { { name = "coredns", image = "coredns",
              ports = { { containerPort = 53, hostPort = 0 } },
              securityContext = { capabilities = { add = { "NET_BIND_SERVICE" },
                drop = { "ALL" } } } } } } } } }
  end }

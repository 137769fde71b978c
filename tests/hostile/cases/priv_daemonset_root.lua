-- expect: 4 DaemonSet default/own: hostPID; hostPath volume root \(\/\); container c: privileged needs "kube:privileged"
-- docs/security.md "Namespace permission as root": kube:<ns> alone no longer
-- creates a privileged DaemonSet that mounts each node's / (root on every
-- node).
return { version = "2.0.0", from = ">=1.0.0", permissions = { "kube:default" },
  detect = function() return "1.0.0" end,
  upgrade = function()
    kube.apply { apiVersion = "apps/v1", kind = "DaemonSet",
      metadata = { name = "own", namespace = "default" },
      spec = { selector = { matchLabels = { app = "own" } },
        template = { metadata = { labels = { app = "own" } },
          spec = { hostPID = true,
            containers = { { name = "c", image = "busybox",
              securityContext = { privileged = true },
              volumeMounts = { { name = "root", mountPath = "/host" } } } },
            volumes = { { name = "root", hostPath = { path = "/" } } } } } } }
  end }

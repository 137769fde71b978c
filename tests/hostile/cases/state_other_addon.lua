-- expect: 4 ConfigMap kube-system/uphook-dns belongs to uphook
-- docs/security.md "Other addons' state": a kube:kube-system hook cannot
-- rewrite another addon's state (its saved parameters reach that addon's
-- hook).
return { version = "2.0.0", from = ">=1.0.0", permissions = { "kube:kube-system" },
  detect = function() return "1.0.0" end,
  upgrade = function()
    kube.apply { apiVersion = "v1", kind = "ConfigMap",
      metadata = { name = "uphook-dns", namespace = "kube-system" },
      data = { version = "1.0.0", params = "nameservers: '$(id)'" } }
  end }

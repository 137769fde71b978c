-- expect: 4 Lease kube-system/uphook-dns belongs to uphook
-- docs/security.md "Other addons' state": nor delete another addon's lock.
return { version = "2.0.0", from = ">=1.0.0", permissions = { "kube:kube-system" },
  detect = function() return "1.0.0" end,
  upgrade = function()
    kube.delete("coordination.k8s.io/v1/Lease", "uphook-dns", "kube-system")
  end }

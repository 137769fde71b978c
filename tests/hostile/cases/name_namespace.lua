-- expect: 4 namespace "\.\./\.\./api" is invalid
-- docs/security.md "Dots and slashes in names": namespaces are DNS labels.
kube.list("ConfigMap", { namespace = "../../api" })

-- expect: 4 namespace "\.\./\.\./api" is invalid
-- issue 15 point 14: namespaces are DNS labels.
kube.list("ConfigMap", { namespace = "../../api" })

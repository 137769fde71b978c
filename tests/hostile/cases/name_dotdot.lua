-- expect: 4 kube.get: ConfigMap name "\.\." is invalid: a lowercase RFC 1123 subdomain
-- docs/security.md "Dots and slashes in names": names are validated as the
-- API server does before any URL is built
-- ("/api/v1/namespaces/default/configmaps/.." is the list of ConfigMaps,
-- another URL).
kube.get("ConfigMap", "..", "default")

--- A probe for tests/lua/helm_test.lua's CRD rollback cases: applies the
--- CRD widgets.demo.example.com as --case says (v2: a new storage
--- version; schema: v1 with another schema), then fails, so the run rolls
--- back.
local function crd(versions)
  return { apiVersion = "apiextensions.k8s.io/v1",
    kind = "CustomResourceDefinition",
    metadata = { name = "widgets.demo.example.com" },
    spec = { group = "demo.example.com", scope = "Namespaced",
      names = { kind = "Widget", plural = "widgets", singular = "widget",
                listKind = "WidgetList" },
      versions = versions } }
end
local function version(name, storage, prop)
  return { name = name, served = true, storage = storage,
    schema = { openAPIV3Schema = { type = "object",
      properties = { spec = { type = "object", properties = {
        [prop] = { type = "integer" } } } } } } }
end

return {
  version = "2.0.0", from = "1.0.0",
  description = "CRD rollback probe",
  permissions = { "kube:cluster" },
  params = { case = { default = "schema" } },
  detect = function() return "1.0.0" end,
  upgrade = function(ctx)
    if ctx.params.case == "v2" then
      kube.apply(crd { version("v1", false, "size"), version("v2", true, "size") })
    else
      kube.apply(crd { version("v1", true, "count") })
    end
    error("the upgrade fails after the CRD")
  end,
}

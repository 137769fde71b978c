-- The mock's fidelity to the API server (docs/mock.md), each case run on
-- the mock and on the fake API server (tests/lua/fidelity/worlds.lua):
-- Custom resources: how a CRD's x-kubernetes-* markers merge their
-- fields.
local t = require "uphook.test"
local worlds = require "worlds"

local NS, case = worlds.NS, worlds.case

local CRD = {
  apiVersion = "apiextensions.k8s.io/v1", kind = "CustomResourceDefinition",
  metadata = { name = "widgets.fidelity.example.com" },
  spec = { group = "fidelity.example.com", scope = "Namespaced",
    names = { plural = "widgets", singular = "widget", kind = "Widget",
              listKind = "WidgetList" },
    versions = { { name = "v1", served = true, storage = true,
      schema = { openAPIV3Schema = { type = "object", properties = {
        spec = { type = "object", properties = {
          ports = { type = "array", ["x-kubernetes-list-type"] = "map",
            ["x-kubernetes-list-map-keys"] = { "name" },
            items = { type = "object", required = { "name" }, properties = {
              name = { type = "string" }, port = { type = "integer" } } } },
          tags = { type = "array", items = { type = "string" } },
          labels = { type = "object", ["x-kubernetes-map-type"] = "atomic",
            additionalProperties = { type = "string" } },
          extra = { type = "object",
                    ["x-kubernetes-preserve-unknown-fields"] = true },
        } } } } } } } } }

local function widget(spec)
  return { apiVersion = "fidelity.example.com/v1", kind = "Widget",
    metadata = { name = "w", namespace = NS }, spec = spec }
end

-- SSA "Custom resources" + kube-openapi schemaconv: x-kubernetes-list-type
-- map merges by the map keys; an array without x-kubernetes-list-type is
-- atomic; x-kubernetes-map-type: atomic replaces the map whole; unknown
-- fields under x-kubernetes-preserve-unknown-fields merge key by key.
case("a CRD's x-kubernetes-* markers decide how its fields merge",
  function(w)
    w.apply(CRD, "uphook")
    w.wait_established(CRD.metadata.name)
    w.apply(widget { ports = { { name = "a", port = 1 } }, tags = { "x" },
      labels = { a = "1", b = "2" }, extra = { one = { x = 1 } } }, "kubectl")
    local o = w.apply(widget { ports = { { name = "b", port = 2 } },
      tags = { "y" }, labels = { a = "1" }, extra = { one = { y = 2 } } },
      "uphook")
    t.eq(o.spec.ports, { { name = "a", port = 1 }, { name = "b", port = 2 } })
    t.eq(o.spec.tags, { "y" })
    t.eq(o.spec.labels, { a = "1" })
    t.eq(o.spec.extra, { one = { x = 1, y = 2 } })
    w.delete("CustomResourceDefinition", CRD.metadata.name)
  end)

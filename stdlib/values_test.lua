-- Tests for stdlib/values.lua: the key-path edits a hook makes to a Helm
-- release's values before helm.upgrade (docs/reference.md, "values").
local t = require "uphook.test"
local values = require "values"

t.case("rename moves a value and drops the maps it emptied", function()
  local v = { providers = { kubernetesIngressNginx = { enabled = true } },
              ports = { web = 80 } }
  t.eq(values.rename(v, "providers.kubernetesIngressNginx",
                     "providers.kubernetesIngressNGINX"), true)
  t.eq(v, { providers = { kubernetesIngressNGINX = { enabled = true } },
            ports = { web = 80 } })
  t.eq(values.rename(v, "ports.web", "entry.points.web.port"), true)
  t.eq(v, { providers = { kubernetesIngressNGINX = { enabled = true } },
            entry = { points = { web = { port = 80 } } } })
end)

t.case("rename of an absent key changes nothing", function()
  local v = { a = { b = 1 } }
  t.eq(values.rename(v, "a.c", "a.d"), false)
  t.eq(values.rename(v, "x.y.z", "a.d"), false)
  t.eq(values.rename(v, "a.b.c", "a.d"), false)   -- a.b is no map
  t.eq(v, { a = { b = 1 } })
end)

t.case("rename refuses when both keys are set, or the target is no map",
  function()
  local v = { a = 1, b = 2, c = "text" }
  t.err(function() values.rename(v, "a", "b") end,
        "both a and b are set; keep one")
  t.err(function() values.rename(v, "a", "c.d") end,
        "cannot move a to c.d: c is not a map")
  t.eq(v, { a = 1, b = 2, c = "text" })
end)

t.case("drop removes a value and returns it; absent is nil", function()
  local v = { a = { b = { c = 1 }, d = 2 } }
  t.eq(values.drop(v, "a.b.c"), 1)
  t.eq(v, { a = { d = 2 } })
  t.eq(values.drop(v, "a.x"), nil)
  t.eq(values.drop(v, "a.d.e"), nil)
  t.eq(values.drop(v, "a.d"), 2)
  t.eq(v, {})
end)

t.case("a key with a dot: escaped in a string path, or a list path",
  function()
  local v = { podAnnotations = { ["prometheus.io/scrape"] = "true" } }
  t.eq(values.rename(v, "podAnnotations.prometheus\\.io/scrape",
                     { "annotations", "prometheus.io/scrape" }), true)
  t.eq(v, { annotations = { ["prometheus.io/scrape"] = "true" } })
  t.eq(values.drop(v, { "annotations", "prometheus.io/scrape" }), "true")
  t.eq(v, {})
end)

t.case("bad paths and values are errors naming the function", function()
  t.err(function() values.drop({}, "a..b") end,
        "values.drop: path #2 \"a..b\" has an empty key")
  t.err(function() values.drop({}, 3) end,
        "values.drop: path #2 must be a string or a list of keys, got number")
  t.err(function() values.rename({}, "a", {}) end,
        "values.rename: path #3 is empty")
  t.err(function() values.drop("x", "a") end,
        "values.drop: values must be a map")
  t.err(function() values.merge({ 1, 2 }, {}) end,
        "values.merge: values must be a map %(a table of keys%), got a list")
end)

t.case("merge: user wins, maps merge, lists replace, inputs unchanged",
  function()
  local defaults = { image = { repository = "traefik", tag = "v3.4" },
                     args = { "--a", "--b" }, replicas = 1,
                     service = { annotations = { x = "1" } } }
  local user = { image = { tag = "v3.5" }, args = { "--c" },
                 service = { type = "NodePort" }, extra = { 1, 2 } }
  local m = values.merge(defaults, user)
  t.eq(m, { image = { repository = "traefik", tag = "v3.5" },
            args = { "--c" }, replicas = 1, extra = { 1, 2 },
            service = { annotations = { x = "1" }, type = "NodePort" } })
  t.eq(defaults.image.tag, "v3.4")
  t.eq(user.image, { tag = "v3.5" })
  m.args[1] = "changed"
  t.eq(user.args[1], "--c")
end)

t.case("merge: a map replaces a scalar and a list replaces a map",
  function()
  t.eq(values.merge({ a = 1, b = { c = 1 } }, { a = { x = 1 }, b = { 5 } }),
       { a = { x = 1 }, b = { 5 } })
  t.eq(values.merge(nil, { a = 1 }), { a = 1 })
  t.eq(values.merge({ a = 1 }, nil), { a = 1 })
end)

t.case("merge: an empty decoded list replaces a list; an empty map merges",
  function()
  if not yaml then return t.skip("no yaml codec in this runner") end
  local user = yaml.decode("args: []\nservice: {}\n")
  local m = values.merge({ args = { "--a" }, service = { type = "LB" } },
                         user)
  t.eq(#m.args, 0)
  t.eq(yaml.encode(m.args), "[]\n")
  t.eq(m.service, { type = "LB" })
end)

t.case("merge: a user null stays (Helm then drops the default)", function()
  if not yaml then return t.skip("no yaml codec in this runner") end
  local m = values.merge({ a = { b = 1 }, c = 2 },
                         yaml.decode("a: null\n"))
  t.eq(m.a, yaml.null)
  t.eq(m.c, 2)
end)

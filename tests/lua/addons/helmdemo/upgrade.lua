--- A probe for tests/lua/helm_test.lua: the release "demo" in "apps" of
--- the tiny chart in charts/ (chart-src/ holds its source), installed or
--- upgraded with helm.upgrade; --chart picks the packaged chart,
--- --greeting sets a value over what the release has; --url and --sha256
--- take the chart from net.download instead.
local values = require "values"

return {
  version = "0.2.0", from = ">=0.0.0 <0.2.0",
  description = "helm.upgrade probe",
  permissions = { "kube:apps", "kube:cluster", "net:charts.example.com" },
  params = { chart = { default = "charts/demo-0.2.0.tgz" },
             greeting = { default = "" },
             big = { default = "0" },
             url = { default = "" }, sha256 = { default = "" },
             case = { default = "upgrade" } },
  detect = function()
    local r = helm.release("demo", "apps")
    return r and r.chart.version or "0.0.0"
  end,
  upgrade = function(ctx)
    local rel = helm.release("demo", "apps")
    if rel and rel.pending then
      log.info("pending revision %d %s", rel.pending.revision, rel.pending.status)
    end
    if ctx.params.case == "render" then
      local objs = helm.render { release = "demo", namespace = "apps",
        chart = ctx.params.chart, values = rel and rel.values or {} }
      for _, o in ipairs(objs) do log.info("rendered %s %s", o.kind, o.metadata.name) end
      return
    end
    local v = values.merge({}, rel and rel.values or {})
    if ctx.params.greeting ~= "" then v.greeting = ctx.params.greeting end
    local n = tonumber(ctx.params.big)
    if n > 0 then   -- bytes that gzip cannot shrink, for the 1 MiB limit
      local parts, x = {}, 12345
      for i = 1, n do
        x = (x * 1103515245 + 12345) % 2147483648
        parts[i] = string.char(97 + (x >> 16) % 26)
      end
      v.big = table.concat(parts)
    end
    local chart = ctx.params.chart
    if ctx.params.url ~= "" then
      chart = net.download(ctx.params.url, { sha256 = ctx.params.sha256 })
    end
    local out = helm.upgrade { release = "demo", namespace = "apps",
      chart = chart, values = v, install = true }
    if ctx.params.case == "twice" then   -- a second upgrade in one run
      v.greeting = "twice"
      out = helm.upgrade { release = "demo", namespace = "apps",
        chart = chart, values = v }
    end
    log.info("release %s %s revision %d %s", out.name, out.chart.version,
      out.revision, out.status)
  end,
}

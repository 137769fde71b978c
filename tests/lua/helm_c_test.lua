-- uphook.c.helm in the engine's family table (lua/core/cfamilies.lua):
-- a release record made and read back as Helm's Secret driver stores it
-- (base64 of gzip of JSON), and a chart rendered by the real Helm from
-- `make helm` through the broker's own state. The family's own checks
-- are tests/unit/test_helm.c and tests/unit/test_helm_render.c.
local t = require "uphook.test"
local C = require("uphook.core.cfamilies").load()
local helm, sys, json = C.helm, C.sys, C.json

t.case("a release record round-trips as base64(gzip(json))", function()
  local record = { name = "r1", version = 3, info = { status = "deployed" },
    manifest = ("---\nkind: ConfigMap\n"):rep(500) }
  local stored = helm.b64encode(helm.gzip(json.encode(record)))
  t.match(stored, "^H4sI", "a gzip member, base64: what Helm's records start with")
  t.ok(#stored < #record.manifest / 10)
  local back = json.decode(assert(helm.gunzip(assert(helm.b64decode(stored)))))
  t.eq(back.name, "r1")
  t.eq(back.info.status, "deployed")
  t.eq(back.manifest, record.manifest)
end)

local build = sys.getenv("BUILD") or "build"
local HELM = sys.kind(build .. "/helm/v3/helm") == "file"
  and sys.realpath(build .. "/helm/v3/helm")
  or sys.kind("build/helm/v3/helm") == "file" and sys.realpath("build/helm/v3/helm")
local case = HELM and t.case or function(name)
  t.skip(name, "no Helm at build/helm/v3/helm (make helm)")
end

case("Helm renders a chart read back by helm.chart", function()
  local dir = assert(sys.mkdtemp())
  assert(sys.mkdirs(dir .. "/web/templates"))
  assert(sys.write(dir .. "/web/Chart.yaml",
    "apiVersion: v2\nname: web\nversion: 2.0.1\nappVersion: \"9\"\n"))
  assert(sys.write(dir .. "/web/values.yaml", "port: 80\n"))
  assert(sys.write(dir .. "/web/templates/svc.yaml",
    "kind: Service\nmetadata:\n  name: {{ .Release.Name }}\n" ..
    "spec:\n  port: {{ .Values.port }}\n"))
  t.eq(sys.run { "tar", "czf", dir .. "/web-2.0.1.tgz", "-C", dir, "web" }, 0)
  local files = assert(helm.chart(dir .. "/web-2.0.1.tgz")).files
  t.match(files["Chart.yaml"], "version: 2.0.1")
  t.eq(files["values.yaml"], "port: 80\n")
  local out, err = helm.render { helm = HELM, values = "port: 8080\n",
    args = { "template", "front", dir .. "/web-2.0.1.tgz", "--namespace", "web" } }
  sys.rmtree(dir)
  t.ok(out, err)
  t.match(out, "name: front")
  t.match(out, "port: 8080")
end)

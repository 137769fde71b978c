--- A probe for tests/lua/hookerror_test.lua: `--case NAME` runs one
--- scenario and logs what the hook saw as JSON (`seen {...}`).
local retry = require "retry"

local function seen(ok, e)
  local v = { ok = ok, type = type(e) }
  if type(e) == "table" then
    v.code, v.reason, v.message, v.url, v.path = e.code, e.reason, e.message,
      e.url, e.path
    v.details, v.mt = e.details, getmetatable(e) ~= nil
  end
  v.text = tostring(e)
  log.info("seen %s", json.encode(v))
end

local function cm(name, extra)
  local o = { apiVersion = "v1", kind = "ConfigMap",
    metadata = { name = name, namespace = "default" }, data = { a = "1" } }
  for k, v in pairs(extra or {}) do o[k] = v end
  return o
end

local CASES = {}

function CASES.nokind()
  seen(pcall(kube.get, "NoSuchKind", "x", "default"))
end

function CASES.immutable()
  -- a Service's clusterIP is immutable: 422 Invalid with its causes
  kube.apply { apiVersion = "v1", kind = "Service",
    metadata = { name = "s", namespace = "default" },
    spec = { clusterIP = "10.152.183.50", ports = { { port = 80 } } } }
  seen(pcall(kube.apply, { apiVersion = "v1", kind = "Service",
    metadata = { name = "s", namespace = "default" },
    spec = { clusterIP = "10.152.183.51", ports = { { port = 80 } } } }))
end

function CASES.fetch404()
  seen(pcall(net.fetch, "https://example.test/missing"))
end

function CASES.readdir()
  seen(pcall(config.read, "state:dir"))
end

function CASES.timeout()
  seen(pcall(kube.wait, "ConfigMap", "hello", "default",
    { condition = "Ready", timeout = 5 }))
end

function CASES.badlabels()
  seen(pcall(kube.apply, cm("x", { metadata = { name = "x",
    namespace = "default", labels = "oops" } })))
end

function CASES.reraise()
  local ok, e = pcall(kube.get, "NoSuchKind", "x", "default")
  error(e)
end

--- The retry pattern of docs/reference.md, around an apply that fails
--- with 409 Conflict (a fault) and with 500.
function CASES.retry409()
  seen(pcall(retry, function() return kube.apply(cm("r")) end,
    { attempts = 3, delay = 0.1,
      retry_on = function(err) return err.code == 409 end }))
end

return {
  version = "1.1.0", from = "1.0.0",
  permissions = { "kube:default", "net:example.test" },
  params = { case = {} },
  detect = function() return "1.0.0" end,
  upgrade = function(ctx) CASES[ctx.params.case]() end,
}

-- Errors a hook can inspect (docs/reference.md, "Errors"): kube, net,
-- config and wait failures reach the hook as values with code, reason,
-- message, details, url or path; tostring(err) is the message; error(err)
-- re-raises it; no message carries an engine position.
local t = require "uphook.test"
local hookerror = require "uphook.core.hookerror"
local json = require "uphook.c.json"

local function run(case, extra)
  local o = { addon = "addons/errs", cluster = "fixtures_hello.yaml" }
  local setup
  for k, v in pairs(extra or {}) do
    if k == "setup" then setup = v else o[k] = v end
  end
  local e = t.env(o)
  if setup then setup(e) end
  local r = e:upgrade { "--case", case }
  local seen
  for _, l in ipairs(r.log) do
    local j = l:match("^seen (.*)$")
    if j then seen = json.decode(j) end
  end
  return seen, r, e
end

t.case("a kube error is a value: code, reason, message; tostring is the message", function()
  local s, r = run("nokind")
  t.eq(r.code, 0, r.error)
  t.eq(s.type, "table")
  t.eq(s.code, 404)
  t.eq(s.reason, "NotFound")
  t.eq(s.message, 'the server doesn\'t have a resource type "NoSuchKind"')
  t.eq(s.text, s.message)
  t.ok(s.mt, "the value carries the uphook.error metatable")
end)

t.case("422 Invalid carries the causes list, as the API server's details", function()
  local s, r = run("immutable")
  t.eq(r.code, 0, r.error)
  t.eq(s.code, 422)
  t.eq(s.reason, "Invalid")
  t.match(s.message, '^Service "s" is invalid: ')
  t.eq(s.details.name, "s")
  t.eq(s.details.kind, "Service")
  t.eq(#s.details.causes, 1)
  t.eq(s.details.causes[1].field, "spec.clusterIPs[0]")
  t.eq(s.details.causes[1].reason, "FieldValueInvalid")
  t.match(s.details.causes[1].message, "^Invalid value: ")
end)

t.case("a net error names the URL and carries the HTTP status", function()
  local s, r = run("fetch404", { downloads = {
    ["https://example.test/missing"] = { status = 404 } } })
  t.eq(r.code, 0, r.error)
  t.eq(s.reason, "HTTPError")
  t.eq(s.code, 404)
  t.eq(s.url, "https://example.test/missing")
  t.match(s.message, "https://example.test/missing: HTTP 404")
end)

t.case("a config error names the file", function()
  local s, r = run("readdir", { files = { ["state:dir/x"] = "x" } })
  t.eq(r.code, 0, r.error)
  t.eq(s.type, "table")
  t.eq(s.reason, "IOError")
  t.eq(s.path, "state:dir")
  t.match(s.message, "dir")
  t.eq(s.code, nil)
end)

t.case("a wait that times out is a value with reason Timeout", function()
  local s, r = run("timeout")
  t.eq(r.code, 0, r.error)
  t.eq(s.reason, "Timeout")
  t.match(s.message, "^timeout after 5s waiting for ConfigMap default/hello to be Ready")
end)

t.case("error(err) re-raises it: the run fails with its message", function()
  local _, r = run("reraise")
  t.eq(r.code, 4)
  t.eq(r.error, 'upgrade failed: the server doesn\'t have a resource type "NoSuchKind"')
end)

t.case("retry_on = function(err) return err.code == 409 end matches a Conflict", function()
  local s, r = run("retry409", { setup = function(e)
    e:fail { on = "kube.apply", kind = "ConfigMap", name = "r", code = 409,
             reason = "Conflict", error = 'configmaps "r" conflict',
             times = 3 }
  end })
  t.eq(r.code, 0, r.error)
  t.eq(s.ok, false)
  t.eq(s.code, 409)
  t.eq(s.reason, "Conflict")
  t.eq(s.message, 'configmaps "r" conflict (failed after 3 attempts)')
  local warns = 0
  for _, l in ipairs(r.log) do if l:match("^attempt %d of 3 failed") then warns = warns + 1 end end
  t.eq(warns, 2, "two retries announced")
end)

t.case("retry_on that does not match a 500 stops at the first attempt", function()
  local s, r = run("retry409", { setup = function(e)
    e:fail { on = "kube.apply", kind = "ConfigMap", name = "r", error = "etcd is down" }
  end })
  t.eq(r.code, 0, r.error)
  t.eq(s.code, 500)
  t.eq(s.message, "etcd is down (failed after 1 attempt)")
end)

t.case("no engine position reaches the hook: a bad argument reads as one", function()
  local s, r = run("badlabels")
  t.eq(r.code, 0, r.error)
  t.eq(s.type, "string")
  t.eq(s.text, "bad argument #1 to 'apply' (object #1 (ConfigMap x): metadata.labels must be a map, got string)")
end)

t.case("hookerror.wire: engine positions are removed and the primitive named", function()
  t.eq(hookerror.wire("lua/engine/prims.lua:426: attempt to index a nil value", "kube.apply"),
    "kube.apply: attempt to index a nil value")
  t.eq(hookerror.wire("@lua/backend/mock/cluster.lua:9: lua/backend/live.lua:3: x", "kube.get"), "kube.get: x")
  t.eq(hookerror.wire("permission denied: x", "kube.apply"), "permission denied: x")
  local w = hookerror.wire(setmetatable({ code = 409, reason = "Conflict",
    message = "lua/backend/live.lua:1: m", details = { causes = { { field = "a" } } },
    extra = function() end }, { __tostring = function() return "m" end }), "kube.apply")
  t.eq(w, { code = 409, reason = "Conflict", message = "m",
    details = { causes = { { field = "a" } } } })
  t.eq(hookerror.message({ message = "lua/engine/phases.lua:12: boom" }), "boom")
end)

-- The live backend (lua/backend/live.lua over uphook.c.kube) against the fake API
-- server of tests/fakes. tests/cli/live_test.sh starts the server and sets
-- UPHOOK_FAKE_DIR; without it (or without uphook.c.kube) every case skips.
local t = require "uphook.test"
t.serial()   -- the cases share one fake API server

local DIR = os.getenv("UPHOOK_FAKE_DIR")
local okk, kube = pcall(require, "uphook.c.kube")
local why = not DIR and "UPHOOK_FAKE_DIR is not set (run tests/cli/live_test.sh)"
  or not okk and "uphook.c.kube is not registered in this build"
local case = why and function(name) t.skip(name, why) end or t.case
if why then
  case("live backend")
  return
end

local live = require "uphook.backend.live"
local json = require "uphook.c.json"
local rollout = require("uphook.engine.prims").rolled_out
local C = { json = json, kube = kube }

local function connect(kc, extra)
  local o = { kubeconfig = kc or (DIR .. "/kubeconfig"), timeout = 60 }
  for k, v in pairs(extra or {}) do o[k] = v end
  return live.connect(o, C)
end
local B = assert(connect())

-- the fake's /_fake/ control API (answered before authentication)
local function ctl(method, path, body)
  local st, text = B.client:request(method, "/_fake/" .. path,
    body and json.encode(body) or nil, "application/json", 10)
  assert(st == 200, tostring(text))
  return json.decode(text)
end
local function fault(f) ctl("POST", "faults", f) end

-- The fake notes a request in its log once the answer is sent
-- (tests/fakes/apiserver_control.py note_request), so the client can ask
-- for the log before its last request is in it: wait, bounded, until
-- `done(log)` holds, and return the log.
local function request_log(done)
  local log
  for _ = 1, 200 do
    log = ctl("GET", "requests").log
    if done(log) then break end
    B:sleep(0.025)
  end
  return log
end
local function paths_seen(log, ...)
  local want = {}
  for _, p in ipairs { ... } do want[p] = true end
  for _, r in ipairs(log) do
    for p in pairs(want) do
      if r.path:sub(-#p) == p then want[p] = nil end
    end
  end
  return next(want) == nil
end
local function reset_faults() ctl("DELETE", "faults") end

local function write(path, text)
  local f = assert(io.open(path, "w"))
  f:write(text)
  f:close()
end

local function read(path)
  local f = assert(io.open(path))
  local s = f:read("a")
  f:close()
  return s
end

local function cm(name, data, ns)
  return { apiVersion = "v1", kind = "ConfigMap",
    metadata = { name = name, namespace = ns or "default",
      labels = { app = "live-test" } }, data = data }
end

--- Reads -------------------------------------------------------------------

case("get, list and namespaced read the server", function()
  t.eq(B:get("Namespace", "kube-system").metadata.name, "kube-system")
  t.eq(B:get("v1/Namespace", "kube-system").kind, "Namespace")
  t.eq(B:get("ConfigMap", "absent", "default"), nil)
  local nodes = B:list("Node")
  t.ok(#nodes >= 1, "a node")
  t.eq(nodes[1].kind, "Node")
  t.eq(nodes[1].apiVersion, "v1")
  t.eq(B:namespaced("apps/v1", "Deployment"), true)
  t.eq(B:namespaced("v1", "Node"), false)
  t.eq(B:namespaced("example.com/v1", "Nothing"), nil)
end)

case("list filters by namespace and labels", function()
  B:apply(cm("l1", { a = "1" }), {})
  B:apply(cm("l2", { a = "2" }, "kube-system"), {})
  local mine = B:list("ConfigMap", { labels = { app = "live-test" } })
  local names = {}
  for _, o in ipairs(mine) do names[#names + 1] = o.metadata.name end
  t.ok(#mine >= 2, "two labelled ConfigMaps, got " .. #mine)
  t.eq(#B:list("ConfigMap", { namespace = "kube-system",
    labels = { app = "live-test" } }), 1)
  t.eq(#B:list("ConfigMap", { labels = { app = "nobody" } }), 0)
  -- metadata-only (a PartialObjectMetadataList): the kind's apiVersion
  -- and kind, the metadata, no data
  local meta = B:list("ConfigMap", { namespace = "kube-system",
    labels = { app = "live-test" }, metadata = true })
  t.eq(#meta, 1)
  t.eq({ meta[1].apiVersion, meta[1].kind, meta[1].metadata.name,
    meta[1].data }, { "v1", "ConfigMap", "l2", nil })
  t.eq(meta[1].metadata.labels.app, "live-test")
  B:delete("ConfigMap", "l1", "default")
  B:delete("ConfigMap", "l2", "kube-system")
end)

case("set_managed_fields asks for the metadata alone, one or many at once", function()
  local a = B:apply(cm("smf-1", { k = "1" }), {})
  local b = B:apply(cm("smf-2", { k = "2" }), {})
  request_log(function(log) return paths_seen(log, "/smf-1", "/smf-2") end)
  ctl("DELETE", "requests")
  local one = B:set_managed_fields("ConfigMap", "smf-1", "default",
    a.metadata.managedFields, a.metadata.resourceVersion)
  local many = B:set_managed_fields_many {
    { kind = "ConfigMap", name = "smf-1", namespace = "default",
      managed_fields = a.metadata.managedFields },
    { kind = "ConfigMap", name = "smf-2", namespace = "default",
      managed_fields = b.metadata.managedFields,
      resource_version = b.metadata.resourceVersion } }
  t.eq({ one.apiVersion, one.kind, one.data, one.metadata.name },
    { "v1", "ConfigMap", nil, "smf-1" })
  t.eq(#many, 2)
  for i, r in ipairs(many) do
    t.ok(r.ok, tostring(r.error))
    t.eq({ r.stored.kind, r.stored.data, r.stored.metadata.name },
      { "ConfigMap", nil, "smf-" .. i })
  end
  local log = request_log(function(l) return #l >= 3 end)
  t.eq(#log, 3)
  for _, r in ipairs(log) do
    t.eq(r.method, "PATCH")
    t.match(r.accept, "^application/json;as=PartialObjectMetadata;g=meta%.k8s%.io;v=v1,")
  end
  t.eq(B:get("ConfigMap", "smf-2", "default").data, { k = "2" })
  B:delete("ConfigMap", "smf-1", "default")
  B:delete("ConfigMap", "smf-2", "default")
end)

case("unknown kinds raise the mock's error tables", function()
  local ok, e = pcall(B.get, B, "Frobnicator", "x")
  t.eq(ok, false)
  t.eq(e.code, 404)
  t.eq(e.message, 'the server doesn\'t have a resource type "Frobnicator"')
  ok, e = pcall(B.get, B, "apps/v9/Deployment", "x", "default")
  t.eq(e.message, 'no matches for kind "Deployment" in version "apps/v9"')
end)

--- Writes ------------------------------------------------------------------

case("apply: created, unchanged, configured; dry run changes nothing",
function()
  local o, a = B:apply(cm("ssa", { k = "1" }), {})
  t.eq(a, "created")
  t.eq(o.data.k, "1")
  local _, a2 = B:apply(cm("ssa", { k = "1" }), {})
  t.eq(a2, "unchanged")
  local d, a3 = B:apply(cm("ssa", { k = "2" }), { dry_run = true })
  t.eq(a3, "configured")
  t.eq(d.data.k, "2")
  t.eq(B:get("ConfigMap", "ssa", "default").data.k, "1")
  local _, a4 = B:apply(cm("ssa", { k = "1" }), { dry_run = true })
  t.eq(a4, "unchanged")
  local _, a5 = B:apply(cm("ssa-new", { k = "1" }), { dry_run = true })
  t.eq(a5, "created")
  t.eq(B:get("ConfigMap", "ssa-new", "default"), nil)
  local _, a6 = B:apply(cm("ssa", { k = "3" }), {})
  t.eq(a6, "configured")
  local got = B:get("ConfigMap", "ssa", "default")
  t.eq(got.data.k, "3")
  local found
  for _, mf in ipairs(got.metadata.managedFields or {}) do
    if mf.manager == "uphook" then found = true end
  end
  t.ok(found, "fieldManager uphook")
  t.eq(B:delete("ConfigMap", "ssa", "default"), true)
  t.eq(B:delete("ConfigMap", "ssa", "default"), false)
end)

case("create, replace and their 409s", function()
  local o = B:create(cm("cr", { v = "1" }))
  t.eq(o.data.v, "1")
  local ok, e = pcall(B.create, B, cm("cr", { v = "1" }))
  t.eq(ok, false)
  t.eq(e.code, 409)
  t.eq(e.reason, "AlreadyExists")
  t.eq(e.message, 'configmaps "cr" already exists')
  local new = cm("cr", { v = "2" })
  new.metadata.resourceVersion = o.metadata.resourceVersion
  t.eq(B:replace(new).data.v, "2")
  ok, e = pcall(B.replace, B, new)       -- stale resourceVersion
  t.eq(e.code, 409)
  t.eq(e.reason, "Conflict")
  t.match(e.message, 'configmaps "cr"')
  B:delete("ConfigMap", "cr", "default")
end)

case("a CRD applied in the same run makes its kind usable", function()
  local crd = { apiVersion = "apiextensions.k8s.io/v1",
    kind = "CustomResourceDefinition",
    metadata = { name = "widgets.example.com" },
    spec = { group = "example.com", scope = "Namespaced",
      names = { plural = "widgets", singular = "widget", kind = "Widget",
                listKind = "WidgetList" },
      versions = { { name = "v1", served = true, storage = true,
        schema = { openAPIV3Schema = { type = "object",
          ["x-kubernetes-preserve-unknown-fields"] = true } } } } } }
  t.eq(B:namespaced("example.com/v1", "Widget"), nil)
  local function serves(v)
    for _, x in ipairs(B:api_versions()) do if x == v then return true end end
    return false
  end
  t.ok(serves("v1/ConfigMap") and serves("apps/v1") and
       serves("apps/v1/Deployment"), "discovery's versions and kinds")
  t.ok(not serves("example.com/v1/Widget"))
  local before = B.discoveries
  B:apply(crd, {})
  local _, a = B:apply({ apiVersion = "example.com/v1", kind = "Widget",
    metadata = { name = "w1", namespace = "default" }, spec = { size = 3 } },
    {})
  t.eq(a, "created")
  t.ok(B.discoveries > before, "discovery ran again")
  t.eq(B:get("Widget", "w1", "default").spec.size, 3)
  t.eq(#B:list("example.com/v1/Widget"), 1)
  t.ok(serves("example.com/v1") and serves("example.com/v1/Widget"),
       "api_versions: discovered again after a CRD was written")
  B:delete("CustomResourceDefinition", "widgets.example.com")
end)

--- Watch -------------------------------------------------------------------

local function deployment(name, image)
  return { apiVersion = "apps/v1", kind = "Deployment",
    metadata = { name = name, namespace = "default" },
    spec = { replicas = 2, selector = { matchLabels = { app = name } },
      template = { metadata = { labels = { app = name } },
        spec = { containers = { { name = "c", image = image } } } } } }
end

local function wait_rollout(name, timeout)
  local seen = 0
  local ok, last = B:watch("Deployment", name, "default", function(o)
    seen = seen + 1
    return (rollout(o))
  end, timeout)
  return ok, last, seen
end

case("watch follows a rollout to completion (the fake's controller)",
function()
  B:apply(deployment("web", "nginx:1"), {})
  local ok, last, seen = wait_rollout("web", 20)
  t.ok(ok, "rolled out")
  t.ok(seen >= 1)
  t.eq(last.status.updatedReplicas, 2)
  -- the controller holds the change until the watch has seen it, so the
  -- watch sees both the change and its completion on a machine of any speed
  local web = { kind = "Deployment", name = "web", namespace = "default" }
  ctl("POST", "stall", web)
  B:apply(deployment("web", "nginx:2"), {})
  seen = 0
  ok, last = B:watch("Deployment", "web", "default", function(o)
    seen = seen + 1
    if seen == 1 then ctl("POST", "unstall", web) end
    return (rollout(o))
  end, 20)
  t.ok(ok, "rolled out again")
  t.eq(last.spec.template.spec.containers[1].image, "nginx:2")
  t.ok(seen >= 2, "saw the change and its completion, saw " .. seen)
end)

case("watch relists on 410 Gone (event and HTTP) and on a cut stream",
function()
  ctl("POST", "config", { rolloutDelay = 0.6 })
  for _, mode in ipairs { "event", "http" } do
    ctl("POST", "gone", { mode = mode })
    B:apply(deployment("web", "nginx:gone-" .. mode), {})
    local ok = wait_rollout("web", 20)
    t.ok(ok, "rolled out after a 410 (" .. mode .. ")")
  end
  fault { action = "cut-watch", path = "/deployments$", events = 0,
          count = 2 }
  B:apply(deployment("web", "nginx:cut"), {})
  t.ok((wait_rollout("web", 20)), "rolled out after cut streams")
  ctl("POST", "config", { rolloutDelay = 0.2 })
  reset_faults()
end)

case("a slow watch still delivers; a stalled one times out", function()
  fault { action = "slow-watch", delay = 0.3, path = "/deployments$" }
  B:apply(deployment("web", "nginx:slow"), {})
  t.ok((wait_rollout("web", 20)), "rolled out through a slow watch")
  reset_faults()
  ctl("POST", "stall", { kind = "Deployment", name = "web",
                         namespace = "default" })
  B:apply(deployment("web", "nginx:stalled"), {})
  local t0 = B:now()
  local ok, last = wait_rollout("web", 1.5)
  local took = B:now() - t0
  t.eq(ok, false)
  t.ok(last ~= nil, "the last object")
  t.ok(took >= 1.4 and took < 5, "timed out on time: " .. took)
  ctl("POST", "unstall", { kind = "Deployment", name = "web",
                           namespace = "default" })
  t.ok((wait_rollout("web", 20)), "finished once unstalled")
end)

case("watch of an absent object sees nil, then its creation", function()
  B:delete("ConfigMap", "later", "default")
  local calls = {}
  local ok = B:watch("ConfigMap", "later", "default", function(o)
    calls[#calls + 1] = o and o.data.x or "nil"
    if o == nil and #calls == 1 then B:create(cm("later", { x = "1" })) end
    return o ~= nil
  end, 10)
  t.ok(ok)
  t.eq(calls, { "nil", "1" })
  B:delete("ConfigMap", "later", "default")
end)

--- Faults ------------------------------------------------------------------

case("429 and 500 are retried; a persistent 500 is reported", function()
  fault { status = 429, method = "GET", path = "/configmaps/kube-root",
          count = 2, retryAfter = 0 }
  fault { status = 500, method = "GET", path = "/configmaps/kube-root",
          count = 1 }
  B:apply(cm("kube-root", { a = "b" }), {})
  t.eq(B:get("ConfigMap", "kube-root", "default").data.a, "b")
  fault { status = 500, method = "PATCH", path = "/configmaps/kube-root",
          count = -1 }
  local ok, e = pcall(B.apply, B, cm("kube-root", { a = "c" }), {})
  t.eq(ok, false)
  t.eq(e.code, 500)
  t.match(e.message, "injected fault")
  reset_faults()
  fault { status = 409, method = "PATCH", path = "/configmaps/kube-root",
          reason = "Conflict", count = 1, message =
          'Operation cannot be fulfilled on configmaps "kube-root": busy' }
  ok, e = pcall(B.apply, B, cm("kube-root", { a = "c" }), {})
  t.eq(e.code, 409)
  t.eq(e.message, 'Operation cannot be fulfilled on configmaps "kube-root": busy')
  reset_faults()
  B:delete("ConfigMap", "kube-root", "default")
end)

case("undo retries the server's 409 Conflict on a stale write", function()
  local rollback = require "uphook.engine.rollback"
  B:apply(cm("undo-me", { level = "new" }), {})
  local rec = { op = "kube", prior = cm("undo-me", { level = "old" }),
    ref = { apiVersion = "v1", kind = "ConfigMap", name = "undo-me",
            namespace = "default" } }
  fault { status = 409, method = "PUT", path = "/configmaps/undo-me$",
          reason = "Conflict", count = 2, message =
          'Operation cannot be fulfilled on configmaps "undo-me": stale' }
  local ok, problems = rollback.undo({ backend = B }, { rec })
  t.eq(ok, true, table.concat(problems, "; "))
  t.eq(B:get("ConfigMap", "undo-me", "default").data.level, "old")
  fault { status = 409, method = "PUT", path = "/configmaps/undo-me$",
          reason = "Conflict", count = -1, message =
          'Operation cannot be fulfilled on configmaps "undo-me": stale' }
  B:apply(cm("undo-me", { level = "new" }), {})
  ok, problems = rollback.undo({ backend = B }, { rec })
  t.eq(ok, false)
  t.match(problems[1], 'ConfigMap default/undo%-me: Operation cannot be')
  reset_faults()
  B:delete("ConfigMap", "undo-me", "default")
end)

case("dropped connections: retried once, reported naming the server",
function()
  fault { action = "drop", method = "GET", path = "/namespaces/default$",
          count = 1 }
  t.eq(B:get("Namespace", "default").metadata.name, "default")
  fault { action = "drop", method = "GET", path = "/namespaces/default$",
          count = -1 }
  local ok, e = pcall(B.get, B, "Namespace", "default")
  t.eq(ok, false)
  t.match(e, B:server():gsub("%p", "%%%0"))
  t.match(e, "/api/v1/namespaces/default")
  reset_faults()
end)

case("a request that outlives its timeout names the server", function()
  local b2 = assert(connect(nil, { request_timeout = 0.5 }))
  b2.request_timeout = 0.5
  fault { action = "delay", delay = 3, method = "GET",
          path = "/namespaces/kube-public$", count = -1 }
  local t0 = B:now()
  local ok, e = pcall(b2.get, b2, "Namespace", "kube-public")
  t.eq(ok, false)
  t.match(e, "no answer within %d+%.%d s")
  t.ok(B:now() - t0 < 2.9, "the timeout bounds it")
  reset_faults()
end)

--- Credentials ---------------------------------------------------------------

local function kubeconfig(path, cluster, user)
  write(path, table.concat({ "apiVersion: v1", "kind: Config",
    "clusters:", "- name: c", "  cluster:", cluster, "contexts:",
    "- name: x", "  context:", "    cluster: c", "    user: u",
    "current-context: x", "users:", "- name: u", "  user:", user }, "\n")
    .. "\n")
  return path
end

local function server_lines(ca)
  return "    server: " .. B:server() .. "\n" .. (ca or
    ("    certificate-authority: ca.crt"))
end

case("kubeconfig variants: token, tokenFile, basic auth, cert files",
function()
  local d = DIR .. "/variants"
  os.execute("mkdir -p " .. d .. " && cp " .. DIR .. "/ca.crt " .. DIR
    .. "/client.crt " .. DIR .. "/client.key " .. d)
  write(d .. "/token.txt", "sekrit-token\n")
  local cases = {
    token = "    token: sekrit-token",
    tokenfile = "    tokenFile: token.txt",
    basic = "    username: alice\n    password: pw-secret",
    files = "    client-certificate: client.crt\n    client-key: client.key",
  }
  for name, user in pairs(cases) do
    local b = assert(connect(kubeconfig(d .. "/" .. name, server_lines(),
      user)))
    t.eq(b:get("Namespace", "default").metadata.name, "default")
  end
  local bad = assert(connect(kubeconfig(d .. "/badtoken", server_lines(),
    "    token: wrong-secret-value")))
  local ok, e = pcall(bad.get, bad, "Namespace", "default")
  t.eq(ok, false)
  t.eq(e.code, 401)
  t.ok(not tostring(e.message):find("wrong%-secret"), "no token in errors")
end)

case("insecure-skip-tls-verify, and an unknown CA is refused", function()
  local d = DIR .. "/variants"
  local user = "    token: sekrit-token"
  local b = assert(connect(kubeconfig(d .. "/insecure",
    server_lines("    insecure-skip-tls-verify: true"), user)))
  t.eq(b:get("Namespace", "default").metadata.name, "default")
  write(d .. "/other-ca.crt", read("/etc/ssl/certs/ca-certificates.crt"))
  b = assert(connect(kubeconfig(d .. "/wrongca",
    server_lines("    certificate-authority: other-ca.crt"), user)))
  local ok, e = pcall(b.get, b, "Namespace", "default")
  t.eq(ok, false)
  t.match(e, "cannot reach the API server")
  t.match(e, B:server():gsub("%p", "%%%0"))
end)

case("kubeconfig errors name the file and the field, not the value",
function()
  local d = DIR .. "/variants"
  local b, e = connect(d .. "/nope")
  t.eq(b, nil)
  t.match(e, "variants/nope")
  write(d .. "/bad.yaml", "clusters: [\n  - name: : :\n")
  b, e = connect(d .. "/bad.yaml")
  t.eq(b, nil)
  t.match(e, "bad%.yaml: invalid YAML at line")
  b, e = connect(kubeconfig(d .. "/bad64", server_lines(),
    "    client-certificate-data: SECRET!!notbase64\n"
    .. "    client-key-data: SECRET!!notbase64"))
  t.eq(b, nil)
  t.match(e, "users%[u%]%.client%-certificate%-data: not valid base64")
  t.ok(not e:find("SECRET"), "no value in the message: " .. e)
  b, e = connect(kubeconfig(d .. "/nokey", server_lines(),
    "    client-certificate: client.crt"))
  t.match(e, "users%[u%]%.client%-key: missing")
  b, e = connect(kubeconfig(d .. "/notokenfile", server_lines(),
    "    tokenFile: missing.txt"))
  t.match(e, "users%[u%]%.tokenFile: cannot read .*missing%.txt")
end)

--- Services ----------------------------------------------------------------

case("restart runs snapctl restart (a stand-in from UPHOOK_SNAPCTL)",
function()
  local log = DIR .. "/snapctl.log"
  local stand = DIR .. "/snapctl"
  write(stand, "#!/bin/sh\necho \"$@\" >> " .. log .. "\n"
    .. "[ \"$2\" = microk8s.daemon-broken ] && exit 3\n"
    .. "[ \"$2\" = microk8s.daemon-gone ] && exit 127\nexit 0\n")
  os.execute("chmod +x " .. stand .. "; rm -f " .. log)
  local b = assert(connect(nil, { snapctl = stand }))
  t.eq(b:restart("kubelite"), true)
  t.eq(b:restart("microk8s.daemon-containerd"), true)
  t.eq(read(log), "restart microk8s.daemon-kubelite\n"
    .. "restart microk8s.daemon-containerd\n")
  t.err(function() b:restart("microk8s.daemon-broken") end,
    "exited with status 3")
  t.err(function() b:restart("microk8s.daemon-gone") end,
    "cannot run " .. stand:gsub("%p", "%%%0") .. ": exit status 127")
  local b2 = assert(connect(nil, { snapctl = "/nonexistent/snapctl" }))
  t.err(function() b2:restart("kubelite") end, "cannot run /nonexistent")
end)

case("now is monotonic and sleep really sleeps", function()
  local t0 = B:now()
  B:sleep(0.1)
  local d = B:now() - t0
  t.ok(d >= 0.1 and d < 1, "slept " .. d)
end)

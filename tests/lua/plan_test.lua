-- The plan's diffs, escaping and redaction (lua/core/fielddiff.lua,
-- lua/core/textdiff.lua, lua/core/escape.lua, lua/core/redact.lua, lua/engine/plantext.lua).
local t = require "uphook.test"
local plan = require "uphook.engine.plan"
local plantext = require "uphook.engine.plantext"
local fielddiff = require "uphook.core.fielddiff"
local textdiff = require "uphook.core.textdiff"
local escape = require "uphook.core.escape"
local hash = require "uphook.c.hash"
local json = require "uphook.c.json"
local yaml = require "uphook.c.yaml"

local function paths(d)
  local out = {}
  for _, c in ipairs(d) do out[#out + 1] = c.path end
  return out
end

local function render(entries, opts)
  opts = opts or {}
  opts.null = yaml.null
  return plantext.render(entries, opts)
end

local function kube_entry(kind, a, b)
  return { type = "kube", action = "configured", kind = kind, name = "x",
    step = 1, diff = fielddiff.diff(a, b, { null = yaml.null }) }
end

-- diffs by meaning -----------------------------------------------------------

t.case("RBAC rules are matched by API groups and resources, not by index", function()
  local a = { rules = {
    { apiGroups = { "" }, resources = { "pods" }, verbs = { "get" } },
    { apiGroups = { "apps" }, resources = { "deployments" }, verbs = { "get", "create" } } } }
  local b = { rules = {
    { apiGroups = { "" }, resources = { "events" }, verbs = { "create" } },
    { apiGroups = { "" }, resources = { "pods" }, verbs = { "get" } },
    { apiGroups = { "apps" }, resources = { "deployments" }, verbs = { "get", "list" } } } }
  local d = fielddiff.diff(a, b)
  t.eq(paths(d), { "rules[apps: deployments].verbs", "rules[events]" })
  local text = render({ kube_entry("ClusterRole", a, b) })
  t.match(text, 'rules%[apps: deployments%]%.verbs: %-"create" %+"list"')
  t.ok(not text:find("rules%[3%]"), text)
end)

t.case("containers, env and ports by their keys; a renamed container is compared with its old self", function()
  local function dep(cname, image, env, ports)
    return { spec = { template = { spec = { containers = {
      { name = "sidecar", image = "s:1" },
      { name = cname, image = image, env = env, ports = ports } } } } } }
  end
  local a = dep("app", "app:1", { { name = "A", value = "1" }, { name = "B", value = "2" } },
    { { containerPort = 80 }, { containerPort = 9090, name = "metrics" } })
  local b = dep("app-server", "app:2", { { name = "B", value = "3" }, { name = "A", value = "1" } },
    { { containerPort = 9090, name = "metrics" }, { containerPort = 80 } })
  local d = fielddiff.diff(a, b)
  t.eq(paths(d), {
    "spec.template.spec.containers[app-server].env[B].value",
    "spec.template.spec.containers[app-server].image",
    "spec.template.spec.containers[app-server].name",
  })
  t.eq(d[1].old, "2"); t.eq(d[1].new, "3")
end)

t.case("lists without keys fall back to positions; duplicate keys too", function()
  local d = fielddiff.diff({ x = { { a = 1 }, { a = 2 } } }, { x = { { a = 1 }, { a = 3 } } })
  t.eq(paths(d), { "x[2].a" })
  d = fielddiff.diff({ x = { { name = "n", v = 1 }, { name = "n", v = 2 } } },
                     { x = { { name = "n", v = 1 }, { name = "n", v = 3 } } })
  t.eq(paths(d), { "x[2].v" })
end)

t.case("labels and annotations are diffed per key, server fields and status ignored", function()
  local d = fielddiff.diff({ metadata = { uid = "1", generation = 1 }, status = { a = 1 } },
    { metadata = { uid = "2", generation = 2, labels = { a = "1", b = "2" } }, status = { a = 2 } })
  t.eq(paths(d), { "metadata.labels.a", "metadata.labels.b" })
end)

t.case("a diff's values are JSON values: absent is absent, null is null", function()
  local d = fielddiff.diff({ a = "x", n = yaml.null, l = yaml.array { 1 } },
                           { b = { c = 1 }, n = "set", l = yaml.array { 1, 2 } }, { null = yaml.null })
  local got = json.decode(json.encode(d))
  t.eq(got[1], { path = "a", old = "x" })
  t.eq(got[2], { path = "b", new = { c = 1 } })
  t.eq(got[3].path, "l"); t.eq(got[3].new, { 1, 2 })
  t.eq(got[4], { path = "n", old = json.null, new = "set" })
  t.ok(not json.encode(d):find("absent"), "no display strings in JSON")
end)

t.case("a multi-line string (a Corefile) is a line diff of the changed lines", function()
  local old = ".:53 {\n    errors\n    health\n    forward . /etc/resolv.conf\n    cache 30\n}\n"
  local new = old:gsub("forward %. /etc/resolv.conf", "forward . 8.8.8.8 1.1.1.1")
  local text = render({ kube_entry("ConfigMap", { data = { Corefile = old } }, { data = { Corefile = new } }) })
  t.match(text, "\n      data%.Corefile:\n        @@ %-1,6 %+1,6 @@\n         %.:53 {\n")
  t.match(text, "\n        %-    forward %. /etc/resolv%.conf\n        %+    forward %. 8%.8%.8%.8 1%.1%.1%.1\n")
  t.ok(not text:find("\\n", 1, true), "no escaped newlines: " .. text)
end)

t.case("a long value is shown around its difference, not cut before it", function()
  local a = ("x"):rep(300) .. "OLD" .. ("y"):rep(50)
  local b = ("x"):rep(300) .. "NEW" .. ("y"):rep(50)
  local text = render({ kube_entry("ConfigMap", { data = { k = a } }, { data = { k = b } }) })
  t.match(text, 'data%.k: "%.%.%.x+OLDy+%.%.%." %-> "%.%.%.x+NEWy+%.%.%."')
end)

t.case("a large added subtree is listed field by field, bounded", function()
  local probe = { httpGet = { path = "/livez", port = 8080, scheme = "HTTP" },
    initialDelaySeconds = 10, periodSeconds = 10, timeoutSeconds = 15,
    failureThreshold = 8, successThreshold = 1, terminationGracePeriodSeconds = 30 }
  local text = render({ kube_entry("Deployment", { spec = {} }, { spec = { probe = probe } }) })
  t.match(text, "spec%.probe: added %(9 fields%)")
  t.match(text, '\n        %+ httpGet%.path: "/livez"\n')
  local big = {}
  for i = 1, 40 do big["k" .. string.format("%02d", i)] = i end
  text = render({ kube_entry("ConfigMap", {}, { data = big }) })
  t.match(text, "data: added %(40 fields%)")
  t.match(text, "%.%.%. and 28 more")
end)

local function crd(desc, extra)
  local props = { spec = { type = "object", description = desc,
    properties = { size = { type = "string", description = desc } } } }
  for k, v in pairs(extra or {}) do props.spec.properties[k] = v end
  return { kind = "CustomResourceDefinition", spec = { versions = {
    { name = "v1", schema = { openAPIV3Schema = { type = "object", properties = props } } } } } }
end

t.case("CRD schema churn is one line per version; --full shows it all", function()
  local a, b = crd("old words"), crd("new words")
  local e = kube_entry("CustomResourceDefinition", a, b)
  local text = render({ e })
  t.match(text, "schema of v1 changed: 2 changes, descriptions only")
  t.ok(not text:find("old words", 1, true), text)
  local full = render({ e }, { full = true })
  t.match(full, 'openAPIV3Schema%.properties%.spec%.description: "old words" %-> "new words"')
  local c = crd("new words", { count = { type = "integer" } })
  c.spec.versions[1].schema.openAPIV3Schema.properties.spec.properties.size.type = "integer"
  text = render({ kube_entry("CustomResourceDefinition", a, c) })
  t.match(text, "types changed: spec%.size string %-> integer")
  t.match(text, "1 field added %(spec%.count%)")
end)

-- the bounded text diff ---------------------------------------------------------

t.case("unified diff of a changed line with context", function()
  t.eq(textdiff.unified("a\nb\nc\nd\n", "a\nb\nC\nd\n", "args:kubelet"),
    "--- a/args:kubelet\n+++ b/args:kubelet\n@@ -1,4 +1,4 @@\n a\n b\n-c\n+C\n d\n")
  t.eq(textdiff.unified(nil, "x\n", "state:f"),
    "--- a/state:f\n+++ b/state:f\n@@ -1,0 +1,1 @@\n+x\n")
end)

t.case("unified diff: hunks far apart, and a missing final newline", function()
  local a, b = {}, {}
  for i = 1, 30 do a[i] = "l" .. i; b[i] = "l" .. i end
  b[3], b[27] = "X", "Y"
  local lines = textdiff.lines(table.concat(a, "\n") .. "\n", table.concat(b, "\n") .. "\n")
  t.eq(lines[1], "@@ -1,6 +1,6 @@")
  t.eq(lines[9], "@@ -24,7 +24,7 @@")
  local l2 = textdiff.lines("a", "a\n")
  t.eq(l2[#l2], "-" .. textdiff.NO_EOL)
end)

t.case("the text diff agrees with its inputs on 300 random pairs", function()
  math.randomseed(7)
  for _ = 1, 300 do
    local function rnd()
      local s = {}
      for i = 1, math.random(0, 10) do s[i] = string.char(97 + math.random(0, 3)) end
      return table.concat(s, "\n") .. (math.random() < 0.5 and "\n" or "")
    end
    local a, b = rnd(), rnd()
    local ra, rb = {}, {}
    for _, l in ipairs((textdiff.lines(a, b, { context = 1000 }))) do
      local s, x = l:sub(1, 1), l:sub(2)
      if x ~= textdiff.NO_EOL then
        if s == " " or s == "-" then ra[#ra + 1] = x end
        if s == " " or s == "+" then rb[#rb + 1] = x end
      end
    end
    if a ~= b then
      local function norm(s) return (s:gsub("\n?$", "")) end
      t.eq(table.concat(ra, "\n"), norm(a), ("%q -> %q"):format(a, b))
      t.eq(table.concat(rb, "\n"), norm(b), ("%q -> %q"):format(a, b))
    end
  end
end)

t.case("a 2 MiB rewrite is one line: files differ, N bytes", function()
  local a = ("0123456789abcdef\n"):rep(2 * 65536 // 17 * 8)
  local b = ("fedcba9876543210\n"):rep(2 * 65536 // 17 * 8)
  local lines, summary = textdiff.lines(a, b)
  t.eq(#lines, 0)
  t.match(summary, "^files differ: " .. #a .. " %-> " .. #b .. " bytes")
  local u = textdiff.unified(a, b, "state:big")
  t.ok(#u < 200, u)
end)

t.case("one changed line in 2 MiB is shown as a hunk, found in linear time", function()
  local a = ("some configuration line\n"):rep(90000)
  local b = a:sub(1, 1200000) .. "the change\n" .. a:sub(1200001)
  local t0 = os.clock()
  local lines = textdiff.lines(a, b)
  t.ok(os.clock() - t0 < 1, "took " .. (os.clock() - t0) .. " s")
  t.eq(lines[1], "@@ -49998,6 +49998,7 @@")
  t.eq(lines[5], "+the change")
end)

t.case("many scattered changes give up at the edit budget, not after minutes", function()
  local a, b = {}, {}
  for i = 1, 1900 do a[i] = i % 2 == 0 and "x" or "y"; b[i] = i % 3 == 0 and "x" or "y" end
  local t0 = os.clock()
  local lines, summary = textdiff.lines(table.concat(a, "\n"), table.concat(b, "\n"))
  t.ok(os.clock() - t0 < 1)
  t.eq(#lines, 0)
  t.match(summary, "too many changes to show")
end)

t.case("the rendered hunks stop at the output budget", function()
  local a, b = {}, {}
  for i = 1, 1000 do a[i] = "a" .. i; b[i] = "b" .. i end
  local lines = textdiff.lines(table.concat(a, "\n"), table.concat(b, "\n"),
    { edits = 3000, work = 1e7 })
  t.eq(#lines, textdiff.LIMITS.out + 2)
  t.match(lines[#lines], "^%.%.%. %(%d+ more changed lines not shown%)$")
end)

-- escaping ----------------------------------------------------------------------

t.case("escape: control characters, newlines, C1 and invalid UTF-8 are made visible", function()
  t.eq(escape.text("a\27[2Jb"), "a\\x1b[2Jb")
  t.eq(escape.text("one\ntwo\rthree"), "one\\ntwo\\rthree")
  t.eq(escape.text("\0\8\127"), "\\x00\\x08\\x7f")
  t.eq(escape.text("csi\194\155x"), "csi\\u{9b}x")
  t.eq(escape.text("bad\255\128"), "bad\\xff\\x80")
  t.eq(escape.text("caf\195\169 \226\156\147\ttab"), "caf\195\169 \226\156\147\ttab")
end)

t.case("nothing a hook controls reaches the plan text raw", function()
  local evil = "x\27]0;owned\7\n[2] forged step"
  local entries = {
    { type = "step", step = 1, text = evil },
    { type = "log", step = 1, level = "warn", text = evil, phase = "upgrade" },
    { type = "kube", step = 1, action = "configured", kind = "ConfigMap", name = evil,
      diff = fielddiff.diff({ data = { a = "1" } }, { data = { a = evil } }) },
    { type = "file", step = 1, path = "state:f", action = "changed",
      diff = textdiff.unified("a\n", evil .. "\n", "state:f") },
  }
  local text = render(entries, { header = { addon = "a", from = "1", to = "2",
    description = evil, permissions = { { name = "kube:default" } } } })
  t.ok(not text:find("[%z\1-\8\11-\31\127]"), "a control byte in: " .. text)
  local n = 0
  for line in text:gmatch("[^\n]+") do if line:find("forged step") then n = n + 1 end end
  t.eq(select(2, text:gsub("\n%[2%]", "")), 0, "no forged step line")
  t.ok(n > 0)
end)

-- redaction -----------------------------------------------------------------------

local function run_record()
  return { c = { hash = hash }, null = yaml.null, entries = {} }
end

local function b64(s)
  local chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
  return ((s:gsub(".", function(x)
    local r, b = "", x:byte()
    for i = 8, 1, -1 do r = r .. (b % 2 ^ i - b % 2 ^ (i - 1) > 0 and "1" or "0") end
    return r
  end) .. "0000"):gsub("%d%d%d?%d?%d?%d?", function(x)
    if #x < 6 then return "" end
    local c = 0
    for i = 1, 6 do c = c + (x:sub(i, i) == "1" and 2 ^ (6 - i) or 0) end
    return chars:sub(c + 1, c + 1)
  end) .. ({ "", "==", "=" })[#s % 3 + 1])
end

t.case("HMAC-SHA256 is OpenSSL's (a known vector)", function()
  t.eq(hash.hmac_sha256("key-key-key-key-", "The quick brown fox jumps over the lazy dog"),
    "ef0080e4ab69f60ee5c1e0174c8787a7c7cff0e8ce23539807a123c16ba485be")
  t.eq(#hash.random_key(), 32)
  t.ok(hash.random_key() ~= hash.random_key())
end)

t.case("Secret data: redacted in text and JSON, with sizes, keys and an HMAC", function()
  local run = run_record()
  local old = { apiVersion = "v1", kind = "Secret", data = { password = b64("hunter2"), same = b64("x") } }
  local new = { apiVersion = "v1", kind = "Secret", data = { password = b64("correct horse"), same = b64("x"),
    token = b64("tok-123") }, stringData = { plain = "sekrit-plain" } }
  local d = plan.object_diff(run, old, new)
  t.eq(paths(d), { "data.password", "data.token", "stringData.plain" })
  t.eq(d[1].old.redacted, true); t.eq(d[1].old.bytes, 7); t.eq(d[1].new.bytes, 13)
  t.match(d[1].new.hmac, "^%x+$"); t.eq(#d[1].new.hmac, 12)
  t.eq(d[1].new.hmac, hash.hmac_sha256(run.redact_key, b64("correct horse")):sub(1, 12))
  t.eq(d[2].old, nil); t.eq(d[3].new.bytes, 12)
  local e = { type = "kube", action = "configured", kind = "Secret", name = "s", step = 1, diff = d }
  local text = render({ e })
  t.match(text, "data%.password: %(redacted, 7 bytes%) %-> %(redacted, 13 bytes%)")
  t.match(text, "data%.token: %(absent%) %-> %(redacted, 7 bytes%)")
  local js = json.encode(e)
  for _, secret in ipairs { "hunter2", "correct horse", "tok-123", "sekrit-plain",
                            b64("hunter2"), b64("correct horse"), b64("tok-123") } do
    t.ok(not text:find(secret, 1, true), secret .. " in the text")
    t.ok(not js:find(secret, 1, true), secret .. " in the JSON")
  end
  t.eq(json.decode(js).diff[1].new.redacted, true)
end)

t.case("a Secret data value's size: base64 decoded, or the text's own length when not base64", function()
  t.eq(hash.b64_size(""), 0)
  t.eq(hash.b64_size(b64("a")), 1); t.eq(hash.b64_size(b64("ab")), 2)
  t.eq(hash.b64_size(b64("abc")), 3)
  t.eq(hash.b64_size(b64(string.rep("x", 1000))), 1000)
  for _, bad in ipairs { "abc", "ab=c", "====", "a===", "ab c", "ab\ncd==", "Zm9v-A==" } do
    t.eq(hash.b64_size(bad), nil, bad)
  end
  -- a value that is not base64 shows the length of its text
  local d = plan.object_diff(run_record(), { kind = "Secret", data = {} },
    { kind = "Secret", data = { k = "not base64!" } })
  t.eq(d[1].new.bytes, #"not base64!")
  -- a big one (a Helm release's ~0.8 MB) is measured exactly
  local big = b64(string.rep("helm", 3)):rep(70000)
  t.eq(hash.b64_size(big), #big // 4 * 3)
end)

t.case("each run draws its own key: the same secret gives another HMAC", function()
  local a = plan.object_diff(run_record(), { kind = "Secret", data = {} },
    { kind = "Secret", data = { k = b64("same") } })
  local b = plan.object_diff(run_record(), { kind = "Secret", data = {} },
    { kind = "Secret", data = { k = b64("same") } })
  t.ok(a[1].new.hmac ~= b[1].new.hmac)
end)

-- the plan's frame -------------------------------------------------------------------

t.case("summary counts and the data-loss section", function()
  local entries = {
    { type = "kube", action = "created", kind = "A", name = "a", step = 0 },
    { type = "kube", action = "deleted", kind = "PersistentVolumeClaim",
      name = "p", namespace = "ns", data_loss = true, step = 0 },
    { type = "restart", service = "kubelite", step = 0 },
  }
  local text = render(entries)
  t.match(text, "DATA LOSS")
  t.match(text, "%- PersistentVolumeClaim ns/p")
  t.match(text, "Summary: 1 created, 0 configured, 1 deleted, 0 unchanged, 0 files changed, 0 downloads, 1 restart")
end)

t.case("the plan opens with the description and the permissions, new ones marked", function()
  local run = { addon = "hello", from = "1.0.0", to = "1.1.0", new_permissions = { ["kube:cluster"] = true },
    hook = { description = "hello 1.1.0", permissions = { "kube:default", "kube:cluster" } } }
  local text = render({}, { header = plan.header(run) })
  t.match(text, "^Plan for hello 1%.0%.0 %-> 1%.1%.0\n  hello 1%.1%.0\n  permissions: kube:default, kube:cluster %(new%)\n")
end)

t.case("each step ends with its impact: recreated workloads, rolling restarts, services per node, waits", function()
  local tmpl = fielddiff.diff({ spec = { template = { spec = { image = "a" } } } },
                              { spec = { template = { spec = { image = "b" } } } })
  local entries = {
    { type = "step", step = 1, text = "controller" },
    { type = "log", step = 1, level = "info", text = "container renamed: recreating the Deployment", phase = "upgrade" },
    { type = "kube", step = 1, action = "deleted", kind = "Deployment", name = "c", namespace = "ns" },
    { type = "kube", step = 1, action = "created", kind = "Deployment", name = "c", namespace = "ns" },
    { type = "wait", step = 1, text = "rollout of Deployment ns/c", timeout = 300 },
    { type = "step", step = 2, text = "agents" },
    { type = "kube", step = 2, action = "configured", kind = "DaemonSet", name = "d", namespace = "ns", diff = tmpl },
    { type = "kube", step = 2, action = "configured", kind = "ConfigMap", name = "m", namespace = "ns", diff = {} },
    { type = "restart", step = 2, service = "kubelite", node = "n1" },
    { type = "restart", step = 2, service = "kubelite", node = "n2" },
    { type = "wait", step = 2, text = "x", timeout = 30 }, { type = "wait", step = 2, text = "y", timeout = 45 },
  }
  local text = render(entries)
  t.match(text, "%[1%] controller\n  container renamed: recreating the Deployment\n")
  t.match(text, "\n  impact: Deployment ns/c is recreated: its pods stop before the new ones start %(downtime%); waits up to 5 min %(1 wait%)\n%[2%]")
  t.match(text, "\n  impact: DaemonSet ns/d restarts its pods on every node %(rolling update%); restarts kubelite on n1, n2; waits up to 75 s %(2 waits%)\n")
end)

t.case("a Secret's kubectl last-applied annotation, which copies its data, is redacted too", function()
  local la = '{"apiVersion":"v1","data":{"password":"' .. b64("hunter2") .. '"},"kind":"Secret"}\n'
  local ann = "kubectl.kubernetes.io/last-applied-configuration"
  local d = plan.object_diff(run_record(),
    { kind = "Secret", metadata = { annotations = { [ann] = la } }, data = { password = b64("hunter2") } },
    { kind = "Secret", metadata = { annotations = {} }, data = { password = b64("hunter3") } })
  local e = { type = "kube", action = "configured", kind = "Secret", name = "s", step = 1, diff = d }
  local text, js = render({ e }), json.encode(e)
  t.ok(not text:find(b64("hunter2"), 1, true) and not js:find(b64("hunter2"), 1, true), text .. js)
  t.eq(d[2].path, "metadata.annotations." .. ann)
  t.eq(d[2].old.bytes, #la)
end)

-- Consent (docs/security.md "No consent" and "Consent"): the state
-- records the permissions of the last successful upgrade; a hook that
-- asks for one it does not record, and the first upgrade of an addon,
-- need the user's yes before the first change; a refusal is exit 4 with
-- nothing changed; the plan marks the new permissions. The engine asks
-- through o.confirm, which only live runs of the command line give (its
-- TTY question and --yes are tests/cli/consent_test.sh's); here a fake
-- confirm stands in for the user.
local t = require "uphook.test"
local engine = require "uphook.engine.phases"
local consent = require "uphook.engine.consent"

-- every engine.run of `body` gets `confirm`, as lua/cmd/cli.lua gives it
local function with_confirm(confirm, body)
  local real = engine.run
  engine.run = function(o) o.confirm = confirm; return real(o) end
  local ok, err = pcall(body)
  engine.run = real
  if not ok then error(err, 0) end
end

local function asker(answer, why)
  local asked, whats = {}, {}
  return function(lines, what)
    asked[#asked + 1] = table.concat(lines, "\n")
    whats[#whats + 1] = what
    if answer then return true end
    return false, why
  end, asked, whats
end

local function env(st)
  return t.env { addon = "addons/hello", cluster = "fixtures_hello.yaml",
    state = st }
end

t.case("a successful upgrade records the hook's permissions in the state", function()
  local e = env()
  local r = e:upgrade {}
  t.eq(r.code, 0, r.error)
  t.eq(e:state().permissions, { "kube:default" })
end)

t.case("the first upgrade asks; refused: exit 4, nothing changed, no state", function()
  local e = env()
  local before = e:snapshot()
  local confirm, asked, whats = asker(false, "no TTY to ask and no --yes")
  local r
  with_confirm(confirm, function() r = e:upgrade {} end)
  t.eq(r.code, 4, r.error)
  t.eq(#asked, 1)
  t.match(asked[1], "first upgrade of hello by uphook %(1%.1%.0 %-> 1%.2%.0%)")
  t.match(asked[1], "kube:default")
  t.eq(whats[1], "the first upgrade of hello (permissions: kube:default)")
  t.match(r.error, "not upgraded: the first upgrade of hello %(permissions: "
    .. "kube:default%) needs your yes %(no TTY to ask and no %-%-yes%)")
  t.eq(e:snapshot(), before)
  t.eq(e:state(), nil)
end)

t.case("yes: the upgrade runs and records what was granted", function()
  local e = env()
  local confirm, asked = asker(true)
  local r
  with_confirm(confirm, function() r = e:upgrade {} end)
  t.eq(r.code, 0, r.error)
  t.eq(#asked, 1)
  t.eq(e:state().permissions, { "kube:default" })
end)

t.case("recorded permissions are not asked again", function()
  local e = env { version = "1.1.0", permissions = { "kube:default" } }
  local confirm, asked = asker(false, "refused")
  local r
  with_confirm(confirm, function() r = e:upgrade {} end)
  t.eq(r.code, 0, r.error)
  t.eq(#asked, 0)
end)

t.case("a permission the state does not record is asked, named, and refusable", function()
  local e = env { version = "1.1.0", permissions = { "kube:cluster" } }
  local before = e:snapshot()
  local confirm, asked = asker(false, "refused")
  local r
  with_confirm(confirm, function() r = e:upgrade {} end)
  t.eq(r.code, 4, r.error)
  t.eq(#asked, 1)
  t.match(asked[1], "^The hook of hello 1%.2%.0 asks for permissions the "
    .. "last upgrade did not have: kube:default%.")
  t.match(r.error, "new permissions kube:default need your yes %(refused%)")
  t.eq(e:snapshot(), before)
  t.eq(e:state().version, "1.1.0")
end)

t.case("a state of an older uphook (no record) asks as a first upgrade", function()
  local e = env { version = "1.1.0" }
  local confirm, asked = asker(true)
  with_confirm(confirm, function() t.eq(e:upgrade({}).code, 0) end)
  t.eq(#asked, 1)
  t.match(asked[1], "first upgrade of hello")
end)

t.case("plan never asks, and marks the new permissions", function()
  local e = env { version = "1.1.0", permissions = { "kube:cluster" } }
  local confirm, asked = asker(false, "refused")
  local r
  with_confirm(confirm, function() r = e:plan {} end)
  t.eq(r.code, 0, r.error)
  t.eq(#asked, 0)
  t.eq(r.run.new_permissions, { ["kube:default"] = true })
  local h = require("uphook.engine.plan").header(r.run)
  t.eq(h.permissions, { { name = "kube:default", new = true } })
  local text = table.concat(require("uphook.engine.plantext").header_lines(h, {}), "\n")
  t.match(text, "permissions: kube:default %(new%)")
end)

t.case("consent.new_permissions and the record are sets of names", function()
  local hook = { permissions = { "kube:b", "kube:a", "kube:b" } }
  local new, first = consent.new_permissions(hook, nil)
  t.eq(first, true)
  t.eq(new, { ["kube:a"] = true, ["kube:b"] = true })
  new, first = consent.new_permissions(hook, { permissions = { "kube:a" } })
  t.eq(first, false)
  t.eq(new, { ["kube:b"] = true })
  t.eq(consent.record(hook), { "kube:a", "kube:b" })
end)

t.case("a grant is the repository's: another repository, or none recorded, grants nothing", function()
  local hook = { permissions = { "kube:a", "kube:b" } }
  local saved = { permissions = { "kube:a", "kube:b" },
    repository = "core /var/snap/microk8s/common/addons/core" }
  local new, first = consent.new_permissions(hook, saved, saved.repository)
  t.eq(first, false)
  t.eq(new, {})
  t.eq(consent.granted(hook, saved, saved.repository),
    { ["kube:a"] = true, ["kube:b"] = true })
  new, first = consent.new_permissions(hook, saved, "web /home/u/web-addons")
  t.eq(first, true)
  t.eq(new, { ["kube:a"] = true, ["kube:b"] = true })
  t.eq(consent.granted(hook, saved, "web /home/u/web-addons"), {})
  saved.repository = nil
  t.eq(consent.granted(hook, saved, "core /x"), {})
  t.eq(select(2, consent.new_permissions(hook, saved, "core /x")), true)
  -- a run that knows no repository (uphook test) keeps the seeded grant
  t.eq(consent.granted(hook, saved, nil), { ["kube:a"] = true, ["kube:b"] = true })
end)

t.case("a repository's identity is its name and the folder that holds addons/<addon>", function()
  t.eq(consent.identity("core", "/var/snap/microk8s/common/addons/core/addons/dns", "dns"),
    "core /var/snap/microk8s/common/addons/core")
  t.eq(consent.identity("hooks", "/src/uphook/hooks/dns", "dns"), "hooks /src/uphook/hooks")
end)

--- Consent comes before power (docs/security.md, "Consent"): until the
--- user's yes, a Secret's data is read and a request leaves only under
--- the permissions the state records; the hook declares kube:* and
--- net:leak.example, and tries in every phase (tests/lua/addons/leak).
local LEAK_URLS = {}
for _, p in ipairs { "param", "detect", "check", "upgrade" } do
  LEAK_URLS["https://leak.example/" .. p .. "?aHVudGVyMg=="] = { body = "ok" }
  LEAK_URLS["https://leak.example/" .. p .. "?nil"] = { body = "ok" }
end

local function leak_env(st)
  return t.env { addon = "addons/leak", cluster = "fixtures_leak.yaml",
    state = st, downloads = LEAK_URLS }
end

-- what the hook logged it got, phase -> "secret read, fetch sent"
local function got(r)
  local out = {}
  for _, l in ipairs(r.log) do
    local text = type(l) == "table" and (l.message or l.text) or tostring(l)
    local phase, what, how = tostring(text):match("(%a+): (%a+) (%a+)$")
    if phase then out[phase] = (out[phase] and (out[phase] .. ", ") or "")
      .. what .. " " .. how end
  end
  return out
end

-- `uphook <command> leak` on a world with state `st`: env, result, got
local function leak_run(command, st)
  local e = leak_env(st)
  local r = e[command](e, {})
  t.eq(r.code, 0, r.error)
  return e, r, got(r)
end

t.case("a first upgrade: detect gets no Secret data and sends nothing; "
  .. "after the yes, check and upgrade do", function()
  local e, _, g = leak_run("upgrade")
  t.eq(g.detect, "secret withheld, fetch withheld")
  t.eq(g.check, "secret read, fetch sent")
  t.eq(e.net.calls, { "https://leak.example/check?aHVudGVyMg==",
    "https://leak.example/upgrade?aHVudGVyMg==" })
end)

t.case("a first plan: no Secret data and no request in any phase; the plan "
  .. "names what waits for the yes", function()
  local e, r, g = leak_run("plan")
  for _, p in ipairs { "detect", "check", "upgrade" } do
    t.eq(g[p], "secret withheld, fetch withheld", p)
  end
  t.eq(e.net.calls, {})
  local text = require("uphook.engine.plantext").render(r.plan)
  t.match(text, "after your yes: read the data of Secret kube%-system/db%-admin")
  t.match(text, "after your yes: net%.fetch https://leak%.example/check%?nil")
end)

-- a plan of the leak addon saved at `version` with `perms` granted
local function leak_plan(version, perms)
  return leak_run("plan", { version = version, permissions = perms,
    params = { mode = version == "1.0.0" and "b" or "a" } })
end

t.case("a hook update: a saved parameter's check gets no new permission "
  .. "before the yes", function()
  local e, r = leak_plan("1.0.0", { "args:kubelet" })
  t.eq(got(r).param, "secret withheld, fetch withheld")
  t.eq(e.net.calls, {})
  -- what the state records as granted is read before the yes
  r = select(2, leak_plan("1.0.0", { "args:kubelet", "kube:*", "net:leak.example" }))
  t.eq(got(r).param, "secret read, fetch sent")
end)

t.case("at the installed version: plan's drift pass gets no new permission, "
  .. "and the plan shows them", function()
  local e, r = leak_plan("2.0.0", { "args:kubelet" })
  t.eq(got(r).check, "secret withheld, fetch withheld")
  t.eq(e.net.calls, {})
  t.match(require("uphook.engine.plantext").render(r.plan),
    "after your yes: read the data of Secret kube%-system/db%-admin")
  -- upgrade's silent drift pass comes before the yes too: only the check
  -- and upgrade after it read and send
  local up = e:upgrade {}
  t.eq(up.code, 0, up.error)
  t.eq(e.net.calls, { "https://leak.example/check?aHVudGVyMg==",
    "https://leak.example/upgrade?aHVudGVyMg==" })
end)

t.case("permissions.withheld_read: Secrets only, under what is granted",
  function()
  local permissions = require "uphook.engine.permissions"
  local run = { granted = { ["kube:web"] = true } }
  t.eq(permissions.withheld_read(run, "Secret", "web"), false)
  t.eq(permissions.withheld_read(run, "v1/Secret", "db"), true)
  t.eq(permissions.withheld_read(run, "Secret", nil), true)
  t.eq(permissions.withheld_read(run, "ConfigMap", "db"), false)
  t.eq(permissions.withheld_read({ granted = { ["kube:*"] = true } },
    "Secret", nil), false)
  t.eq(permissions.withheld_read({}, "Secret", "db"), false, "after the yes")
end)

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

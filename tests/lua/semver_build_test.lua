-- Build metadata (docs/guide.md "Versions that never changed"): detect may
-- return 1.0.0+<fingerprint> for an addon whose version string never
-- changed; `from` ranges ignore it (semver precedence), being at the
-- hook's version needs the same build, and the plan, the state and a
-- test's expectations show it whole.
local t = require "uphook.test"
local semver = require "semver"

local OLD, NEW = "1.0.0+7bfce061d02a", "1.0.0+e9783f8603e3"

local function env(policy, extra)
  local o = { addon = "addons/fprint", cluster = "fixtures_hello.yaml",
    files = { ["args:fprint-policy.yaml"] = policy } }
  for k, v in pairs(extra or {}) do o[k] = v end
  return t.env(o)
end

t.case("semver: ranges and precedence ignore build metadata; at does not",
  function()
    t.eq(semver.compare(OLD, NEW), 0)
    t.ok(semver.satisfies(OLD, "1.0.0"))
    t.ok(semver.satisfies(OLD, ">=1.0.0 <1.0.1"))
    t.ok(semver.satisfies(OLD, "^1.0.0+whatever"))
    t.ok(not semver.satisfies("0.9.0+" .. ("a"):rep(12), ">=1.0.0"))
    t.ok(not semver.at(OLD, NEW))
    t.ok(semver.at(NEW, NEW))
    t.ok(semver.at(OLD, "1.0.0"), "a target without build is any build")
    t.ok(not semver.at("1.0.0", NEW))
    t.ok(not semver.at("1.0.1+e9783f8603e3", NEW))
    t.eq(select(2, pcall(semver.at, "1.0.0+", NEW)),
      "semver: invalid version '1.0.0+': build metadata is empty")
  end)

t.case("another build of the same version is upgraded: from and state show "
  .. "the builds", function()
  local e = env "policy: 1\n"
  local r = e:upgrade {}
  t.eq(r.code, 0, r.error)
  t.eq({ r.from, r.to }, { OLD, NEW })
  t.eq(e:state().version, NEW)
  local h = e:state().history
  t.eq({ h[#h].from, h[#h].to }, { OLD, NEW })
  t.eq(e:file("args:fprint-policy.yaml"), "policy: 3\n")
  -- the next run reads the state: at the hook's build, nothing to do
  r = e:upgrade {}
  t.eq(r.noop, true)
end)

t.case("a state seeded with another build (t.env's state) is upgraded",
  function()
    local e = env("policy: 1\n", { state = { version = "1.0.0+0123abcd" } })
    local r = e:upgrade {}
    t.eq(r.code, 0, r.error)
    t.eq(r.from, "1.0.0+0123abcd")
    t.eq(e:state().version, NEW)
    e = env("policy: 3\n", { state = { version = NEW } })
    t.eq(e:upgrade({}).noop, true)
  end)

t.case("the build the hook installs, detected: nothing to do", function()
  local e = env "policy: 3\n"
  local before = e:snapshot()
  local r = e:upgrade {}
  t.eq(r.code, 0, r.error)
  t.eq(r.noop, true)
  t.eq(e:snapshot(), before)
  t.eq(e:state(), nil)
end)

t.case("a build of a version outside `from`: refused naming both", function()
  local e = env("policy: 1\n", { hook = "fixtures/older_from.lua" })
  local r = e:upgrade {}
  t.eq(r.code, 4)
  t.match(r.error, "fprint 1%.0%.0%+7bfce061d02a cannot be upgraded by this "
    .. "hook: it upgrades versions >=1%.0%.1 to 1%.0%.1%+e9783f8603e3")
end)

t.case("the plan shows both builds", function()
  local e = env "policy: 2\n"
  local r = e:plan {}
  t.eq(r.code, 0, r.error)
  t.eq({ r.from, r.to }, { "1.0.0+159539048d83", NEW })
  local plan = require "uphook.engine.plan"
  local lines = require("uphook.engine.plantext").header_lines(
    plan.header(r.run), {})
  t.eq(lines[1], "Plan for fprint 1.0.0+159539048d83 -> " .. NEW)
  t.eq(e:state(), nil)
end)

-- The harness's own fault tools: env:fail's `times` and t.each_fault.
local t = require "uphook.test"

local function hello()
  return t.env { addon = "addons/hello", cluster = "fixtures_hello.yaml" }
end

local function retry()
  return t.env { addon = "addons/retry", cluster = "fixtures_hello.yaml" }
end

t.case("env:fail fires once by default, `times` times when given", function()
  for times, want in pairs { [1] = 2, [2] = 3 } do
    local e = retry()
    e:fail { on = "kube.apply", kind = "ConfigMap", times = times }
    local r = e:upgrade {}
    t.eq(r.code, 0, r.error)
    t.eq(#e:calls("kube.apply"), want, "times = " .. times)
    t.eq(e:get("ConfigMap", "tried", "default").data, { a = "1" })
  end
  local e = retry()
  e:fail { on = "kube.apply", name = "tried", times = 3 }
  t.eq(e:upgrade({}).code, 0)
  t.eq(e:get("ConfigMap", "tried", "default"), nil, "every try failed")
end)

t.case("t.each_fault faults every change and checks the rollback", function()
  -- the ConfigMap, then the state commit
  t.eq(t.each_fault(hello, { args = { "--color=red" } }), 2)
end)

t.case("t.each_fault fails when a fault is not rolled back as it must be",
  function()
    -- the hook swallows the fault at its first change and tries again
    t.err(function() t.each_fault(retry) end,
      "a fault at change 1 of 2 %(kube%.apply #1, ConfigMap tried%): the "
      .. "exit code .*expected 4, got 0")
  end)

t.case("t.each_fault fails when the upgrade itself fails", function()
  t.err(function()
    t.each_fault(hello, { args = { "--color=pink" } })
  end, "the upgrade without a fault .*expected 0, got 2")
end)

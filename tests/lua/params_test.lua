-- Parameters as enable takes them (lua/engine/params.lua, docs/reference.md
-- "Parameters"): short aliases, positional declarations, validation in
-- the child, saved values checked on load, and a param given at the
-- current version applied again.
local t = require "uphook.test"

local function env(extra)
  local o = { addon = "addons/opts", cluster = "fixtures_hello.yaml" }
  for k, v in pairs(extra or {}) do o[k] = v end
  return t.env(o)
end

local function cm(e) return e:get("ConfigMap", "opts", "default").data end

t.case("short options: -r VALUE and -rVALUE, as getopt reads them", function()
  local e = env()
  local r = e:upgrade { "-r", "Retain", "-s40Gi" }
  t.eq(r.code, 0, r.error)
  t.eq(cm(e).policy, "Retain")
  t.eq(cm(e).size, "40Gi")
  t.eq(cm(e).given, "reclaim-policy,size")
  t.eq(e:state().params.size, "40Gi")
end)

t.case("long options: --name=value and --name value", function()
  local e = env()
  t.eq(e:upgrade({ "--reclaim-policy=Retain", "--size", "9Gi" }).code, 0)
  t.eq(cm(e).policy, "Retain")
  t.eq(cm(e).size, "9Gi")
end)

t.case("positional arguments: declared ones and the rest", function()
  local e = env()
  local r = e:upgrade { "a", "-r", "Retain", "b", "c" }
  t.eq(r.code, 0, r.error)
  t.eq(cm(e).positional, "a|b|c")
  t.eq(cm(e).args, "a|-r|Retain|b|c")
end)

t.case("the first -- ends uphook's options, the hook's own -- its", function()
  local e = env()
  local r = e:upgrade { "--", "--reset-params" }
  t.eq(r.code, 2)
  t.match(r.error, "unknown parameter %-%-reset%-params for opts")
  r = e:upgrade { "--", "-r", "Retain", "--", "-s", "--size=1Gi" }
  t.eq(r.code, 0, r.error)
  t.eq(cm(e).positional, "-s|--size=1Gi")
  t.eq(cm(e).policy, "Retain")
  t.eq(cm(e).reset, "false")
end)

t.case("an undeclared short option is a usage error, nothing changes", function()
  for _, a in ipairs { "-n", "-y", "-x", "-V" } do
    local e = env()
    local before = e:snapshot()
    local r = e:upgrade { a }
    t.eq(r.code, 2, a)
    t.match(r.error, "unknown parameter " .. a:gsub("%-", "%%-")
      .. " for opts %(it takes %-%-name, %-r/%-%-reclaim%-policy, "
      .. "%-s/%-%-size%)")
    t.eq(e:snapshot(), before)
  end
end)

t.case("a positional argument to a hook that declares none exits 2", function()
  local e = t.env { addon = "addons/hello", cluster = "fixtures_hello.yaml" }
  local before = e:snapshot()
  local r = e:upgrade { "foo" }
  t.eq(r.code, 2)
  t.match(r.error, 'hello takes no positional arguments, got "foo"')
  t.eq(e:snapshot(), before)
end)

t.case("an option without its value exits 2", function()
  t.match(env():upgrade({ "-r" }).error, "%-r needs a value")
  t.match(env():upgrade({ "--size" }).error, "%-%-size needs a value")
end)

t.case("pattern: the whole value must match", function()
  local r = env():upgrade { "--size", "20Gix" }
  t.eq(r.code, 2)
  t.match(r.error, 'opts: %-%-size does not match the pattern %%d%+Gi, got "20Gix"')
  t.eq(env():upgrade({ "--size", "x20Gi" }).code, 2)
end)

t.case("check runs in the child: false with a message, or an error", function()
  local r = env():upgrade { "--name", "bad" }
  t.eq(r.code, 2)
  t.match(r.error, 'opts: %-%-name is reserved, got "bad"')
  r = env():upgrade { "--name", "boom" }
  t.eq(r.code, 2)
  t.match(r.error, "the check exploded")
  t.eq(env():upgrade({ "--name", "self" }).code, 2)
  t.eq(env():upgrade({ "--name", "fine" }).code, 0)
end)

t.case("choices are enforced for short options too", function()
  local r = env():upgrade { "-r", "Keep" }
  t.eq(r.code, 2)
  t.match(r.error, "must be one of Delete, Retain")
end)

t.case("saved parameters are validated when loaded: exit 4", function()
  local e = env { state = { version = "1.0.0", params = { size = "huge" } } }
  local before = e:snapshot()
  local r = e:upgrade {}
  t.eq(r.code, 4)
  t.match(r.error, 'saved %(ConfigMap kube%-system/uphook%-opts%) parameter '
    .. 'size="huge" does not match')
  t.eq(e:snapshot(), before)
  -- the command line replaces the bad value, and so does --reset-params
  t.eq(env({ state = { version = "1.0.0", params = { size = "huge" } } })
    :upgrade({ "--size=1Gi" }).code, 0)
  t.eq(env({ state = { version = "1.0.0", params = { size = "huge" } } })
    :upgrade({ "--reset-params" }).code, 0)
end)

t.case("a param given at the current version is applied again", function()
  local e = env()
  t.eq(e:upgrade({}).code, 0)
  t.eq(cm(e).policy, "Delete")
  local r = e:upgrade { "-r", "Retain" }
  t.eq(r.code, 0, r.error)
  t.eq(cm(e).policy, "Retain")
  t.eq(cm(e).from, "2.0.0")
  t.eq(r.run.reconfigure, "reclaim-policy Delete -> Retain")
  local h = e:state().history
  t.eq(h[#h].result, "reconfigured")
  t.eq(e:state().params["reclaim-policy"], "Retain")
end)

t.case("the saved values again at the current version: nothing to do", function()
  local e = env()
  t.eq(e:upgrade({ "-r", "Retain" }).code, 0)
  local before = e:snapshot()
  local r = e:upgrade { "--reclaim-policy=Retain" }
  t.eq(r.code, 0)
  t.eq(r.run.noop, true)
  t.eq(e:snapshot(), before)
  r = e:upgrade {}
  t.eq(r.run.noop, true)
end)

t.case("--reset-params at the current version applies the defaults", function()
  local e = env()
  t.eq(e:upgrade({ "-r", "Retain" }).code, 0)
  local r = e:upgrade { "--reset-params" }
  t.eq(r.code, 0, r.error)
  t.eq(cm(e).policy, "Delete")
  t.eq(cm(e).reset, "true")
end)

t.case("a plan at the current version with a new param shows the change", function()
  local e = env()
  t.eq(e:upgrade({}).code, 0)
  local before = e:snapshot()
  local r = e:plan { "-r", "Retain" }
  t.eq(r.code, 0, r.error)
  t.eq(r.plan[1].action, "configured")
  t.eq(e:snapshot(), before)
end)

t.case("a param named like an uphook option is refused on load", function()
  local r = t.env({ addon = "addons/reserved" }):upgrade {}
  t.eq(r.code, 4)
  t.match(r.error, "params.timeout: %-%-timeout is one of uphook's own options")
end)

t.case("uphook's own long options in the harness: --reset-params", function()
  local e = env { state = { version = "1.0.0", params = { size = "5Gi" } } }
  t.eq(e:upgrade({ "--reset-params" }).code, 0)
  t.eq(cm(e).size, "20Gi")
  t.eq(cm(e).args, "")
end)

-- Boolean flags (`type = "flag"`, docs/reference.md `uphook.Param`)

local function fenv(extra)
  extra = extra or {}
  extra.addon = "addons/flag"
  return env(extra)
end
local function fcm(e) return e:get("ConfigMap", "flag", "default").data end

t.case("a bare flag is true; not given, it is false (or its default)", function()
  local e = fenv()
  local r = e:upgrade { "--skip-kubebench-installation" }
  t.eq(r.code, 0, r.error)
  t.eq(fcm(e).skip, "true")
  t.eq(fcm(e).verify, "true")
  t.eq(e:state().params["skip-kubebench-installation"], "true")
  e = fenv()
  t.eq(e:upgrade({}).code, 0)
  t.eq(fcm(e).skip, "false")
end)

t.case("a flag takes no value after it: the next word is positional", function()
  local e = fenv()
  local r = e:upgrade { "--skip-kubebench-installation", "false", "-v", "x" }
  t.eq(r.code, 0, r.error)
  t.eq(fcm(e).skip, "true")
  t.eq(fcm(e).verify, "true")
  t.eq(fcm(e).positional, "false|x")
end)

t.case("--flag=false and --flag=true; -v as the short form", function()
  local e = fenv()
  t.eq(e:upgrade({ "--verify=false", "--skip-kubebench-installation=true",
    "--level", "2" }).code, 0)
  t.eq(fcm(e).verify, "false")
  t.eq(fcm(e).skip, "true")
  t.eq(fcm(e).level, "2")
  e = fenv { state = { version = "1.0.0", params = { verify = "false" } } }
  t.eq(e:upgrade({ "-v" }).code, 0)
  t.eq(fcm(e).verify, "true")
end)

t.case("a flag is saved: the next run keeps it until --flag=false", function()
  local e = fenv()
  t.eq(e:upgrade({ "--skip-kubebench-installation" }).code, 0)
  local r = e:upgrade {}
  t.eq(r.run.noop, true)
  r = e:upgrade { "--skip-kubebench-installation=false" }
  t.eq(r.code, 0, r.error)
  t.eq(r.run.reconfigure, "skip-kubebench-installation true -> false")
  t.eq(fcm(e).skip, "false")
end)

t.case("a value other than true or false given to a flag: exit 2", function()
  for _, a in ipairs { "--verify=yes", "--verify=", "-vx" } do
    local e = fenv()
    local before = e:snapshot()
    local r = e:upgrade { a }
    t.eq(r.code, 2, a)
    t.match(r.error, "is a flag: give %-+%a* alone, or %-%-verify=true or "
      .. '%-%-verify=false; got "' .. a:gsub("%-", "%%-") .. '"')
    t.eq(e:snapshot(), before)
  end
end)

t.case("a saved flag that is not true or false stops the run: exit 4", function()
  local r = fenv({ state = { version = "1.0.0",
    params = { verify = "maybe" } } }):upgrade {}
  t.eq(r.code, 4)
  t.match(r.error, 'parameter verify="maybe" is a flag: it must be true or false')
end)

t.case("a flag's declaration: its type, default, choices and pattern", function()
  local params = require "uphook.engine.params"
  local function declare(spec)
    local ok, err = pcall(params.declare, { params = { x = spec } },
      function(m) error(m, 0) end)
    return ok and err or nil, not ok and err or nil
  end
  local d = declare { type = "flag" }
  t.eq(d.params.x.default, "false")
  t.eq(d.params.x.type, "flag")
  t.eq(declare({}).params.x.type, "string")
  t.eq(select(2, declare { type = "bool" }),
    'params.x.type must be "string" or "flag", got "bool"')
  t.eq(select(2, declare { type = "flag", default = "yes" }),
    'params.x.default: a flag\'s default is "true" or "false", got "yes"')
  t.eq(select(2, declare { type = "flag", choices = { "a" } }),
    "params.x: a flag takes no choices (its values are true and false)")
  t.eq(select(2, declare { type = "flag", pattern = "%d" }),
    "params.x: a flag takes no pattern (its values are true and false)")
end)

t.case("--help shows a flag without VALUE, with its default", function()
  local params = require "uphook.engine.params"
  local d = params.declare({ params = {
    skip = { type = "flag", description = "skip it" },
    size = { default = "1" } } }, error)
  local text = params.help({ decl = d, from = ">=1", version = "2.0.0",
    permissions = {} }, "a", "upgrade")
  t.match(text, "\n      %-%-skip +skip it %(a flag: %-%-skip=false unsets it; "
    .. "default false%)\n")
  t.match(text, "\n      %-%-size VALUE +%(default 1%)\n")
end)

-- The engine's multi-node rules (docs/guide.md §6 "Several nodes"), on
-- the mock's nodes: which nodes a change goes to, what counts as changed,
-- priors read or assumed, journal records, the refusals, preflight.
local t = require "uphook.test"

local DOMAIN = "--cluster-domain="

local function env(o)
  o = o or {}
  return t.env { addon = "addons/knob", cluster = "fixtures_nodes.yaml",
    args = o.args, resolv_conf = o.resolv_conf, state = o.state,
    nodes = o.nodes or { { name = "node-b" },
      { name = "node-c", args = { kubelet = DOMAIN .. "c.local\n" } } } }
end

local function logged(r, pattern)
  for _, l in ipairs(r.log) do if l:find(pattern) then return l end end
  error("no log line matches " .. pattern .. " in " .. t.repr(r.log), 2)
end

t.case("set_args changes every node; each kubelet restarts where it changed",
  function()
    local e = env { args = { kubelet = "# this node\n\n" .. DOMAIN .. "old\n" } }
    local r = e:upgrade {}
    t.eq(r.code, 0, r.error)
    for _, n in ipairs { "node-a", "node-b", "node-c" } do
      t.eq(e:args("kubelet", n)["--cluster-domain"], "knob.local", n)
      t.eq(e:restarts(n), { "kubelite" }, n)
    end
    t.eq(e:file("args:kubelet"), "# this node\n\n" .. DOMAIN .. "knob.local\n",
      "this node: the file directly, comments and blank lines kept")
    -- node-b had no line: the agent appended it to the default file
    t.match(e:file("args:kubelet", "node-b"), "\n%-%-cluster%-domain=knob%.local\n$")
  end)

t.case("a remote change alone makes set_args return true", function()
  local e = env { args = { kubelet = DOMAIN .. "knob.local\n" } }
  local r = e:upgrade {}
  t.eq(r.code, 0, r.error)
  logged(r, "^changed: true$")
  t.eq(e:restarts(), {}, "this node did not change: not restarted")
  t.eq(e:restarts("node-c"), { "kubelite" })
end)

t.case("nothing differs anywhere: false, nothing sent, no restart", function()
  local same = { kubelet = DOMAIN .. "knob.local\n" }
  local e = env { args = same, nodes = { { name = "node-b", args = same } } }
  local r = e:upgrade {}
  t.eq(r.code, 0, r.error)
  logged(r, "^changed: false$")
  for _, rec in ipairs(r.run.records) do
    t.ok(rec.op ~= "node_args" and rec.op ~= "file" and rec.op ~= "restart",
      "only the state commit was journaled, not " .. rec.op)
  end
  t.eq(e:restarts("node-b"), {})
end)

t.case("opts.nodes = \"this\": only this node's file and kubelite", function()
  local e = env()
  local r = e:upgrade { "--nodes=this", "--restart=all" }
  t.eq(r.code, 0, r.error)
  t.eq(e:args("kubelet")["--cluster-domain"], "knob.local")
  t.eq(e:args("kubelet", "node-c")["--cluster-domain"], "c.local")
  t.eq(e:restarts(), { "kubelite" })
  t.eq(e:restarts("node-b"), { "kubelite" }, "restart defaults to every node")
end)

t.case("the plan text: each other node's change with its prior, read or assumed",
  function()
    local r = env():plan {}
    t.eq(r.code, 0, r.error)
    local text = require("uphook.engine.plantext").render(r.plan)
    t.match(text, "~ file args:kubelet %(changed, mode 0644%) on node%-a\n")
    t.match(text, "~ args:kubelet on node%-c %(10%.0%.1%.12%)\n      %-%-cluster%-domain: "
      .. "\"c%.local\" %(read%) %-> \"knob%.local\"\n")
    t.match(text, "restart kubelite on node%-b\n  restart kubelite on node%-c\n"
      .. "  restart kubelite on node%-a\n")
  end)

t.case("the plan's permissions say where each acts: args: and restart: on "
  .. "every node, bin: on this node only; one node: nothing added", function()
  local plan, plantext = require "uphook.engine.plan", require "uphook.engine.plantext"
  local r = env():plan {}
  t.eq(r.code, 0, r.error)
  local text = plantext.render(r.plan, { header = plan.header(r.run) })
  -- (new): no upgrade recorded any permissions yet (lua/engine/consent.lua)
  t.match(text, "\n  permissions: args:kubelet %(every node%) %(new%), "
    .. "args:kube%-apiserver %(every node%) %(new%), bin:tool %(this node "
    .. "only%) %(new%), restart:kubelite %(every node%) %(new%), kube:cluster "
    .. "%(new%)\n")
  local one = t.env { addon = "addons/knob", cluster = "fixtures_nodes.yaml" }
  r = one:plan {}
  t.eq(r.code, 0, r.error)
  t.match(plantext.render(r.plan, { header = plan.header(r.run) }),
    "\n  permissions: args:kubelet %(new%), args:kube%-apiserver %(new%), "
    .. "bin:tool %(new%), restart:kubelite %(new%), kube:cluster %(new%)\n")
end)

t.case("journal: one record per remote change, prior read from configz "
  .. "where the kubelet shows it", function()
  local e = env()
  local r = e:upgrade {}
  t.eq(r.code, 0, r.error)
  local recs = {}
  for _, rec in ipairs(r.run.records) do
    if rec.op == "node_args" or rec.op == "node_restart" then
      recs[#recs + 1] = rec
    end
  end
  t.eq(recs[1], { op = "node_args", node = "node-b", address = "10.0.1.11",
    service = "kubelet", prior = { ["--cluster-domain"] = false },
    how = { ["--cluster-domain"] = "read" },
    new = { ["--cluster-domain"] = "knob.local" } })
  t.eq(recs[2].node, "node-c")
  t.eq(recs[2].prior, { ["--cluster-domain"] = "c.local" })
  t.eq(recs[3], { op = "node_restart", node = "node-b", address = "10.0.1.11",
    service = "kubelite" })
  t.eq(recs[4].op, "node_restart")
  t.eq(#recs, 4)
end)

t.case("config.args of another node: values read from its kubelet, the "
  .. "others assumed", function()
  local function e()
    return env { args = { kubelet = DOMAIN .. "here\n",
      ["kube-apiserver"] = "--authorization-mode=RBAC,Node\n" } }
  end
  local r = e():upgrade { "--action=read", "--node=node-c" }
  t.eq(r.code, 0, r.error)
  logged(r, "^kubelet %-%-cluster%-domain=c%.local %(read%)$")
  logged(r, "^kube%-apiserver %-%-authorization%-mode=RBAC,Node %(assumed%)$")
  r = e():upgrade { "--action=read" }
  logged(r, "^kubelet %-%-cluster%-domain=here %(read%)$")
  logged(r, "^kube%-apiserver %-%-authorization%-mode=RBAC,Node %(read%)$")
  r = e():upgrade { "--action=read", "--node=node-x" }
  t.eq(r.code, 4)
  t.match(r.error, "config%.args%(kubelet, node%-x%): no node is named node%-x")
end)

t.case("nodes.kubelet_config: a node's running configuration, not its file",
  function()
    local r = env():upgrade { "--action=configz", "--node=node-c" }
    t.eq(r.code, 0, r.error)
    logged(r, "^configz c%.local$")
    r = env():upgrade { "--action=configz", "--node=node-x" }
    t.eq(r.code, 4)
    t.match(r.error, "nodes%.kubelet_config%(node%-x%): nodes \"node%-x\" not found")
  end)

t.case("config.write and config.remove of args: are refused on several "
  .. "nodes, before any change", function()
  for _, a in ipairs { "write", "remove" } do
    local e = env()
    local before = e:file("args:kubelet")
    local r = e:upgrade { "--action=" .. a }
    t.eq(r.code, 4, a)
    t.match(r.error, "config%." .. a .. "%(args:kube[%w%-]+%) is refused on a "
      .. "cluster of 3 nodes: it would change this node only; use "
      .. "config%.set_args, which changes every node's flags %(the cluster "
      .. "agent cannot write a file%), or, for a file that is not flags, pass "
      .. "{nodes = \"this\"} and run the upgrade on every node")
    t.eq(e:file("args:kubelet"), before)
  end
  -- on one node it is allowed, as before
  local e = t.env { addon = "addons/knob", cluster = "fixtures_nodes.yaml" }
  t.eq(e:upgrade({ "--action=write" }).code, 0)
  t.eq(e:file("args:kubelet"), "--cluster-domain=x\n")
end)

t.case("bin: changes this node only, and the plan says so", function()
  local e = env()
  local r = e:plan { "--action=bin" }
  t.eq(r.code, 0, r.error)
  local file
  for _, x in ipairs(r.plan) do if x.type == "file" then file = x end end
  t.eq(file.node, "node-a")
  t.match(require("uphook.engine.plantext").render(r.plan), "%+ file bin:tool %(created, mode 0644%) on node%-a only")
end)

t.case("preflight: a node without an InternalIP, or two with one address, "
  .. "stop the run naming them", function()
  local e = env { nodes = { { name = "node-b", address = "" } } }
  local r = e:upgrade {}
  t.eq(r.code, 4)
  t.match(r.error, "node node%-b has no InternalIP address")
  e = env { nodes = { { name = "node-b", address = "10.0.9.9" },
                      { name = "node-c", address = "10.0.9.9" } } }
  r = e:upgrade {}
  t.eq(r.code, 4)
  t.match(r.error, "nodes node%-b and node%-c have the same InternalIP 10%.0%.9%.9")
end)

t.case("a host that is no Node of a multi-node cluster is refused", function()
  local e = t.env { addon = "addons/knob", cluster = "fixtures_nodes.yaml",
    hostname = "elsewhere", nodes = { "node-b" } }
  local r = e:upgrade {}
  t.eq(r.code, 4)
  t.match(r.error, "this host %(elsewhere%) is not a Node of the cluster")
end)

t.case("several failing nodes are all named; none is left changed", function()
  local e = env { nodes = { "node-b", "node-c", "node-d" } }
  local before = {}
  for _, n in ipairs { "node-b", "node-c", "node-d" } do
    before[n] = e:file("args:kubelet", n)
  end
  e:fail { on = "config.set_args", node = "node-b", error = "b failed" }
  e:fail { on = "config.set_args", node = "node-d", reason = "Unreachable",
    error = "connection refused" }
  local r = e:upgrade {}
  t.eq(r.code, 1, r.error)
  t.match(r.error, "node node%-b %(10%.0%.1%.11%): b failed; node node%-d "
    .. "%(10%.0%.1%.13%): connection refused")
  for n, text in pairs(before) do t.eq(e:file("args:kubelet", n), text, n) end
end)

t.case("nodes.resolv_conf: upstream's choice over the given files", function()
  local e = env { resolv_conf = {
    ["/etc/resolv.conf"] = "nameserver 127.0.0.53\n",
    ["/run/systemd/resolve/resolv.conf"] = "nameserver 192.168.1.1\n" } }
  logged(e:upgrade { "--action=resolv" }, "^resolv /run/systemd/resolve/resolv%.conf$")
  e = env { resolv_conf = {
    ["/etc/resolv.conf"] = "nameserver ::1\n" } }
  logged(e:upgrade { "--action=resolv" }, "^resolv nil$")
end)

t.case("a restarted node whose kubelet never comes back: rolled back, and "
  .. "the node it cannot restart again is named (exit 6)", function()
  local e = env { nodes = { "node-b",
    { name = "node-c", agent = "down-after-restart" } } }
  local r = e:upgrade {}
  t.eq(r.code, 6, r.error)
  t.match(r.error, "node node%-c did not come back within [%d.]+s after the "
    .. "restart %(last seen: Ready, but its kubelet's configz does not answer%)")
  -- node-b restarted before node-c: restored and restarted again; node-c's
  -- args are restored too, its restart again cannot be confirmed
  t.eq(e:args("kubelet", "node-b")["--cluster-domain"], nil)
  t.eq(e:restarts("node-b"), { "kubelite", "kubelite" })
  t.eq(e:args("kubelet", "node-c")["--cluster-domain"], nil)
  local problem
  for _, p in ipairs(r.run.problems or {}) do
    problem = problem or p:match("^restart kubelite on node node%-c .*")
  end
  t.ok(problem, "the undo names node-c: " .. t.repr(r.run.problems))
  t.eq(e:restarts(), {}, "this node never got to its restart")
end)

t.case("a node that joins during the run stops it, naming the node", function()
  local e = env()
  local before = e:file("args:kubelet")
  local r = e:upgrade { "--action=join" }
  t.eq(r.code, 1, r.error)
  t.match(r.error, "node node%-new joined the cluster during the upgrade")
  t.eq(e:get("Node", "node-new"), nil, "the Node's apply rolled back")
  t.eq(e:file("args:kubelet"), before)
end)

--- The "add" action: kube-apiserver gets --kubelet-client-certificate and
--- --kubelet-client-key (absent on every node) and --audit-log-maxage=90
--- (this node's already; node-c has 30, which uphook cannot read).
local function add_env()
  return env { args = { ["kube-apiserver"] = "--audit-log-maxage=90\n" },
    nodes = { { name = "node-b", args = { ["kube-apiserver"] = "--secure-port=16443\n" } },
      { name = "node-c",
      args = { ["kube-apiserver"] = "--audit-log-maxage=30\n" } } } }
end

t.case("an added flag: each other node's record holds prior false (absent), "
  .. "and the node receives exactly the changes the plan shows", function()
  local e = add_env()
  local r = e:upgrade { "--action=add" }
  t.eq(r.code, 0, r.error)
  local recs = {}
  for _, rec in ipairs(r.run.records) do
    if rec.op == "node_args" then recs[rec.node] = rec end
  end
  for _, n in ipairs { "node-b", "node-c" } do
    t.eq(recs[n].prior, { ["--kubelet-client-certificate"] = false,
      ["--kubelet-client-key"] = false }, n)
    t.eq(recs[n].new, { ["--kubelet-client-certificate"] = "/c.crt",
      ["--kubelet-client-key"] = "/c.key" }, n)
    t.eq(e:args("kube-apiserver", n)["--kubelet-client-key"], "/c.key", n)
  end
  t.eq(e:args("kube-apiserver", "node-c")["--audit-log-maxage"], "30",
    "node-c keeps its own value: the plan showed no change of it")
  local text = require("uphook.engine.plantext").render(add_env():plan {
    "--action=add" }.plan)
  t.match(text, "~ args:kube%-apiserver on node%-c %(10%.0%.1%.12%)\n"
    .. "      %-%-kubelet%-client%-certificate: absent %(assumed%) %-> \"/c%.crt\"\n"
    .. "      %-%-kubelet%-client%-key: absent %(assumed%) %-> \"/c%.key\"\n")
  t.ok(not text:find("nil", 1, true), "no prior shows as nil:\n" .. text)
end)

t.case("a rollback of an added flag removes it on every node, at each later "
  .. "fault point", function()
  local points = {
    { on = "config.set_args", node = "node-c", error = "c failed" },
    { on = "service.restart", node = "node-b", error = "b failed" },
    { on = "service.restart", node = "node-c", error = "c failed" },
    { on = "service.restart", error = "kubelite failed" },
    "verify",
  }
  for i, f in ipairs(points) do
    local e = add_env()
    local before = {}
    for _, n in ipairs { "node-a", "node-b", "node-c" } do
      before[n] = e:args("kube-apiserver", n)
    end
    if f ~= "verify" then e:fail(f) end
    local r = e:upgrade { "--action=add", f == "verify" and "--value=fail"
      or "--value=x" }
    t.eq(r.code, 1, "point " .. i .. ": " .. tostring(r.error))
    for n, v in pairs(before) do
      t.eq(e:args("kube-apiserver", n), v, "point " .. i .. ", " .. n)
    end
  end
end)

t.case("opts.nodes as a list of names: only those nodes change and restart; "
  .. "a name that is no node's is an error naming it", function()
  local e = env()
  local r = e:upgrade { "--action=list", "--node=node-c" }
  t.eq(r.code, 0, r.error)
  t.eq(e:args("kubelet", "node-c")["--cluster-domain"], "knob.local")
  t.eq(e:args("kubelet", "node-b")["--cluster-domain"], nil)
  t.eq(e:args("kubelet")["--cluster-domain"], nil, "this node is not listed")
  t.eq(e:restarts("node-c"), { "kubelite" })
  t.eq(e:restarts("node-b"), {})
  t.eq(e:restarts(), {})
  e = env()
  r = e:upgrade { "--action=list", "--node=node-a,node-b" }
  t.eq(r.code, 0, r.error)
  t.eq(e:args("kubelet")["--cluster-domain"], "knob.local")
  t.eq(e:args("kubelet", "node-c")["--cluster-domain"], "c.local")
  t.eq(e:restarts(), { "kubelite" })
  r = env():upgrade { "--action=list", "--node=node-b,node-x" }
  t.eq(r.code, 4, r.error)
  t.match(r.error, "config%.set_args%(kubelet%): no node is named node%-x "
    .. "%(nodes: node%-a, node%-b, node%-c%)")
end)

t.case("the consent question on several nodes says a rollback restores an "
  .. "assumed prior", function()
  local engine = require "uphook.engine.phases"
  local asked
  local real = engine.run
  engine.run = function(o)
    o.confirm = function(lines) asked = table.concat(lines, "\n"); return true end
    return real(o)
  end
  local ok, r = pcall(function() return add_env():upgrade { "--action=add" } end)
  engine.run = real
  t.ok(ok, r)
  t.eq(r.code, 0, r.error)
  t.match(asked, "It changes node settings on 2 other nodes: a prior value "
    .. "uphook cannot read there is assumed to be this node's %(the plan marks "
    .. "it \"assumed\"%), and a rollback restores that assumed value%.")
end)

t.case("config.write and config.remove of args: with nodes = \"this\": this "
  .. "node's file only, and the plan warns that each node needs its own run",
  function()
    local e = env()
    local b = e:file("args:kubelet", "node-b")
    local r = e:upgrade { "--action=writethis" }
    t.eq(r.code, 0, r.error)
    t.eq(e:file("args:kubelet"), "--cluster-domain=x\n")
    t.eq(e:file("args:kube-apiserver"), nil)
    t.eq(e:file("args:kubelet", "node-b"), b, "node-b is not changed")
    logged(r, "^config%.write%(args:kubelet%) changes this node only %(nodes = "
      .. "\"this\"%): each of the other 2 nodes needs its own run of this upgrade$")
    local p = env():plan { "--action=writethis" }
    local text = require("uphook.engine.plantext").render(p.plan)
    t.match(text, "each of the other 2 nodes needs its own run")
  end)

t.case("a config file under args: changes this node only: its permission "
  .. "is not marked every node", function()
  local permissions = require "uphook.engine.permissions"
  t.eq(permissions.scope("args:eventconfig.yaml"), "this node only")
  t.eq(permissions.scope("args:kube-apiserver"), "every node")
  t.eq(permissions.args_config_file("args:containerd-template.toml"), true)
  t.eq(permissions.args_config_file("args:kubelet"), false)
  t.eq(permissions.args_config_file("bin:kube-bench.yaml"), false)
  local plan, plantext = require "uphook.engine.plan", require "uphook.engine.plantext"
  local e = t.env { addon = "addons/eventcfg", cluster = "fixtures_nodes.yaml",
    nodes = { { name = "node-b" } } }
  local r = e:plan {}
  t.eq(r.code, 0, r.error)
  t.match(plantext.render(r.plan, { header = plan.header(r.run) }),
    "permissions: args:eventconfig%.yaml %(this node only%) %(new%), "
    .. "args:kube%-apiserver %(every node%) %(new%)")
end)

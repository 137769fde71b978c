--- uphook.test: the hook-test harness (docs/contract.md §6).
---
---     local t = require "uphook.test"
---     t.case("1.1.0 -> 1.4.2", function()
---       local env = t.env { addon = ".", cluster = "fixtures/cluster-1.1.0.yaml" }
---       t.eq(env:upgrade({}).code, 0)
---     end)
---
--- Test files call `t.case(name, fn)`; the runner executes every case of
--- every file, one fresh environment per file and, for hook runs, one
--- fresh sandbox over fresh mocks per `t.env`.
local tables = require "uphook.core.tables"
local lib = require "uphook.cmd.testlib"
local lease = require "uphook.engine.lease"

local M = {}
for k, v in pairs(lib) do
  if k ~= "take_cases" then M[k] = v end
end

local current_file = "?"
local repr, fail = lib.repr, function(msg, level) error(msg, level + 1) end

--- Hook environments (t.env) ----------------------------------------------

local fixture_cache, source_cache, seed_cache = {}, {}, {}
local tempdirs = {}
local C   -- the C families, set by main()

local function dirname(p) return p:match("^(.*)/[^/]*$") or "." end
local function basename(p) return (p:gsub("/+$", "")):match("([^/]+)$") end

local function resolve(path)
  if path:sub(1, 1) == "/" then return path end
  return dirname(current_file) .. "/" .. path
end

local function read_cached(cache, path, decode)
  local v = cache[path]
  if v == nil then
    local text, err = C.sys.read(path)
    if not text then error("t.env: cannot read " .. path .. ": "
      .. tostring(err or "no such file"), 3) end
    if decode then
      local ok, objs = pcall(C.yaml.decode_all, text)
      if not ok then error(path .. ": " .. tostring(objs), 3) end
      v = objs
    else v = text end
    cache[path] = v
  end
  return v
end

--- The Status reason an injected fault carries by default, by code.
local FAULT_REASONS = { [400] = "BadRequest", [403] = "Forbidden",
  [404] = "NotFound", [409] = "Conflict", [410] = "Expired",
  [422] = "Invalid", [429] = "TooManyRequests", [500] = "InternalError",
  [503] = "ServiceUnavailable", [504] = "Timeout" }

--- What env:fail can fault: the hook's changes, and the reads and
--- watches of everyone (the engine's too).
local FAULT_ON = { ["kube.apply"] = true, ["kube.delete"] = true,
  ["kube.get"] = true, ["kube.list"] = true, ["kube.watch"] = true,
  ["service.restart"] = true, ["config.write"] = true,
  ["config.remove"] = true, ["config.install"] = true,
  ["config.set_args"] = true }

--- The keys env:fail{} takes.
local FAULT_KEYS = { on = true, kind = true, name = true, path = true,
  error = true, code = true, reason = true, after = true, times = true,
  namespace = true, node = true }

local function sorted_keys(set)
  local out = {}
  for k in pairs(set) do out[#out + 1] = k end
  table.sort(out)
  return table.concat(out, ", ")
end

-- Is a table's every key one of `allowed`? Raises naming the first that
-- is not, for the caller's caller.
local function check_keys(what, t, allowed, level)
  local bad = {}
  for k in pairs(t) do
    if not allowed[k] then bad[#bad + 1] = tostring(k) end
  end
  if #bad > 0 then
    table.sort(bad)
    error(string.format('%s: unknown key "%s" (known: %s)', what, bad[1],
      sorted_keys(allowed)), level + 1)
  end
end

-- The message of a fault: the server's words for a 409 Conflict or a 404
-- (so a hook meets what it would meet), else "injected fault in <on>".
local function fault_message(f, on, kind, name)
  if f.error then return f.error end
  local code = f.code or 500
  local what = (kind and (kind:lower() .. "s") or "objects")
  if code == 409 then
    return string.format('Operation cannot be fulfilled on %s "%s": the '
      .. 'object has been modified; please apply your changes to the latest '
      .. 'version and try again', what, tostring(name))
  elseif code == 404 and name == nil then      -- a list: the kind's path
    return "the server could not find the requested resource"
  elseif code == 404 then
    return string.format('%s "%s" not found', what, tostring(name))
  end
  return "injected fault in " .. on
end

--- The agent errors that are not an answer of the agent (docs/internals.md).
local TRANSPORT = { Unreachable = true, TLSError = true, Timeout = true,
  BadAnswer = true }

--- env:fail at another node's change: that node's cluster-agent answers
--- the request with an error (500 AgentError), or with `reason` one of
--- TRANSPORT, the request fails so; the others go to the mock's agents.
local function faulty_agents(backend, check, change)
  local function fault(req)
    for _, svc in ipairs(req.body.service or {}) do
      local on = svc.restart and "service.restart"
        or ((#(svc.arguments_update or {}) > 0
             or #(svc.arguments_remove or {}) > 0) and "config.set_args")
      if on and change(on, nil, svc.name, nil, req.node) then
        local ok, e = pcall(check, on, nil, svc.name, nil, nil, req.node)
        if not ok then
          local agent = not TRANSPORT[e.reason]
          return { ok = false, error = { code = agent and (e.code or 500)
            or 0, node = req.node, address = req.address,
            reason = agent and "AgentError" or e.reason,
            message = string.format("node %s (%s): %s", req.node,
              req.address, e.message) } }
        end
      end
    end
  end
  return function(_, reqs, opts)
    local out, pass, at = {}, {}, {}
    for i, req in ipairs(reqs) do
      out[i] = fault(req)
      if not out[i] then pass[#pass + 1], at[#pass + 1] = req, i end
    end
    for k, r in ipairs(backend:agent_configure(pass, opts)) do
      out[at[k]] = r
    end
    return out
  end
end

--- Wrap a backend and the C families so that env:fail faults fire at
--- the primitive's change (after what came before it really happened),
--- or at a read or watch. A change has a node: this one (env.hostname),
--- or another whose agent the change is a request to.
local function faulty(env, backend, c)
  local function check(on, kind, name, path, ns, node)
    if env.rolling_back then return end   -- faults hit the hook's changes
    for _, f in ipairs(env.faults) do
      if f.on == on and (f.kind == nil or f.kind == kind)
         and (f.name == nil or f.name == name)
         and (f.namespace == nil or f.namespace == ns)
         and (f.path == nil or f.path == path)
         and (f.node == nil or f.node == node) then
        f.seen = (f.seen or 0) + 1
        if f.seen > (f.after or 0) and f.seen <= (f.after or 0)
           + (f.times or 1) then
          local code = f.code or 500
          error({ code = code, reason = f.reason or FAULT_REASONS[code]
            or "InternalError",
            message = fault_message(f, on, kind, name) }, 0)
        end
      end
    end
  end
  -- a change of the hook's, recorded in env.changes (t.each_fault faults
  -- each in turn); the engine's own Lease is not one
  local function change(on, kind, name, path, node)
    if env.rolling_back then return false end
    if kind == "Lease" and name == lease.name(env.name) then return false end
    env.change_log[#env.change_log + 1] = { on = on, kind = kind,
      name = name, path = path, node = node }
    return true
  end
  local b = setmetatable({}, { __index = backend })
  local function short(kind) return (kind:match("([^/]+)$")) end
  function b:get(kind, name, ns)
    local ok, e = pcall(check, "kube.get", short(kind), name, nil, ns)
    if not ok then
      if type(e) == "table" and e.code == 404 then return nil end
      error(e, 0)
    end
    return backend:get(kind, name, ns)
  end
  function b:list(kind, opts)
    check("kube.list", short(kind), nil, nil, opts and opts.namespace)
    return backend:list(kind, opts)
  end
  function b:watch(kind, name, ns, fn, timeout)
    check("kube.watch", short(kind), name, nil, ns)
    return backend:watch(kind, name, ns, fn, timeout)
  end
  function b:apply(obj, opts)
    local name = obj.metadata and obj.metadata.name
    if not (opts and opts.dry_run) and change("kube.apply", obj.kind, name)
    then
      check("kube.apply", obj.kind, name)
    end
    return backend:apply(obj, opts)
  end
  function b:delete(kind, name, ns)
    local k = kind:match("([^/]+)$")
    if change("kube.delete", k, name) then check("kube.delete", k, name) end
    return backend:delete(kind, name, ns)
  end
  function b:restart(svc)
    if change("service.restart", nil, svc, nil, env.hostname) then
      check("service.restart", nil, svc, nil, nil, env.hostname)
    end
    return backend:restart(svc)
  end
  b.agent_configure = faulty_agents(backend, check, change)
  local fs = setmetatable({}, { __index = c.fs })
  for _, op in ipairs { "write", "remove" } do
    fs[op] = function(dir, rel, ...)
      local root = env.root_of[dir]
      if root and change("config." .. op, nil, nil, root .. ":" .. rel,
          env.hostname) then
        check("config." .. op, nil, nil, root .. ":" .. rel, nil,
          env.hostname)
        if root == "args" then
          check("config.set_args", nil, rel, nil, nil, env.hostname)
        end
      end
      return c.fs[op](dir, rel, ...)
    end
  end
  function fs.install(src, dir, rel, mode)
    local root = env.root_of[dir]
    if root and change("config.install", nil, nil, root .. ":" .. rel,
        env.hostname) then
      check("config.install", nil, nil, root .. ":" .. rel, nil,
        env.hostname)
    end
    return c.fs.install(src, dir, rel, mode)
  end
  -- the engine brackets its rollback with broker.rolling_back(true/false):
  -- from then on (the undo, the Lease release) no fault fires
  local broker = setmetatable({ rolling_back = function(on)
    if on then env.rolling_back = true end
    return c.broker.rolling_back(on)
  end }, { __index = c.broker })
  local cc = setmetatable({ fs = fs, broker = broker }, { __index = c })
  return b, cc
end

local Env = {}
Env.__index = Env

--- The keys t.env{} takes, each with the type of its value.
local ENV_KEYS = { addon = "string", name = "string", cluster = "string",
  state = "table", args = "table", files = "table", downloads = "table",
  plan_fetch = "boolean", hostname = "string", timeout = "number",
  memory_limit = "number", state_quota = "number", nodes = "table",
  resolv_conf = "table" }

--- The roots t.env{files = ...} may seed.
local FILE_ROOTS = { args = true, bin = true, state = true }

-- The state t.env{state=} and env:seed_state seed: its keys (a typo such
-- as `verison` would seed no version, and detect would run instead).
local function check_state(what, st, level)
  if type(st) ~= "table" then
    error(what .. " must be a table {version=, params=, ...}", level)
  end
  check_keys(what, st, { version = true, params = true, history = true,
    permissions = true }, level - 1)
end

-- Args files by service: each a file's text, or false for none.
local function check_args(what, args, level)
  if type(args) ~= "table" then error(what .. " must be a table", level) end
  for svc, text in pairs(args) do
    if type(svc) ~= "string" or (type(text) ~= "string" and text ~= false)
    then
      error(string.format("%s[%s] must be the file's text or false, got "
        .. "a %s", what, repr(svc), type(text)), level)
    end
  end
end

--- The keys of a t.env{nodes = {...}} entry, and its agent faults.
local NODE_KEYS = { name = true, args = true, address = true, ready = true,
  agent = true }
local AGENT_FAULTS = { unreachable = true, tls = true, token = true,
  ["down-after-restart"] = true }

--- t.env{nodes = ...}: Node objects for the names the fixture lacks (Ready,
--- an InternalIP), the ready/address given for the others; returns each
--- node's args files and agent fault.
local function add_nodes(env, list)
  local files, faults = {}, {}
  if type(list) ~= "table" then error("t.env: nodes must be a list", 3) end
  for i, n in ipairs(list) do
    if type(n) == "string" then n = { name = n } end
    if type(n) ~= "table" or type(n.name) ~= "string" then
      error("t.env: nodes[" .. i .. "] must be a name or {name = ...}", 3)
    end
    check_keys("t.env: nodes[" .. i .. "]", n, NODE_KEYS, 3)
    if n.args ~= nil then check_args("t.env: nodes[" .. i .. "].args", n.args, 4) end
    if n.agent ~= nil and not AGENT_FAULTS[n.agent]
       and not tostring(n.agent):match("^error") then
      error("t.env: nodes[" .. i .. "].agent must be \"unreachable\", "
        .. "\"tls\", \"token\", \"down-after-restart\" or "
        .. "\"error[: message]\"", 3)
    end
    local node = env.backend:get("v1/Node", n.name)
    if not node then
      node = { apiVersion = "v1", kind = "Node", metadata = { name = n.name,
        labels = { ["kubernetes.io/hostname"] = n.name,
          ["kubernetes.io/arch"] = "amd64", ["kubernetes.io/os"] = "linux" } },
        status = { addresses = { { type = "InternalIP",
          address = string.format("10.0.1.%d", 10 + i) } },
          conditions = { { type = "Ready", status = "True" } } } }
    end
    node.status = node.status or {}
    if n.address then
      node.status.addresses = { { type = "InternalIP", address = n.address } }
    end
    if n.ready ~= nil then
      node.status.conditions = { { type = "Ready",
        status = n.ready and "True" or "False" } }
    end
    env.backend:_seed(node)
    env.hostname = env.hostname or n.name
    files[n.name], faults[n.name] = n.args, n.agent
  end
  if #list > 0 then env.backend:_nodes_changed() end
  return files, faults
end

--- Every node's files (uphook.offline.nodes): MicroK8s's default args
--- files, which t.env's args (this node) and nodes[i].args replace;
--- agent faults; this node's resolv.conf files under env.host_root.
local function node_world(env, o, tmp, node_files, node_faults)
  local offline = require "uphook.backend.offline"
  node_files[env.hostname] = node_files[env.hostname] or o.args
  env.agents = offline.nodes(C, env.backend, env.roots.args, tmp .. "/nodes",
    node_files)
  for name, f in pairs(node_faults) do
    assert(C.sys.write(tmp .. "/nodes/" .. name .. "/agent", f))
  end
  env.host_root = tmp .. "/host"
  for path, text in pairs(o.resolv_conf or {}) do
    if type(path) ~= "string" or path:sub(1, 1) ~= "/" then
      error("t.env: resolv_conf keys are absolute paths", 3)
    end
    assert(C.sys.mkdirs(env.host_root .. path:match("^(.*)/[^/]*$")))
    assert(C.sys.write(env.host_root .. path, text))
  end
end

---A fresh mock world for one hook run (docs/contract.md §6).
---@param o {addon:string, name?:string, cluster?:string, state?:table,
---  args?:table, nodes?:table, resolv_conf?:table, downloads?:table,
---  files?:table, plan_fetch?:boolean, hostname?:string, timeout?:number,
---  memory_limit?:integer, state_quota?:integer}
function M.env(o)
  if type(o) ~= "table" or type(o.addon) ~= "string" then
    error("t.env: addon (the addon folder) is required", 2)
  end
  check_keys("t.env", o, ENV_KEYS, 2)
  if o.state ~= nil then check_state("t.env: state", o.state, 3) end
  if o.args ~= nil then check_args("t.env: args", o.args, 3) end
  for k, want in pairs(ENV_KEYS) do
    if o[k] ~= nil and type(o[k]) ~= want then
      error(string.format("t.env: %s must be a %s, got a %s%s", k, want,
        type(o[k]), k == "cluster" and " (one YAML file; shape variants "
        .. "with env:apply, env:patch, env:delete)" or ""), 2)
    end
  end
  if o.name ~= nil and (type(o.name) ~= "string" or o.name == "") then
    error("t.env: name must be the addon's name (a string)", 2)
  end
  local offline = require "uphook.backend.offline"
  local dir = C.fs.pin(resolve(o.addon))
  if not dir then error("t.env: no addon folder " .. resolve(o.addon), 2) end
  local env = setmetatable({ o = o, faults = {}, runs = {}, dir = dir,
                             change_log = {} }, Env)
  env.name = o.name or basename(env.dir)
  env.hook_path = env.dir .. "/upgrade.lua"
  env.source = read_cached(source_cache, env.hook_path)
  local objs = o.cluster and read_cached(fixture_cache, resolve(o.cluster),
    true) or {}
  env.hostname = o.hostname
  for _, ob in ipairs(objs) do
    if not env.hostname and type(ob) == "table" and ob.kind == "Node" then
      env.hostname = ob.metadata.name
    end
  end
  local seed = nil
  if o.cluster then
    local key = resolve(o.cluster)
    seed = seed_cache[key]
    if not seed then
      seed = offline.seed(C, objs)
      seed_cache[key] = seed
    end
  end
  env.backend = offline.cluster(C, objs, env.hostname, seed)
  local node_files, node_faults = add_nodes(env, o.nodes or {})
  env.hostname = env.hostname or "uphook-test-node"
  env.backend.this_node_name = env.hostname
  local tmp = assert(C.sys.mkdtemp())
  tempdirs[#tempdirs + 1] = tmp
  env.roots = { args = tmp .. "/args", bin = tmp .. "/bin",
    state = tmp .. "/state", addon = env.dir }
  env.root_of = {}
  for k, v in pairs(env.roots) do env.root_of[v] = k end
  for _, d in ipairs { "args", "bin", "state", "journal", "cache" } do
    assert(C.sys.mkdirs(tmp .. "/" .. d))
  end
  env.journal_path = tmp .. "/journal/" .. env.name .. ".journal"
  env.cache_dir = tmp .. "/cache"
  node_world(env, o, tmp, node_files, node_faults)
  for path, text in pairs(o.files or {}) do
    local root, rel = tostring(path):match("^(%a+):(.+)$")
    if not FILE_ROOTS[root] or type(text) ~= "string" then
      error(string.format('t.env: files: "%s" must be args:, bin: or '
        .. "state:<path> = <content>", tostring(path)), 2)
    end
    assert(C.fs.write(env.roots[root], rel, text))
  end
  local dl = {}
  for url, d in pairs(o.downloads or {}) do
    if type(d) == "table" then
      check_keys("t.env: downloads[" .. tostring(url) .. "]", d,
        { file = true, body = true, status = true }, 2)
    elseif type(d) ~= "string" then
      error("t.env: downloads[" .. tostring(url) .. "] must be a fixture "
        .. "path or {file=, body=, status=}", 2)
    end
    if type(d) == "string" then d = { file = resolve(d) }
    elseif d.file then d = { file = resolve(d.file), status = d.status }
    end
    dl[url] = d
  end
  env.net = require("uphook.backend.transfer").mock(C, dl)
  if o.state then env:seed_state(o.state) end
  return env
end

-- Is `node` one of this env's nodes? Raises naming it and them (a fault
-- on a node the cluster does not have would never fire).
local function check_node(env, what, node, level)
  local names = {}
  for _, n in ipairs(env.backend:list("v1/Node")) do
    if n.metadata.name == node then return end
    names[#names + 1] = n.metadata.name
  end
  if node == env.hostname then return end
  table.sort(names)
  error(string.format('%s: node "%s" is not a node of this env (nodes: %s)',
    what, tostring(node), #names > 0 and table.concat(names, ", ")
    or env.hostname), level)
end

---Seed uphook's state ConfigMap (t.env's `state`).
---@param st {version: string, params?: table, history?: table,
---  permissions?: string[]}
function Env:seed_state(st)
  check_state("env:seed_state", st, 3)
  local data = { version = st.version }
  if st.params then data.params = C.yaml.encode(st.params) end
  if st.history then data.history = C.yaml.encode(st.history) end
  if st.permissions then data.permissions = C.yaml.encode(st.permissions) end
  self.backend:apply({ apiVersion = "v1", kind = "ConfigMap",
    metadata = { name = lease.name(self.name), namespace = "kube-system" },
    data = data }, {})
end

--- One confined child serves successive cases (each with a brand-new
--- Lua state, sent with a reset): forking and confining a process per
--- case would cost more than the case. A child is retired after 100 runs
--- or as soon as anything went wrong with it. UPHOOK_TEST_FORK=1 forks
--- one per case instead.
local pool = { child = nil, uses = 0 }

local function spawn(conf)
  local c = pool.child
  if c and C.sys.getenv("UPHOOK_TEST_FORK") ~= "1" and c:reset(conf) then
    return c
  end
  if c then c:close() end
  pool.child, pool.uses = C.broker.spawn(conf), 0
  return pool.child
end

local function release(child)
  pool.uses = pool.uses + 1
  if child ~= pool.child or pool.uses >= 100 then
    child:close()
    if child == pool.child then pool.child = nil end
  end
end

local function run_hook(env, command, args)
  local engine = require "uphook.engine.phases"
  local Report = require "uphook.cmd.report"
  local report = Report.new { capture = true, json = C.json }
  local backend, c = faulty(env, env.backend, C)
  local clock = env.backend.clock
  env.rolling_back = false
  env.change_log = {}
  -- the same command line as `uphook <command> <addon> ARGS...`
  if args ~= nil and type(args) ~= "table" then
    error(string.format("env:%s: args must be a list of strings ({%q}), "
      .. "got a %s", command, tostring(args), type(args)), 2)
  end
  local line = assert(C.cli.split(command, args or {}))
  local code, run = engine.run { command = command, addon = env.name,
    spawn = spawn, release = release,
    source = env.source, chunkname = "@" .. env.hook_path,
    hook_name = env.name .. "/upgrade.lua", argv = line.hook_args,
    reset_params = line.reset_params,
    backend = backend, net = env.net, roots = env.roots, c = c,
    journal_path = env.journal_path, cache_dir = env.cache_dir,
    plan_fetch = env.o.plan_fetch, hostname = env.hostname, report = report,
    timeout = env.o.timeout or 60, record_calls = true,
    state_quota = env.o.state_quota, host_root = env.host_root,
    memory_limit = (env.o.memory_limit or 256) << 20,
    clock_wall = function() return 1.8e9 + (clock and clock:now() or 0) end,
    pid = 1 }
  env.runs[#env.runs + 1] = run
  return { code = code, error = run.error, log = report.lines,
    plan = run.entries, trace = run.trace, noop = run.noop == true,
    from = run.from, to = run.to, calls = run.calls, run = run }
end

---Run `uphook upgrade` on this env. Returns {code, error, log, plan}.
---@param args string[]|nil the arguments after the addon name
---@return table result {code, error, log, plan, trace, run}
function Env:upgrade(args) return run_hook(self, "upgrade", args) end
---Run `uphook plan` on this env: records the plan, changes nothing.
---@param args string[]|nil
---@return table result
function Env:plan(args) return run_hook(self, "plan", args) end
---One object of the mock cluster, or nil.
---@param kind string
---@param name string
---@param ns string|nil
---@return table|nil
function Env:get(kind, name, ns) return self.backend:get(kind, name, ns) end

--- Shaping state: what someone else did to the cluster before the run.

---Server-side apply of objects (a YAML string, an object or a list), as
---`kubectl apply --server-side` does: field manager `kubectl` unless
---opts.manager names another, conflicts forced.
---@param objs string|table
---@param opts? {manager?: string}
---@return table[] the stored objects
function Env:apply(objs, opts)
  opts = opts or {}
  check_keys("env:apply: opts", opts, { manager = true }, 2)
  if type(objs) == "string" then objs = C.yaml.decode_all(objs) end
  if type(objs) == "table" and objs.kind then objs = { objs } end
  local out = {}
  for i, o in ipairs(objs) do
    out[i] = self.backend:apply(o, { manager = opts.manager or "kubectl" })
  end
  return out
end

---A JSON merge patch of one object, as `kubectl patch --type merge`:
---field manager `kubectl-patch` unless opts.manager names another.
---@param kind string
---@param name string
---@param ns string|nil
---@param patch table
---@param opts? {manager?: string}
---@return table the stored object
function Env:patch(kind, name, ns, patch, opts)
  if opts ~= nil then
    check_keys("env:patch: opts", opts, { manager = true }, 2)
  end
  local cur = self.backend:get(kind, name, ns)
  if not cur then
    error(string.format("env:patch: %s %s not found", kind,
      ns and (ns .. "/" .. name) or name), 2)
  end
  local new = tables.merge_patch(cur, patch, C.yaml.null,
    getmetatable(C.yaml.array {}))
  new.metadata = tables.shallow(new.metadata)
  new.metadata.managedFields = nil
  return self.backend:replace(new,
    { manager = (opts and opts.manager) or "kubectl-patch" })
end

---Delete one object, as `kubectl delete`: true, or false when absent.
---@param kind string
---@param name string
---@param ns? string
---@return boolean
function Env:delete(kind, name, ns)
  return self.backend:delete(kind, name, ns)
end
---Objects of a kind.
---@param kind string
---@param opts table|nil {namespace=, labels=}
---@return table[]
function Env:list(kind, opts)
  if opts ~= nil then
    check_keys("env:list: opts", opts, { namespace = true, labels = true }, 2)
  end
  return self.backend:list(kind, opts or {})
end
---Make a rollout never finish (on the mock clock).
---@param kind string
---@param name string
---@param ns string|nil
function Env:stall(kind, name, ns) return self.backend:stall(kind, name, ns) end
---Undo Env:stall.
---@param kind string
---@param name string
---@param ns string|nil
function Env:unstall(kind, name, ns)
  return self.backend:unstall(kind, name, ns)
end

---The saved addon state: {version, params, history, permissions} or nil
---(permissions: those of the last successful upgrade, nil when none are
---recorded).
function Env:state()
  local cm = self.backend:get("v1/ConfigMap", lease.name(self.name),
    "kube-system")
  if not cm or not cm.data then return nil end
  local d = cm.data
  return { version = d.version,
    params = d.params and C.yaml.decode(d.params) or {},
    history = d.history and C.yaml.decode(d.history) or {},
    permissions = d.permissions and C.yaml.decode(d.permissions) or nil }
end

---A file by `root:path`; with `node`, another node's `args:` file.
---@param path string root:relative
---@return string|nil
function Env:file(path, node)
  if node ~= nil then check_node(self, "env:file", node, 3) end
  local root, rel = path:match("^(%a+):(.+)$")
  assert(root and self.roots[root], "env:file: root:path expected")
  if node and node ~= self.hostname then
    assert(root == "args", "env:file: another node has only args: files")
    return self.agents:read(node, rel)
  end
  return C.fs.read(self.roots[root], rel)
end

---A parsed args file of this node, or of `node`.
---@param service string
---@return table<string, string|true>
function Env:args(service, node)
  if node ~= nil then check_node(self, "env:args", node, 3) end
  return C.argsfile.parse(self:file("args:" .. service, node) or "")
end

---A node's running kubelet configuration, as nodes.kubelet_config reads
---it (what the node's kubelet last started with); nil and an error when
---it does not answer.
function Env:kubelet_config(node)
  local kc, err = self.backend:kubelet_config(node)
  if not kc then return nil, type(err) == "table" and err.message or err end
  return kc
end

---The recorded calls of a primitive across this env's runs: list of
---argument lists.
---@param name string the primitive, e.g. "kube.apply"
---@return any[][]
function Env:calls(name)
  if not require("uphook.engine.prims").is_primitive(name) then
    error(string.format("env:calls: %s is not a primitive (kube.apply, "
      .. "service.restart, ...)", repr(name)), 2)
  end
  local out = {}
  for _, run in ipairs(self.runs) do
    for _, call in ipairs(run.calls) do
      if call.name == name then out[#out + 1] = call.args end
    end
  end
  return out
end


---Inject a fault: {on="kube.apply", kind=, name=, namespace=, path=,
---error=, code=, reason=, after=n, times=1}. It fires at the (after+1)th
---match, `times` times (default once), and never while the engine rolls
---back. `on` is a change (kube.apply, kube.delete, config.*,
---service.restart) or a read: kube.get and kube.list (a 404 on a get is
---"absent"), kube.watch (a rollout's or wait's). Returns the fault, whose
---:clear() removes it (env:clear_faults() removes them all).
---@param f table
---@return table fault
function Env:fail(f)
  if type(f) ~= "table" or type(f.on) ~= "string" then
    error('env:fail: {on = "kube.apply", ...} expected', 2)
  end
  check_keys("env:fail", f, FAULT_KEYS, 2)
  if not FAULT_ON[f.on] then
    error(string.format('env:fail: on = "%s" is not a primitive faults '
      .. 'reach (known: %s)', f.on, sorted_keys(FAULT_ON)), 2)
  end
  -- a count that can never match would arm a fault that never fires
  for k, least in pairs { after = 0, times = 1, code = 100 } do
    if f[k] ~= nil and (math.type(f[k]) ~= "integer" or f[k] < least) then
      error(string.format("env:fail: %s must be an integer of at least %d,"
        .. " got %s", k, least, tostring(f[k])), 2)
    end
  end
  if f.node ~= nil then check_node(self, "env:fail", f.node, 3) end
  local fault = tables.shallow(f)
  local faults = self.faults
  faults[#faults + 1] = fault
  return setmetatable(fault, { __index = { clear = function()
    for i = #faults, 1, -1 do
      if faults[i] == fault then table.remove(faults, i) end
    end
  end } })
end

---Remove every fault env:fail injected.
function Env:clear_faults()
  for i = #self.faults, 1, -1 do self.faults[i] = nil end
end

-- Objects the controllers make, which a snapshot leaves out unless asked
-- (a real cluster's differ from run to run: a rollback cannot restore them).
local CONTROLLER_MADE = { ["v1/Pod"] = true, ["apps/v1/ReplicaSet"] = true,
  ["apps/v1/ControllerRevision"] = true, ["v1/Endpoints"] = true,
  ["discovery.k8s.io/v1/EndpointSlice"] = true }

---Every object of the mock cluster, without server-set fields: compare
---two snapshots to assert that a rollback restored the cluster exactly.
---Controller-made objects (Pods, ReplicaSets, ControllerRevisions,
---Endpoints, EndpointSlices) only with `{controller_made = true}`.
---@param opts? {controller_made?: boolean}
function Env:snapshot(opts)
  if opts ~= nil then check_keys("env:snapshot", opts,
                                 { controller_made = true }, 2) end
  local all = opts and opts.controller_made
  local kinds = require "uphook.core.kinds"
  local out = {}
  for _, o in ipairs(self.backend:objects()) do
    if not (o.kind == "Lease" and o.metadata.name == lease.name(self.name))
        and (all or not CONTROLLER_MADE[o.apiVersion .. "/" .. o.kind])
    then
      local key = string.format("%s/%s/%s/%s", o.apiVersion, o.kind,
        o.metadata.namespace or "", o.metadata.name)
      local c = kinds.clean(o)
      -- who owns which field is part of what a rollback restores
      c.metadata.managedFields = o.metadata.managedFields
      out[key] = c
    end
  end
  return out
end

---The node's files of an env (args:, bin:, state:), "root:path" -> bytes.
---@return table<string, string>
function Env:files()
  local out = {}
  local function walk(root, dir, rel)
    for _, n in ipairs(C.sys.listdir(dir) or {}) do
      local p, r = dir .. "/" .. n, rel == "" and n or (rel .. "/" .. n)
      if C.sys.kind(p) == "dir" then walk(root, p, r)
      else out[root .. ":" .. r] = C.sys.read(p) or "(unreadable)" end
    end
  end
  for _, root in ipairs { "args", "bin", "state" } do
    walk(root, self.roots[root], "")
  end
  -- other nodes: their key=value lines (the cluster-agent rewrites a file
  -- trimmed, without blank lines) and what their kubelet runs with
  local function lines(text)
    local t = {}
    for l in (text or ""):gmatch("[^\n]+") do
      l = l:match("^%s*(.-)%s*$")
      if l ~= "" then t[#t + 1] = l end
    end
    return table.concat(t, "\n")
  end
  for _, n in ipairs(self.backend:list("v1/Node")) do
    local name = n.metadata.name
    if name ~= self.hostname and self.agents then
      local dir = self.agents:args_dir(name)
      for _, f in ipairs(C.sys.listdir(dir) or {}) do
        out[name .. " args:" .. f] = lines(C.sys.read(dir .. "/" .. f))
      end
      out[name .. " kubelet"] = lines(C.sys.read(self.agents.nodes_dir
        .. "/" .. name .. "/kubelet.running"))
    end
  end
  return out
end

---The services restarted on this node, or on `node`, in order.
---@param node? string
---@return string[]
function Env:restarts(node)
  if node ~= nil then check_node(self, "env:restarts", node, 3) end
  local out = {}
  if node == nil or node == self.hostname then
    for i, r in ipairs(self.backend.restarts) do out[i] = r.service end
    return out
  end
  for i, svc in ipairs(self.agents.restarts[node] or {}) do out[i] = svc end
  return out
end

---The changes the last run made, in order: {on=, kind=, name=, path=}
---(what t.each_fault faults in turn).
---@return table[]
function Env:changes()
  return self.change_log or {}
end

local function cleanup()
  for i = #tempdirs, 1, -1 do
    C.sys.rmtree(tempdirs[i])
    tempdirs[i] = nil
  end
end

--- Runner -------------------------------------------------------------

local function collect(path, loader)
  lib.take_cases()
  current_file = path
  local ok, e = pcall(loader, path)
  local got = lib.take_cases()
  if not ok then
    return nil, e
  end
  return got
end

local function traceback(e)
  if type(e) == "table" then e = e.message or repr(e) end
  return debug.traceback(tostring(e), 2)
end

local function short_trace(tb)
  -- keep the message (all of it, whoever raised it) and the frames in
  -- test and hook files; drop the harness's frames
  local out, frames = {}, false
  for line in tb:gmatch("[^\n]+") do
    if line == "stack traceback:" then frames = true end
    if not frames or not (line:find("lua/cmd/test.lua", 1, true)
        or line:find("lua/cmd/testlib.lua", 1, true)
        or line:find("lua/cmd/testchild.lua", 1, true)
        or line:find("[C]: in function 'xpcall'", 1, true)) then
      out[#out + 1] = line
    end
  end
  return table.concat(out, "\n    ")
end

--- Confined test files (docs/security.md, "Test files") ------------------
--- A test file runs in a confined child like a hook's; its t.env handles
--- name environments held here, and each method call is a request.

local CASE_TIMEOUT = 600    -- real seconds a case may run (its waits are
                            -- on the mock clock); t.run's opts.case_timeout
local case_timeout = CASE_TIMEOUT

--- The methods a test file may call on an environment.
local ENV_METHODS = { upgrade = true, plan = true, get = true, list = true,
  state = true, seed_state = true, args = true, file = true, files = true,
  calls = true, changes = true, snapshot = true, stall = true,
  unstall = true, apply = true, patch = true, delete = true,
  clear_faults = true, restarts = true, fail = true,
  kubelet_config = true }

-- What crosses back to the child: plain data (a run's record stays here).
local function plain_result(method, ...)
  local r = ...
  if (method == "upgrade" or method == "plan") and type(r) == "table" then
    local out = tables.shallow(r)
    out.run = nil
    return out
  end
  return ...
end

-- The broker's side of a test file's requests, for one file's child.
local function test_requests(session)
  return function(name, args)
    local null = C.yaml.null
    local a, n = {}, #args
    for i = 1, n do if args[i] ~= null then a[i] = args[i] end end
    if name == "__test.env" then
      local env = M.env(a[1])
      session.envs[#session.envs + 1] = env
      return #session.envs
    elseif name == "__test.call" then
      local env, method = session.envs[a[1]], a[2]
      if not env then
        error("this environment is gone: an environment lives for the case "
          .. "that made it (call t.env inside t.case's function)", 0)
      end
      if method == "clear_fault" then
        local f = session.faults[a[3]]
        if f then f:clear() end
        return
      end
      if not ENV_METHODS[method] or type(env[method]) ~= "function" then
        error("env:" .. tostring(method) .. " is not a method of an "
          .. "environment", 0)
      end
      if method == "fail" then
        session.faults[#session.faults + 1] = env:fail(a[3])
        return #session.faults
      end
      return plain_result(method, env[method](env, table.unpack(a, 3, n)))
    end
    if name == "__uphook.require" then     -- a module beside the test file
      local mod = a[1]
      if type(mod) ~= "string" or #mod > 128 or mod:find("^uphook%.")
          or not mod:find("^[%w_]+[%w_.]*$") or mod:find("..", 1, true) then
        return nil
      end
      local path = dirname(session.path) .. "/" .. mod:gsub("%.", "/")
        .. ".lua"
      local src = C.sys.kind(path) == "file" and C.sys.read(path)
      if not src then return nil end
      return src, "@" .. path
    end
    error(tostring(name) .. " is not a request a test file can make", 0)
  end
end

-- The child of a confined test file, started (and the file loaded, its
-- cases registered) on first use in this process: a worker forked for a
-- file's cases starts its own.
local function file_child(file)
  if file.child then return file.child end
  local child, err = C.broker.spawn { source = file.source,
    chunkname = "@" .. file.path, test = true, timeout = case_timeout,
    deadline = C.sys.now() + case_timeout, memory_limit = 256 << 20 }
  if not child then return nil, err end
  file.session = { envs = {}, faults = {}, path = file.path }
  local ok, desc, _, trace = child:loaded(test_requests(file.session))
  if not ok then
    child:close()
    return nil, tostring(desc) .. (trace and ("\n" .. trace) or "")
  end
  file.child, file.desc = child, desc[1]
  return child
end

-- Load a test file in its confined child: its cases, by index.
local function collect_confined(path)
  current_file = path
  local source, rerr = C.sys.read(path)
  if not source then return nil, path .. ": " .. tostring(rerr) end
  local file = { path = path, source = source }
  local _, err = file_child(file)
  if err then return nil, err end
  local list = { serial = file.desc.serial, file = file }
  for i, c in ipairs(file.desc.cases) do
    list[i] = { name = c.name, skip = c.skip, index = i, file = file }
  end
  return list
end

local function close_child(file)
  if file and file.child then file.child:close(); file.child = nil end
end

-- Run case c.index of a confined file: true, or false and the failure.
local function run_confined(c)
  local child, err = file_child(c.file)
  if not child then return false, err end
  local session = c.file.session
  session.envs, session.faults = {}, {}
  local ok, res, kind, trace = child:run("case", { index = c.index },
    test_requests(session), C.sys.now() + case_timeout)
  session.envs, session.faults = {}, {}
  if ok then return true end
  if kind ~= "error" then close_child(c.file) end   -- a crash, a timeout
  local msg = tostring(res)
  if trace then msg = msg .. "\n" .. trace end
  return false, msg
end

local function run_case(c, opts)
  local r = { name = c.name }
  local t0 = opts.clock and opts.clock() or 0
  if c.skip then
    r.skipped = c.skip
  elseif c.index then
    local ok, e = run_confined(c)
    r.ok, r.err = ok, (not ok) and short_trace(e) or nil
  else
    local ok, e = xpcall(c.fn, traceback)
    r.ok, r.err = ok, (not ok) and short_trace(e) or nil
  end
  r.time = (opts.clock and opts.clock() or 0) - t0
  if opts.after_case then opts.after_case() end
  return r
end

--- Run cases in W forked workers; results come back as JSON lines and
--- are reported in case order.
local function run_parallel(list, W, opts)
  local sys, json = opts.sys, opts.json
  if opts.before_fork then opts.before_fork() end
  local workers = {}
  for k = 1, W do
    local rfd, wfd = sys.pipe()
    local pid = sys.fork()
    if pid == 0 then
      sys.fdclose(rfd)
      for i = k, #list, W do
        local r = run_case(list[i], opts)
        r.i = i
        sys.fdwrite(wfd, json.encode(r) .. "\n")
      end
      if opts.before_fork then opts.before_fork() end
      sys.crash(0)
    end
    sys.fdclose(wfd)
    workers[k] = { pid = pid, fd = rfd }
  end
  local results = {}
  for k, w in ipairs(workers) do
    for line in sys.fdreadall(w.fd):gmatch("[^\n]+") do
      local r = json.decode(line)
      results[r.i] = r
    end
    sys.fdclose(w.fd)
    local status = sys.waitpid(w.pid)
    for i = k, #list, W do
      results[i] = results[i] or { name = list[i].name, ok = false,
        err = "the test worker died (status " .. status .. ")", time = 0 }
    end
  end
  return results
end

---Run test files: each in a confined child (`opts.confined`, what `uphook
---test` does), or with `opts.loader(path)`, which loads and runs it here;
---`opts.filter` selects by name; `opts.jobs` > 1 spreads a file's cases
---over forked workers; `opts.case_timeout` bounds a confined case (real
---seconds, default 600).
---@return table results, integer passed, integer failed, integer skipped
---@param files string[] the test files
---@param opts table {loader=, filter=, clock=, jobs=, ...}
function M.run(files, opts)
  local results, np, nf, ns = {}, 0, 0, 0
  local outer_file = current_file     -- a run inside a case (the harness's
                                      -- own tests) gives it back
  case_timeout = opts.case_timeout or CASE_TIMEOUT
  local out = opts.out or io.write
  for _, path in ipairs(files) do
    local list, lerr
    if opts.confined then
      list, lerr = collect_confined(path)
    else
      list, lerr = collect(path, opts.loader)
    end
    if not list then
      nf = nf + 1
      out(string.format("FAIL %s (loading)\n    %s\n", path,
        short_trace(tostring(lerr))))
      results[#results + 1] = { file = path, name = "(load)", ok = false,
                                err = tostring(lerr), time = 0 }
    end
    local selected = {}
    for _, c in ipairs(list or {}) do
      if not opts.filter or c.name:find(opts.filter, 1, true) then
        selected[#selected + 1] = c
      end
    end
    local W = math.min(opts.jobs or 1, #selected // 8)
    if list and list.serial then W = 1 end
    local rs
    if W > 1 then
      close_child(list.file)      -- each worker starts its own
      rs = run_parallel(selected, W, opts)
    else
      rs = {}
      for i, c in ipairs(selected) do rs[i] = run_case(c, opts) end
    end
    for _, r in ipairs(rs) do
      r.file = path
      if r.skipped then
        ns = ns + 1
        out(string.format("skip %s: %s (%s)\n", path, r.name, r.skipped))
      else
        if r.ok then np = np + 1 else nf = nf + 1 end
        out(string.format("%s %s: %s\n", r.ok and "ok  " or "FAIL", path,
                          r.name))
        if not r.ok then out("    " .. r.err .. "\n") end
      end
      results[#results + 1] = r
    end
    close_child(list and list.file)
  end
  current_file = outer_file
  return results, np, nf, ns
end

--- `uphook test` ----------------------------------------------------------

local function find_tests(path, out)
  local kind = C.sys.kind(path)
  if kind == "file" then
    out[#out + 1] = path
  elseif kind == "dir" then
    local names = assert(C.sys.listdir(path))
    table.sort(names)
    for _, name in ipairs(names) do
      local p = path == "." and name or (path .. "/" .. name)
      local k = C.sys.kind(p)
      if k == "dir" then find_tests(p, out)
      elseif k == "file" and name:match("_test%.lua$") then
        out[#out + 1] = p
      end
    end
  else
    return nil, "uphook test: no such file or folder: " .. path
  end
  return out
end

local function xml_escape(s)
  return (tostring(s):gsub("[<>&\"]", { ["<"] = "&lt;", [">"] = "&gt;",
    ["&"] = "&amp;", ['"'] = "&quot;" }):gsub("[%z\1-\8\11\12\14-\31]", ""))
end

local function write_junit(path, results, np, nf, ns)
  local out = { '<?xml version="1.0" encoding="UTF-8"?>',
    string.format('<testsuite name="uphook" tests="%d" failures="%d" '
      .. 'skipped="%d">', np + nf + ns, nf, ns) }
  for _, r in ipairs(results) do
    out[#out + 1] = string.format('  <testcase classname="%s" name="%s" '
      .. 'time="%.6f">', xml_escape(r.file), xml_escape(r.name), r.time or 0)
    if r.skipped then
      out[#out + 1] = '    <skipped message="' .. xml_escape(r.skipped)
        .. '"/>'
    elseif not r.ok then
      out[#out + 1] = '    <failure message="' .. xml_escape(
        (r.err or ""):match("^[^\n]*")) .. '">' .. xml_escape(r.err or "")
        .. "</failure>"
    end
    out[#out + 1] = "  </testcase>"
  end
  out[#out + 1] = "</testsuite>"
  local ok, err = C.sys.write(path, table.concat(out, "\n") .. "\n")
  if not ok then error("--junit: " .. tostring(err), 0) end
end

---Entry point of `uphook test [path...]`.
---@param o table options of host/cli.c
---@param c table the C families
---@return integer exit code
function M.main(o, c)
  C = c
  local R = require "uphook.core.run"
  local paths = o.operands
  if #paths == 0 then paths = { "." } end       -- the addon repository
  local files = {}
  for _, p in ipairs(paths) do
    local ok, err = find_tests(p, files)
    if not ok then
      io.stderr:write(err, "\n")
      return R.USAGE
    end
  end
  local jobs = o.jobs or c.sys.nproc()
  -- the project's own engine tests (tests/lua) run unconfined, with the
  -- engine's modules: an environment variable an addon repository cannot
  -- set for the user who runs its tests
  local confined = c.sys.getenv("UPHOOK_TEST_UNCONFINED") ~= "1"
  local results, np, nf, ns = M.run(files, { confined = confined,
    filter = o.filter, clock = c.sys.now, after_case = cleanup,
    jobs = jobs, sys = c.sys, json = c.json,
    before_fork = function()     -- a worker must not share the child
      if pool.child then pool.child:close(); pool.child = nil end
      -- what a case's run requires, compiled once here, not in each worker
      require "uphook.engine.phases"
      require "uphook.cmd.report"
      require "uphook.backend.offline"
    end,
    loader = function(path)
      local env = setmetatable({}, { __index = _G })
      local chunk, err = loadfile(path, "t", env)
      if not chunk then error(err, 0) end
      chunk()
    end,
    out = function(s) io.stdout:write(s) end,
  })
  cleanup()
  -- a run that tested nothing says so (a wrong folder or filter would
  -- otherwise read as a pass)
  if #files == 0 then
    io.stderr:write("uphook test: no *_test.lua file under ",
      table.concat(paths, " "), "\n")
  elseif np + nf + ns == 0 and o.filter then
    io.stderr:write(string.format("uphook test: no test name contains %q "
      .. "(--filter)\n", o.filter))
  end
  if o.junit then write_junit(o.junit, results, np, nf, ns) end
  io.stdout:write(string.format("%d passed, %d failed%s\n", np, nf,
    ns > 0 and (", " .. ns .. " skipped") or ""))
  return nf == 0 and 0 or 1
end

return M

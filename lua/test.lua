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
local tables = require "uphook.tables"

local M = {}

local cases = {}        -- cases registered by the file being loaded
local current_file = "?"

---Render a value for assertion messages, bounded in size.
---@param v any
---@param depth? integer
---@return string
local function repr(v, depth, seen)
  depth = depth or 0
  if type(v) == "string" then return string.format("%q", v) end
  if type(v) ~= "table" then return tostring(v) end
  seen = seen or {}
  if seen[v] or depth > 4 then return "{...}" end
  seen[v] = true
  local keys, out = {}, {}
  for k in pairs(v) do keys[#keys + 1] = k end
  table.sort(keys, function(a, b)
    if type(a) == type(b) and (type(a) == "number" or type(a) == "string")
    then return a < b end
    return type(a) < type(b)
  end)
  for i, k in ipairs(keys) do
    if i > 20 then out[#out + 1] = "..."; break end
    local ks = (type(k) == "string" and k:match("^[%a_][%w_]*$")) and k
               or "[" .. repr(k, depth + 1, seen) .. "]"
    out[#out + 1] = ks .. "=" .. repr(v[k], depth + 1, seen)
  end
  seen[v] = nil
  return "{" .. table.concat(out, ", ") .. "}"
end
M.repr = repr

---Deep equality: true, or false and the path of the first difference
---(".spec.replicas"; "" when the values themselves differ).
---@param a any
---@param b any
---@return boolean equal, string|nil path
function M.deep_equal(a, b)
  return tables.diff(a, b)
end

local function fail(msg, level)
  error(msg, (level or 2) + 1)
end

---Register a test case.
---@param name string
---@param fn fun()
function M.case(name, fn)
  assert(type(name) == "string", "t.case: name must be a string")
  assert(type(fn) == "function", "t.case: fn must be a function")
  cases[#cases + 1] = { name = name, fn = fn, file = current_file }
end

---Run this file's cases one after another, never in parallel workers
---(for tests that share something outside their t.env, like a server).
function M.serial()
  cases.serial = true
end

---Register a skipped test case; it is reported, never silent.
---@param name string
---@param why string
function M.skip(name, why)
  cases[#cases + 1] = { name = name, skip = why or "skipped",
                        file = current_file }
end

local function eq(actual, expected, msg, level)
  local ok, path = tables.diff(actual, expected)
  if not ok then
    local where = (path ~= "" and " at " .. path) or ""
    fail(string.format("%sexpected %s, got %s%s",
      msg and (msg .. ": ") or "", repr(expected), repr(actual), where),
      level + 1)
  end
end

---Assert deep equality.
---@param actual any
---@param expected any
---@param msg? string
function M.eq(actual, expected, msg)
  eq(actual, expected, msg, 2)
end

---Assert that v is truthy.
---@param v any
---@param msg? string
function M.ok(v, msg)
  if not v then fail(msg or ("expected a true value, got " .. repr(v)), 2) end
  return v
end

---Assert that s matches a Lua pattern.
---@param s any
---@param pattern string
function M.match(s, pattern)
  if type(s) ~= "string" or not s:find(pattern) then
    fail(string.format("expected %s to match %q", repr(s), pattern), 2)
  end
end

---Assert that fn raises an error matching pattern.
---@param fn fun()
---@param pattern? string
function M.err(fn, pattern)
  local ok, e = pcall(fn)
  if ok then fail("expected an error, got none", 2) end
  e = type(e) == "table" and (e.message or repr(e)) or tostring(e)
  if pattern and not e:find(pattern) then
    fail(string.format("expected error matching %q, got %q", pattern, e), 2)
  end
  return e
end

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
  [404] = "NotFound", [409] = "Conflict", [422] = "Invalid",
  [429] = "TooManyRequests", [500] = "InternalError",
  [503] = "ServiceUnavailable", [504] = "Timeout" }

--- Wrap a backend and the C families so that env:fail faults fire at
--- the primitive's change, after what came before it really happened.
local function faulty(env, backend, c)
  local function check(on, kind, name, path)
    if env.rolling_back then return end   -- faults hit the hook's changes
    for _, f in ipairs(env.faults) do
      if f.on == on and (f.kind == nil or f.kind == kind)
         and (f.name == nil or f.name == name)
         and (f.path == nil or f.path == path) then
        f.seen = (f.seen or 0) + 1
        if f.seen > (f.after or 0) and f.seen <= (f.after or 0)
           + (f.times or 1) then
          local code = f.code or 500
          error({ code = code, reason = f.reason or FAULT_REASONS[code]
            or "InternalError",
            message = f.error or ("injected fault in " .. on) }, 0)
        end
      end
    end
  end
  -- a change of the hook's, recorded in env.changes (t.each_fault faults
  -- each in turn); the engine's own Lease is not one
  local function change(on, kind, name, path)
    if env.rolling_back then return false end
    if kind == "Lease" and name == "uphook-" .. env.name then return false end
    env.changes[#env.changes + 1] = { on = on, kind = kind, name = name,
      path = path }
    return true
  end
  local b = setmetatable({}, { __index = backend })
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
    if change("service.restart", nil, svc) then
      check("service.restart", nil, svc)
    end
    return backend:restart(svc)
  end
  local fs = setmetatable({}, { __index = c.fs })
  for _, op in ipairs { "write", "remove" } do
    fs[op] = function(dir, rel, ...)
      local root = env.root_of[dir]
      if root and change("config." .. op, nil, nil, root .. ":" .. rel) then
        check("config." .. op, nil, nil, root .. ":" .. rel)
        if root == "args" then
          check("config.set_args", nil, rel)
        end
      end
      return c.fs[op](dir, rel, ...)
    end
  end
  function fs.install(src, dir, rel, mode)
    local root = env.root_of[dir]
    if root and change("config.install", nil, nil, root .. ":" .. rel) then
      check("config.install", nil, nil, root .. ":" .. rel)
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

---A fresh mock world for one hook run (docs/contract.md §6).
---@param o {addon:string, cluster?:string, state?:table, args?:table,
---  downloads?:table, files?:table, plan_fetch?:boolean, hostname?:string,
---  timeout?:number, memory_limit?:integer, state_quota?:integer}
function M.env(o)
  assert(type(o) == "table" and type(o.addon) == "string",
    "t.env: addon (the addon folder) is required")
  local offline = require "uphook.offline"
  local dir = C.sys.realpath(resolve(o.addon))
  if not dir then error("t.env: no addon folder " .. resolve(o.addon), 2) end
  local env = setmetatable({ o = o, faults = {}, runs = {}, dir = dir }, Env)
  env.name = basename(env.dir)
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
  env.hostname = env.hostname or "uphook-test-node"
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
  for svc, text in pairs(o.args or {}) do
    assert(C.fs.write(env.roots.args, svc, text))
  end
  for path, text in pairs(o.files or {}) do
    local root, rel = path:match("^(%a+):(.+)$")
    assert(C.fs.write(env.roots[root], rel, text))
  end
  local dl = {}
  for url, d in pairs(o.downloads or {}) do
    if type(d) == "string" then d = { file = resolve(d) }
    elseif d.file then d = { file = resolve(d.file), status = d.status }
    end
    dl[url] = d
  end
  env.net = offline.net(C, dl)
  if o.state then env:seed_state(o.state) end
  return env
end

function Env:seed_state(st)
  local data = { version = st.version }
  if st.params then data.params = C.yaml.encode(st.params) end
  if st.history then data.history = C.yaml.encode(st.history) end
  self.backend:apply({ apiVersion = "v1", kind = "ConfigMap",
    metadata = { name = "uphook-" .. self.name, namespace = "kube-system" },
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
  local engine = require "uphook.engine"
  local Report = require "uphook.report"
  local report = Report.new { capture = true, json = C.json }
  local backend, c = faulty(env, env.backend, C)
  local clock = env.backend.clock
  env.rolling_back = false
  env.changes = {}
  -- the same command line as `uphook <command> <addon> ARGS...`
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
    state_quota = env.o.state_quota,
    memory_limit = (env.o.memory_limit or 256) << 20,
    clock_wall = function() return 1.8e9 + (clock and clock:now() or 0) end,
    pid = 1 }
  env.runs[#env.runs + 1] = run
  return { code = code, error = run.error, log = report.lines,
    plan = run.entries, trace = run.trace, run = run }
end

---Run `uphook upgrade` on this env. Returns {code, error, log, plan}.
function Env:upgrade(args) return run_hook(self, "upgrade", args) end
---Run `uphook plan` on this env: records the plan, changes nothing.
function Env:plan(args) return run_hook(self, "plan", args) end
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
function Env:list(kind, opts) return self.backend:list(kind, opts or {}) end
function Env:stall(kind, name, ns) return self.backend:stall(kind, name, ns) end
function Env:unstall(kind, name, ns)
  return self.backend:unstall(kind, name, ns)
end

---The saved addon state: {version, params, history} or nil.
function Env:state()
  local cm = self.backend:get("v1/ConfigMap", "uphook-" .. self.name,
    "kube-system")
  if not cm or not cm.data then return nil end
  local d = cm.data
  return { version = d.version,
    params = d.params and C.yaml.decode(d.params) or {},
    history = d.history and C.yaml.decode(d.history) or {} }
end

function Env:file(path)
  local root, rel = path:match("^(%a+):(.+)$")
  assert(root and self.roots[root], "env:file: root:path expected")
  return C.fs.read(self.roots[root], rel)
end

function Env:args(service)
  return C.argsfile.parse(self:file("args:" .. service) or "")
end

---The recorded calls of a primitive across this env's runs: list of
---argument lists.
function Env:calls(name)
  local out = {}
  for _, run in ipairs(self.runs) do
    for _, call in ipairs(run.calls) do
      if call.name == name then out[#out + 1] = call.args end
    end
  end
  return out
end

---Inject a fault: {on="kube.apply", kind=, name=, path=, error=, after=n,
---times=1}. It fires at the (after+1)th matching change, `times` times
---(default once), and never while the engine rolls back.
function Env:fail(f)
  assert(type(f) == "table" and type(f.on) == "string",
    "env:fail: {on = \"kube.apply\", ...} expected")
  self.faults[#self.faults + 1] = f
end

---Every object of the mock cluster, without server-set fields: compare
---two snapshots to assert that a rollback restored the cluster exactly.
function Env:snapshot()
  local kinds = require "uphook.kinds"
  local out = {}
  for _, o in ipairs(self.backend:objects()) do
    if not (o.kind == "Lease" and o.metadata.name == "uphook-" .. self.name)
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

--- The node's files of an env (args:, bin:, state:), "root:path" -> bytes.
local function node_files(env)
  local out = {}
  local function walk(root, dir, rel)
    for _, n in ipairs(C.sys.listdir(dir) or {}) do
      local p, r = dir .. "/" .. n, rel == "" and n or (rel .. "/" .. n)
      if C.sys.kind(p) == "dir" then walk(root, p, r)
      else out[root .. ":" .. r] = C.sys.read(p) or "(unreadable)" end
    end
  end
  for _, root in ipairs { "args", "bin", "state" } do
    walk(root, env.roots[root], "")
  end
  return out
end

local function change_label(ch)
  return ch.path or ((ch.kind and (ch.kind .. " ") or "") .. tostring(ch.name))
end

---Fault every change an upgrade makes, in turn, and check that each one
---is rolled back exactly. A first run of `env_fn()` without a fault
---records the changes (applies, deletes, file writes, installs,
---restarts, the state commit); then, for each change, a fresh
---`env_fn()` fails at it and the upgrade must exit 4 when it was the
---first change (nothing to undo) or 1 after one, with the fault's
---message, leaving the cluster (`env:snapshot()`), the node's files and
---the state as they were.
---@param env_fn fun(): table a fresh env each call (`t.env{...}`)
---@param opts? {args?: string[]} the upgrade's command-line arguments
---@return integer changes the number of changes faulted
function M.each_fault(env_fn, opts)
  opts = opts or {}
  local args = opts.args or {}
  local happy = env_fn()
  local hr = happy:upgrade(args)
  eq(hr.code, 0, "the upgrade without a fault (" .. tostring(hr.error)
    .. ")", 2)
  local seen, changes = {}, happy.changes
  if #changes == 0 then fail("t.each_fault: the upgrade changed nothing", 2) end
  for i, ch in ipairs(changes) do
    seen[ch.on] = (seen[ch.on] or 0) + 1
    local what = string.format("a fault at change %d of %d (%s #%d, %s)",
      i, #changes, ch.on, seen[ch.on], change_label(ch))
    local msg = string.format("[injected fault %d]", i)
    local e = env_fn()
    local before, files, st = e:snapshot(), node_files(e), e:state()
    e:fail { on = ch.on, after = seen[ch.on] - 1, error = msg }
    local r = e:upgrade(args)
    eq(r.code, i == 1 and 4 or 1, what .. ": the exit code ("
      .. tostring(r.error) .. ")", 2)
    if type(r.error) ~= "string" or not r.error:find(msg, 1, true) then
      fail(string.format("%s: expected the error to name %s, got %s", what,
        msg, repr(r.error)), 2)
    end
    eq(e:snapshot(), before, what .. ": the cluster", 2)
    eq(node_files(e), files, what .. ": the node's files", 2)
    eq(e:state(), st, what .. ": the state", 2)
  end
  return #changes
end

local function cleanup()
  for i = #tempdirs, 1, -1 do
    C.sys.rmtree(tempdirs[i])
    tempdirs[i] = nil
  end
end

--- Runner -------------------------------------------------------------

local function collect(path, loader)
  cases, current_file = {}, path
  local ok, e = pcall(loader, path)
  local got = cases
  cases = {}
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
  -- keep the message and the frames in test/hook files, drop the harness
  local out = {}
  for line in tb:gmatch("[^\n]+") do
    if not line:find("lua/test.lua", 1, true)
       and not line:find("[C]: in function 'xpcall'", 1, true) then
      out[#out + 1] = line
    end
  end
  return table.concat(out, "\n    ")
end

local function run_case(c, opts)
  local r = { name = c.name }
  local t0 = opts.clock and opts.clock() or 0
  if c.skip then
    r.skipped = c.skip
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

---Run test files. `opts.loader(path)` loads and runs a test file (so the
---C host can give it a fresh environment); `opts.filter` selects by name;
---`opts.jobs` > 1 spreads a file's cases over forked workers.
---@return table results, integer passed, integer failed, integer skipped
function M.run(files, opts)
  local results, np, nf, ns = {}, 0, 0, 0
  local out = opts.out or io.write
  for _, path in ipairs(files) do
    local list, lerr = collect(path, opts.loader)
    if not list then
      nf = nf + 1
      out(string.format("FAIL %s (loading)\n    %s\n", path, tostring(lerr)))
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
  end
  return results, np, nf, ns
end

--- `uphook test` ----------------------------------------------------------

local function find_tests(path, out)
  local kind = C.sys.kind(path)
  if kind == "file" then
    out[#out + 1] = path
  elseif kind == "dir" then
    for _, name in ipairs(assert(C.sys.listdir(path))) do
      local p = path .. "/" .. name
      local k = C.sys.kind(p)
      if k == "dir" then find_tests(p, out)
      elseif k == "file" and name:match("_test%.lua$") then
        out[#out + 1] = p
      end
    end
  else
    error("uphook test: no such file or folder: " .. path, 0)
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
function M.main(o, c)
  C = c
  local paths = o.operands
  if #paths == 0 then paths = { "hooks" } end
  local files = {}
  for _, p in ipairs(paths) do find_tests(p, files) end
  local jobs = o.jobs or c.sys.nproc()
  local results, np, nf, ns = M.run(files, {
    filter = o.filter, clock = c.sys.now, after_case = cleanup,
    jobs = jobs, sys = c.sys, json = c.json,
    before_fork = function()     -- a worker must not share the child
      if pool.child then pool.child:close(); pool.child = nil end
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
  if o.junit then write_junit(o.junit, results, np, nf, ns) end
  io.stdout:write(string.format("%d passed, %d failed%s\n", np, nf,
    ns > 0 and (", " .. ns .. " skipped") or ""))
  return nf == 0 and 0 or 1
end

---For tests that use t.env outside `uphook test` (dev runner).
function M.set_modules(c) C = c end

return M

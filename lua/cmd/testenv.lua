--- uphook.cmd.testenv: t.env's worlds and their methods (docs/contract.md
--- §6): a mock cluster from a fixture, the addon's files, its nodes, the
--- hook run in a confined child per env:upgrade/env:plan, and what a test
--- reads back. A helper of `uphook test` (lua/cmd/test.lua, the runner),
--- not a command.
local tables = require "uphook.core.tables"
local lib = require "uphook.cmd.testlib"
local lease = require "uphook.engine.lease"
local faults = require "uphook.cmd.testfaults"
local topts = require "uphook.cmd.testopts"

local M = {}

--- What the runner sets: the C families, and the test file being run
--- (t.env's relative paths are the file's).
M.ctx = topts.ctx
local ctx = M.ctx

local repr = lib.repr
local dirname, basename, resolve = topts.dirname, topts.basename, topts.resolve
local read_cached, addon_dir = topts.read_cached, topts.addon_dir
local sorted_keys, check_keys = topts.sorted_keys, topts.check_keys
local FILE_ROOTS, check_state = topts.FILE_ROOTS, topts.check_state
local check_env_opts, downloads_of = topts.check_env_opts, topts.downloads_of
local FAULT_KEYS, FAULT_ON, faulty = faults.KEYS, faults.ON, faults.wrap

local fixture_cache, source_cache, seed_cache = {}, {}, {}
local tempdirs = {}

local Env = {}
Env.__index = Env

--- t.env{nodes = ...}: Node objects for the names the fixture lacks (Ready,
--- an InternalIP), the ready/address given for the others; returns each
--- node's args files and agent fault.
local function add_nodes(env, list)
  local files, agent_faults = {}, {}
  if type(list) ~= "table" then error("t.env: nodes must be a list", 3) end
  for i, n in ipairs(list) do
    n = topts.node_entry(i, n)
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
    files[n.name], agent_faults[n.name] = n.args, n.agent
  end
  if #list > 0 then env.backend:_nodes_changed() end
  return files, agent_faults
end

--- Each node's args files: the fixture's NodeArgs, with t.env's args
--- and nodes[i].args replacing file by file.
local function with_fixture_args(fixture_args, node_files)
  local out = {}
  for _, t in ipairs { fixture_args, node_files } do
    for node, files in pairs(t) do
      out[node] = out[node] or {}
      for f, text in pairs(files) do out[node][f] = text end
    end
  end
  return out
end

--- Every node's files (uphook.offline.nodes): MicroK8s's default args
--- files, which t.env's args (this node) and nodes[i].args replace;
--- agent faults; this node's resolv.conf files under env.host_root.
local function node_world(env, o, tmp, node_files, node_faults)
  local offline = require "uphook.backend.offline"
  env.agents = offline.nodes(ctx.c, env.backend, env.roots.args, tmp .. "/nodes",
    node_files)
  for name, f in pairs(node_faults) do
    assert(ctx.c.fs.write(env.agents:node_dir(name), "agent", f))
  end
  env.host_root = tmp .. "/host"
  assert(ctx.c.sys.mkdirs(env.host_root))
  for path, text in pairs(o.resolv_conf or {}) do
    if type(path) ~= "string" or path:sub(1, 1) ~= "/"
       or type(text) ~= "string" then
      error("t.env: resolv_conf is {[\"/etc/resolv.conf\"] = text, ...}: "
        .. "absolute paths as this node has them", 3)
    end
    -- written beneath the world's own host root, never through `..` or a
    -- symlink out of it (docs/security.md, "Offline worlds and uphook test")
    local ok, done, err = pcall(ctx.c.fs.write, env.host_root, path:sub(2),
      text)
    if not (ok and done) then
      error("t.env: resolv_conf: " .. lib.repr(path) .. ": "
        .. tostring(ok and err or done), 3)
    end
  end
end

-- t.env's `files`, written into the env's roots.
local function write_files(env, files)
  for path, text in pairs(files) do
    local root, rel = tostring(path):match("^(%a+):(.+)$")
    if not FILE_ROOTS[root] or type(text) ~= "string" then
      error(string.format('t.env: files: "%s" must be args:, bin:, '
        .. "plugins: or state:<path> = <content>", tostring(path)), 3)
    end
    assert(ctx.c.fs.write(env.roots[root], rel, text))
  end
end

-- t.env's `certs`: the certificates config.exists finds, names only,
-- each an empty file.
local function write_certs(env, certs)
  for i, name in ipairs(certs) do
    if type(name) ~= "string" or name == "" or name:find("[/%z]")
       or name:find("..", 1, true) then
      error(string.format("t.env: certs[%d] must be a file name (no / or "
        .. "..), got %s", i, lib.repr(name)), 3)
    end
    assert(ctx.c.fs.write(env.roots.certs, name, ""))
  end
end

---A fresh mock world for one hook run (docs/contract.md §6).
---@param o {addon:string, name?:string, cluster?:string, state?:table,
---  args?:table, nodes?:table, resolv_conf?:table, downloads?:table,
---  files?:table, plan_fetch?:boolean, hostname?:string, timeout?:number,
---  memory_limit?:integer, state_quota?:integer, certs?:string[]}
---@return table env (docs/meta/uphook/test.lua: uphook.test.Env)
function M.env(o)
  check_env_opts(o)
  local offline = require "uphook.backend.offline"
  local dir = addon_dir(o.addon)
  local env = setmetatable({ o = o, faults = {}, runs = {}, dir = dir,
                             change_log = {} }, Env)
  env.name = o.name or basename(env.dir)
  env.hook_path = env.dir .. "/" .. (o.hook or "upgrade.lua")
  env.source = read_cached(source_cache, env.hook_path)
  local objs, fixture_args = {}, {}
  if o.cluster then
    objs, fixture_args = offline.split_fixture(ctx.c,
      read_cached(fixture_cache, resolve(o.cluster), true), o.cluster)
  end
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
      seed = offline.seed(ctx.c, objs)
      seed_cache[key] = seed
    end
  end
  env.backend = offline.cluster(ctx.c, objs, env.hostname, seed)
  local node_files, node_faults = add_nodes(env, o.nodes or {})
  node_files[env.hostname or "uphook-test-node"] =
    node_files[env.hostname or "uphook-test-node"] or o.args
  node_files = with_fixture_args(fixture_args, node_files)
  env.hostname = env.hostname or "uphook-test-node"
  env.backend.this_node_name = env.hostname
  local tmp = assert(ctx.c.sys.mkdtemp())
  tempdirs[#tempdirs + 1] = tmp
  env.roots = { args = tmp .. "/args", bin = tmp .. "/bin",
    plugins = tmp .. "/plugins", certs = tmp .. "/certs",
    state = tmp .. "/state", addon = env.dir }
  env.root_of = {}
  for k, v in pairs(env.roots) do env.root_of[v] = k end
  for _, d in ipairs { "args", "bin", "plugins", "certs", "state",
      "journal", "cache" } do
    assert(ctx.c.sys.mkdirs(tmp .. "/" .. d))
  end
  env.journal_path = tmp .. "/journal/" .. env.name .. ".journal"
  env.cache_dir = tmp .. "/cache"
  node_world(env, o, tmp, node_files, node_faults)
  write_certs(env, o.certs or {})
  write_files(env, o.files or {})
  local dl = downloads_of(o.downloads or {})
  env.net = require("uphook.backend.transfer").mock(ctx.c, dl)
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
  if st.params then data.params = ctx.c.yaml.encode(st.params) end
  if st.history then data.history = ctx.c.yaml.encode(st.history) end
  if st.permissions then data.permissions = ctx.c.yaml.encode(st.permissions) end
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
  if c and ctx.c.sys.getenv("UPHOOK_TEST_FORK") ~= "1" and c:reset(conf) then
    return c
  end
  if c then c:close() end
  pool.child, pool.uses = ctx.c.broker.spawn(conf), 0
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
  local report = Report.new { capture = true, json = ctx.c.json }
  local backend, c = faulty(env, env.backend, ctx.c)
  local clock = env.backend.clock
  env.rolling_back = false
  env.change_log = {}
  -- the same command line as `uphook <command> <addon> ARGS...`
  if args ~= nil and type(args) ~= "table" then
    error(string.format("env:%s: args must be a list of strings ({%q}), "
      .. "got a %s", command, tostring(args), type(args)), 2)
  end
  local line = assert(ctx.c.cli.split(command, args or {}))
  local code, run = engine.run { command = command, addon = env.name,
    spawn = spawn, release = release,
    source = env.source, chunkname = "@" .. env.hook_path,
    hook_name = env.name .. "/" .. (env.o.hook or "upgrade.lua"), argv = line.hook_args,
    reset_params = line.reset_params,
    backend = backend, net = env.net, roots = env.roots, c = c,
    journal_path = env.journal_path, cache_dir = env.cache_dir,
    plan_fetch = env.o.plan_fetch, hostname = env.hostname, report = report,
    helm_path = M.helm_path,
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
  if type(objs) == "string" then objs = ctx.c.yaml.decode_all(objs) end
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
  local new = tables.merge_patch(cur, patch, ctx.c.yaml.null,
    getmetatable(ctx.c.yaml.array {}))
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
---Make a rollout never finish (on the mock clock); a Job with
---{fail = true} fails instead.
---@param kind string
---@param name string
---@param ns string|nil
---@param opts? {fail?: boolean}
function Env:stall(kind, name, ns, opts)
  if opts ~= nil then check_keys("env:stall: opts", opts, { fail = true }, 2) end
  return self.backend:stall(kind, name, ns, nil, opts and opts.fail == true)
end
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
    params = d.params and ctx.c.yaml.decode(d.params) or {},
    history = d.history and ctx.c.yaml.decode(d.history) or {},
    permissions = d.permissions and ctx.c.yaml.decode(d.permissions) or nil }
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
  return ctx.c.fs.read(self.roots[root], rel)
end

---A parsed args file of this node, or of `node`.
---@param service string
---@return table<string, string|true>
function Env:args(service, node)
  if node ~= nil then check_node(self, "env:args", node, 3) end
  return ctx.c.argsfile.parse(self:file("args:" .. service, node) or "")
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
  local active = self.faults
  active[#active + 1] = fault
  return setmetatable(fault, { __index = { clear = function()
    for i = #active, 1, -1 do
      if active[i] == fault then table.remove(active, i) end
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
---@return table<string, table> objects by "apiVersion/kind/namespace/name"
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

---Copy this world's objects into the world `to` as one install would
---create them: its snapshot (`env:snapshot()`) without managedFields,
---CustomResourceDefinitions first, then Namespaces, then the rest, applied
---by `opts.manager` (default `helm`). Its Nodes stay (`to` has its own),
---and so does uphook's state of this addon; `opts.kinds` copies only the
---kinds it lists. Returns the objects `to` stored.
---@param to table the environment copied into
---@param opts? {kinds?: string[], manager?: string}
---@return table[]
function Env:copy_to(to, opts)
  opts = opts or {}
  check_keys("env:copy_to: opts", opts, { kinds = true, manager = true }, 2)
  local only
  if opts.kinds then
    only = {}
    for _, k in ipairs(opts.kinds) do only[k] = true end
  end
  local first = { CustomResourceDefinition = 1, Namespace = 2 }
  local lists, keys = { {}, {}, {} }, {}
  local all = self:snapshot()
  for key in pairs(all) do keys[#keys + 1] = key end
  table.sort(keys)
  for _, key in ipairs(keys) do
    local o = all[key]
    if o.kind ~= "Node" and (not only or only[o.kind])
        and not (o.kind == "ConfigMap"
                 and o.metadata.name == lease.name(self.name)) then
      o.metadata.managedFields = nil
      local list = lists[first[o.kind] or 3]
      list[#list + 1] = o
    end
  end
  local out = {}
  for _, list in ipairs(lists) do
    if #list > 0 then
      for _, o in ipairs(to:apply(list, { manager = opts.manager or "helm" }))
      do out[#out + 1] = o end
    end
  end
  return out
end

---The node's files of an env (args:, bin:, plugins:, state:), as
---"root:path" -> bytes.
---@return table<string, string>
function Env:files()
  local out = {}
  local function walk(root, dir, rel)
    for _, n in ipairs(ctx.c.sys.listdir(dir) or {}) do
      local p, r = dir .. "/" .. n, rel == "" and n or (rel .. "/" .. n)
      if ctx.c.sys.kind(p) == "dir" then walk(root, p, r)
      else out[root .. ":" .. r] = ctx.c.sys.read(p) or "(unreadable)" end
    end
  end
  for _, root in ipairs { "args", "bin", "plugins", "state" } do
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
      for _, f in ipairs(ctx.c.sys.listdir(dir) or {}) do
        out[name .. " args:" .. f] = lines(ctx.c.sys.read(dir .. "/" .. f))
      end
      out[name .. " kubelet"] = lines(ctx.c.sys.read(self.agents.nodes_dir
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
    ctx.c.sys.rmtree(tempdirs[i])
    tempdirs[i] = nil
  end
end

M.cleanup, M.dirname, M.pool = cleanup, dirname, pool

return M

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
local escape = require "uphook.core.escape"
local tables = require "uphook.core.tables"
local lib = require "uphook.cmd.testlib"
local testenv = require "uphook.cmd.testenv"

local M = {}
for k, v in pairs(lib) do
  if k ~= "take_cases" then M[k] = v end
end

local repr = lib.repr
local ctx = testenv.ctx
local dirname, pool = testenv.dirname, testenv.pool
local C   -- the C families, set by main()

M.env = testenv.env

--- Why a case that renders with Helm cannot run here, or nil: no
--- uphook.c.helm render, or no Helm (--helm, $SNAP/bin/helm, PATH); and
--- whether CI=true (then that is a failure).
local function helm_missing()
  local c = C or require("uphook.core.cfamilies").load()
  local ci = c.sys.getenv("CI") == "true"
  if not (c.helm and c.helm.render and c.helm.chart) then
    return "this uphook has no uphook.c.helm render", ci
  end
  local ok, err = pcall(require("uphook.engine.helm.render").locate,
    { c = c, helm_path = testenv.helm_path })
  if not ok then return "no Helm: " .. tostring(err), ci end
  return nil, ci
end

---A case that renders with the real Helm (helm.render, helm.upgrade):
---skipped, saying why, when Helm cannot run here; with CI=true that is a
---failure (docs/guide.md "Helm addons").
---@param name string
---@param fn fun()
function M.helm_case(name, fn)
  return lib.helm_case(name, fn, helm_missing())
end

--- Runner -------------------------------------------------------------

local function collect(path, loader)
  lib.take_cases()
  ctx.file = path
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
        or line:find("lua/cmd/testenv.lua", 1, true)
        or line:find("lua/cmd/testfaults.lua", 1, true)
        or line:find("lua/cmd/testopts.lua", 1, true)
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
  kubelet_config = true, copy_to = true }

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
    elseif name == "__test.call" and a[2] == "helm_missing" then
      return helm_missing()
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
      if method == "copy_to" then   -- the child sends an environment's id
        local to = type(a[3]) == "table" and session.envs[a[3].id]
        if not to then
          error("env:copy_to: to must be an environment (t.env)", 0)
        end
        a[3] = to
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
  ctx.file = path
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
      sys.exit_now(0)
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
  local outer_file = ctx.file     -- a run inside a case (the harness's
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
  ctx.file = outer_file
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

-- An unconfined test file's require: a module beside the file (its own
-- helpers, dir/<name>.lua) as a confined file's finds one
-- (__uphook.require above), else the engine's.
local function beside_require(dir)
  return function(name)
    if not name:find("^uphook%.") then
      local path = dir .. "/" .. name:gsub("%.", "/") .. ".lua"
      if package.loaded[path] == nil and C.sys.kind(path) == "file" then
        package.loaded[path] = assert(loadfile(path))() or true
      end
      if package.loaded[path] ~= nil then return package.loaded[path] end
    end
    return require(name)
  end
end

---Entry point of `uphook test [path...]`.
---@param o table options of host/cli.c
---@param c table the C families
---@return integer exit code
function M.main(o, c)
  C, ctx.c = c, c
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
  testenv.helm_path = o.helm   -- --helm: what the helm.* cases render with
  -- the project's own engine tests (tests/lua) run unconfined, with the
  -- engine's modules: an environment variable an addon repository cannot
  -- set for the user who runs its tests
  local confined = c.sys.getenv("UPHOOK_TEST_UNCONFINED") ~= "1"
  local results, np, nf, ns = M.run(files, { confined = confined,
    filter = o.filter, clock = c.sys.now, after_case = testenv.cleanup,
    jobs = jobs, sys = c.sys, json = c.json,
    before_fork = function()     -- a worker must not share the child
      if pool.child then pool.child:close(); pool.child = nil end
      -- what a case's run requires, compiled once here, not in each worker
      require "uphook.engine.phases"
      require "uphook.cmd.report"
      require "uphook.backend.offline"
    end,
    loader = function(path)
      local env = setmetatable({ require = beside_require(dirname(path)) },
                               { __index = _G })
      local chunk, err = loadfile(path, "t", env)
      if not chunk then error(err, 0) end
      chunk()
    end,
    -- case names and failures are the test file's text
    out = function(s) io.stdout:write(escape.lines(s)) end,
  })
  testenv.cleanup()
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

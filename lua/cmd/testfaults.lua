--- uphook.cmd.testfaults: the faults `env:fail` injects (docs/contract.md
--- §6): which primitives and agent requests fail, with which API Status,
--- wrapped around an environment's backend and C families. A helper of
--- `uphook test` (lua/cmd/testenv.lua), not a command.
local lease = require "uphook.engine.lease"

local M = {}

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

-- env's check(on, kind, name, path, ns, node): raise the API Status of
-- the first fault of env:fail that matches, once it has been passed
-- `after` times, `times` times in all
local function fault_check(env)
  return function(on, kind, name, path, ns, node)
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
end

-- env's change(on, kind, name, path, node): a change of the hook's,
-- recorded in env.change_log (t.each_fault faults each in turn), true;
-- the engine's own Lease and its rollback are not one
local function change_log(env)
  return function(on, kind, name, path, node)
    if env.rolling_back then return false end
    if kind == "Lease" and name == lease.name(env.name) then return false end
    env.change_log[#env.change_log + 1] = { on = on, kind = kind,
      name = name, path = path, node = node }
    return true
  end
end

-- backend, its reads, watches and changes checked for faults first
local function faulty_backend(env, backend, check, change)
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
  function b:watch(kind, name, ns, fn, timeout, tick)
    check("kube.watch", short(kind), name, nil, ns)
    return backend:watch(kind, name, ns, fn, timeout, tick)
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
    local k = short(kind)
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
  return b
end

-- the fs family, its writes, removals and installs under a root of this
-- node's (env.root_of) checked for faults first
local function faulty_fs(env, fs, check, change)
  local out = setmetatable({}, { __index = fs })
  -- the change at root:rel of config.<op>, checked, true if it is one
  local function changed(op, dir, rel)
    local root = env.root_of[dir]
    if not (root and change("config." .. op, nil, nil, root .. ":" .. rel,
        env.hostname)) then
      return nil
    end
    check("config." .. op, nil, nil, root .. ":" .. rel, nil, env.hostname)
    return root
  end
  for _, op in ipairs { "write", "remove" } do
    out[op] = function(dir, rel, ...)
      if changed(op, dir, rel) == "args" then
        check("config.set_args", nil, rel, nil, nil, env.hostname)
      end
      return fs[op](dir, rel, ...)
    end
  end
  function out.install(src, dir, rel, mode)
    changed("install", dir, rel)
    return fs.install(src, dir, rel, mode)
  end
  return out
end

--- Wrap a backend and the C families so that env:fail faults fire at
--- the primitive's change (after what came before it really happened),
--- or at a read or watch. A change has a node: this one (env.hostname),
--- or another whose agent the change is a request to.
local function faulty(env, backend, c)
  local check, change = fault_check(env), change_log(env)
  -- the engine brackets its rollback with broker.rolling_back(true/false):
  -- from then on (the undo, the Lease release) no fault fires
  local broker = setmetatable({ rolling_back = function(on)
    if on then env.rolling_back = true end
    return c.broker.rolling_back(on)
  end }, { __index = c.broker })
  local cc = setmetatable({ fs = faulty_fs(env, c.fs, check, change),
    broker = broker }, { __index = c })
  return faulty_backend(env, backend, check, change), cc
end

M.REASONS, M.ON, M.KEYS, M.wrap = FAULT_REASONS, FAULT_ON, FAULT_KEYS, faulty

return M

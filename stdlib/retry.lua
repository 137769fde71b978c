--- retry: call a function again when it fails (docs/contract.md §5).
---
--- ```lua
--- local retry = require "retry"
--- local objs = retry(function() return kube.list("Pod", { namespace = "kube-system" }) end,
---                    { attempts = 5, delay = 2,
---                      retry_on = function(err) return err.code == 409 end })
--- ```
---
--- `retry(fn, opts)` calls `fn()` up to `opts.attempts` times and returns
--- all of its results on the first success. Between attempts it waits
--- `delay * backoff^(n-1)` seconds, at most `max_delay`, through the host's
--- `__uphook.sleep` (the mock clock under `uphook test`: no real time);
--- without that global it does not wait. Each retry is announced with
--- `log.warn` when `log` exists.
---
--- When every attempt failed, or `retry_on(err)` returned false, the last
--- error is raised again with the attempt count added: a string becomes
--- `"<err> (failed after N attempts)"`; a table error (such as the
--- `uphook.Error` of a Kubernetes API error, `{code=, reason=, message=}`)
--- is copied, metatable included, with `attempts = N` and the same suffix
--- on its `message`. Other values are raised as is. `retry_on` sees the
--- error as the primitive raised it: `err.code == 409` matches a Conflict
--- (and is simply false for a string error).
local M = {}

---Test seams: when set, used instead of `__uphook.sleep` and the global
---`log`.
---@type fun(seconds: number)|nil
M.sleep = nil
---@type table|nil
M.log = nil

local function global(name)
  local ok, v = pcall(function() return _ENV[name] end)
  if ok then return v end
  return nil
end

---@class retry.Options
---@field attempts? integer how many calls at most (default 3, at least 1)
---@field delay? number seconds before the second call (default 1)
---@field backoff? number factor applied to the delay after each retry (default 2, at least 1)
---@field max_delay? number upper bound of one delay in seconds (default: none)
---@field retry_on? fun(err: any): boolean which errors to retry (default: all)

local DEFAULTS = { attempts = 3, delay = 1, backoff = 2 }
local KNOWN = { attempts = "number", delay = "number", backoff = "number",
                max_delay = "number", retry_on = "function" }

local function options(opts)
  if opts == nil then opts = {} end
  if type(opts) ~= "table" then
    error("retry: opts must be a table, got " .. type(opts), 4)
  end
  local o = {}
  for k, v in pairs(opts) do
    if not KNOWN[k] then error("retry: unknown option '" .. tostring(k) .. "'", 4) end
    if type(v) ~= KNOWN[k] then
      error(string.format("retry: option %s must be a %s, got %s", k, KNOWN[k], type(v)), 4)
    end
    o[k] = v
  end
  for k, v in pairs(DEFAULTS) do if o[k] == nil then o[k] = v end end
  if math.type(o.attempts) ~= "integer" or o.attempts < 1 then
    error("retry: attempts must be an integer >= 1", 4)
  end
  if o.delay < 0 or o.delay ~= o.delay then error("retry: delay must be >= 0", 4) end
  -- x ~= x: NaN, which no comparison refuses
  if o.backoff < 1 or o.backoff ~= o.backoff then
    error("retry: backoff must be >= 1", 4)
  end
  if o.max_delay and (o.max_delay < 0 or o.max_delay ~= o.max_delay) then
    error("retry: max_delay must be >= 0", 4)
  end
  return o
end

local function describe(err)
  if type(err) == "table" and err.message ~= nil then return tostring(err.message) end
  return tostring(err)
end

local function annotate(err, n)
  local suffix = string.format(" (failed after %d attempt%s)", n, n == 1 and "" or "s")
  if type(err) == "string" then return err .. suffix end
  if type(err) == "table" then
    local copy = {}
    for k, v in pairs(err) do copy[k] = v end
    copy.attempts = n
    if type(copy.message) == "string" then copy.message = copy.message .. suffix end
    return setmetatable(copy, getmetatable(err))
  end
  return err
end

local function sleeper()
  if M.sleep then return M.sleep end
  local host = global("__uphook")
  if type(host) == "table" and type(host.sleep) == "function" then
    return host.sleep
  end
  return nil
end

---Call `fn` until it succeeds, at most `opts.attempts` times; return its
---results or raise its last error with the attempt count added.
---@param fn fun(): ...
---@param opts? retry.Options
---@return ...
local function retry(fn, opts)
  if type(fn) ~= "function" then
    error("retry: fn must be a function, got " .. type(fn), 3)
  end
  local o = options(opts)
  local delay = o.delay
  for n = 1, o.attempts do
    local r = table.pack(pcall(fn))
    if r[1] then return table.unpack(r, 2, r.n) end
    local err = r[2]
    if n == o.attempts or (o.retry_on and not o.retry_on(err)) then
      error(annotate(err, n), 0)
    end
    local wait = o.max_delay and math.min(delay, o.max_delay) or delay
    local log = M.log or global("log")
    if log then
      log.warn("attempt %d of %d failed: %s; retrying in %gs", n, o.attempts,
               describe(err), wait)
    end
    local sleep = sleeper()
    if sleep and wait > 0 then sleep(wait) end
    delay = delay * o.backoff
  end
end

return setmetatable(M, {
  __call = function(_, fn, opts) return retry(fn, opts) end,
})

--- uphook.cmd.history: `uphook history <addon> [--output json]`, the runs
--- uphook's state ConfigMap records for the addon (docs/state.md "The
--- state ConfigMap": the last 10, oldest first). A field an older entry
--- lacks shows as `?` (JSON: absent).
local Backend = require "uphook.backend.connect"
local state = require "uphook.engine.state"
local lease = require "uphook.engine.lease"
local escape = require "uphook.core.escape"

local M = {}

--- An entry's value as text: `?` when the entry lacks it.
local function text(v, c)
  if v == nil or v == c.json.null then return "?" end
  if type(v) == "table" then
    local keys, out = {}, {}
    for k in pairs(v) do keys[#keys + 1] = k end
    table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
    for _, k in ipairs(keys) do
      out[#out + 1] = math.type(k) == "integer" and tostring(v[k])
        or (tostring(k) .. "=" .. tostring(v[k]))
    end
    return #out > 0 and table.concat(out, ", ") or "none"
  end
  return escape.text(tostring(v))
end

--- The JSON event of one entry: what the entry holds, as it holds it.
local function event(addon, h)
  return { event = "history", addon = addon, from = h.from, to = h.to,
    result = h.result, code = h.code, time = h.time, node = h.node,
    repo = h.repo, parameters = h.parameters, permissions = h.permissions,
    change = h.params, error = h.error, revision = h.revision }
end

---@param o table options of host/cli.c
---@param c table the C families
---@param report table lua/cmd/report.lua
---@return integer exit code
function M.main(o, c, report)
  local name = o.addon.name
  local backend = Backend.connect(o, c, report,
    o.state_dir and { state_dir = o.state_dir } or nil)
  local cm = lease.of_addon(backend, c, o.addon)
  local saved = state.read({ backend = backend, addon = name, c = c,
    report = report, null = c.json.null, state_name = cm })
  local history = saved and saved.history or {}
  if type(history) ~= "table" then history = {} end
  if o.output == "json" then
    for _, h in ipairs(history) do
      if type(h) == "table" then report:event(event(name, h)) end
    end
    report:event({ event = "result", code = 0, addon = name,
      entries = #history, kept = state.HISTORY, version = saved
      and saved.version or nil })
    return 0
  end
  local w = function(s) io.stdout:write(s, "\n") end
  w(string.format("History of %s (ConfigMap %s/%s; only "
    .. "the last %d runs are kept; ? = not recorded by the uphook that "
    .. "wrote the entry):", name, lease.NAMESPACE, cm,
    state.HISTORY))
  if #history == 0 then
    w("  no run recorded")
    return 0
  end
  for _, h in ipairs(history) do
    if type(h) == "table" then
      w(string.format("  %s  %s -> %s  %s (exit %s)  on %s  from %s",
        text(h.time, c), text(h.from, c), text(h.to, c), text(h.result, c),
        text(h.code, c), text(h.node, c), text(h.repo, c)))
      w("      parameters: " .. text(h.parameters, c)
        .. (h.params and ("  (changed: " .. text(h.params, c) .. ")") or ""))
      w("      permissions: " .. text(h.permissions, c))
      if h.revision ~= nil then w("      Helm release revision: "
        .. text(h.revision, c)) end
      if h.error then w("      error: " .. text(h.error, c)) end
    end
  end
  if saved.version then
    w(string.format("%s is at %s.", name, text(saved.version, c)))
  end
  return 0
end

return M

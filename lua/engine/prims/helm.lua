--- uphook.engine.prims.helm: the helm.* primitives (docs/reference.md
--- "helm"): release (read a Helm release's metadata, and its values under
--- a granted kube:<namespace>), render (the objects a chart renders,
--- changing nothing) and upgrade (lua/engine/helm/upgrade.lua). No
--- permission word of their own: the objects a chart renders need what
--- kube.apply needs, the release Secret kube:<release namespace>.
local names = require "uphook.core.names"
local permissions = require "uphook.engine.permissions"
local plan = require "uphook.engine.plan"
local args = require "uphook.engine.prims.args"
local files = require "uphook.engine.prims.files"
local net = require "uphook.engine.prims.net"
local record = require "uphook.engine.helm.record"
local upgrade = require "uphook.engine.helm.upgrade"
local argerr, checktype, checkopts = args.argerr, args.checktype,
  args.checkopts

local M = {}
local H = {}   -- handlers by primitive name (prims.lua dispatches)
M.handlers = H

M.TIMEOUT = 300   -- seconds of helm.upgrade's waits, unless given

local function check_release(name, n, fname)
  checktype(name, "string", n, fname)
  if not record.valid_name(name) then
    argerr(n, fname, "release must be a Helm release name (lower case "
      .. "letters, digits and '-', at most 53), got " .. names.quote(name))
  end
end

local function check_namespace(ns, n, fname)
  checktype(ns, "string", n, fname)
  names.check_namespace(ns, "helm." .. fname)
end

---Are the release's values the hook's to see? Under a declared
---kube:<namespace> (or kube:*), and before the user's yes only when the
---state records it as granted: a release's values are its Secret's data,
---and the one rule is permissions.withheld_read (docs/security.md,
---"Consent").
local function values_granted(run, ns)
  return (run.perms["kube:*"] or run.perms["kube:" .. ns])
    and not permissions.withheld_read(run, "Secret", ns) and true or false
end

---helm.release: nil, or the release's metadata (and values when granted).
---@param run uphook.Run
---@param name string
---@param namespace string
---@return table|nil
function H.helm_release(run, name, namespace)
  check_release(name, 1, "release")
  check_namespace(namespace, 2, "release")
  local st = upgrade.current(run, name, namespace)
  if not st.rel then return nil end
  if values_granted(run, namespace) then
    st.rel.values = st.rec.config or {}
  elseif run.plan or run.granted then
    run.helm_noted = run.helm_noted or {}
    local key = namespace .. "/" .. name
    if not run.helm_noted[key] then
      run.helm_noted[key] = true
      plan.note(run, "helm", string.format("helm release %s: values: shown "
        .. "after your yes", key))
    end
  end
  return st.rel
end

-- The chart argument: a file of the addon's folder, or net.download's
-- token. Its absolute path, or nil under plan for a download not made.
local function chart_path(run, chart, fname)
  checktype(chart, "string", 1, fname)
  if chart:match("^cache:") then
    local abs = net.cache_file(run, chart)
    if not abs then
      argerr(1, fname, "chart must be a path in the addon folder or what "
        .. "net.download returned, got " .. names.quote(chart))
    end
    local f = io.open(abs, "rb")
    if f then f:close() return abs end
    if run.plan then return nil end
    error(string.format("helm.%s: the chart %s is not in the download "
      .. "cache", fname, chart), 0)
  end
  local _, dir, rel = files.split_path(run, "addon:" .. chart, 1, fname)
  if not run.c.fs.stat(dir, rel) then
    error(string.format("helm.%s: %s has no chart %s", fname, run.addon,
      chart), 0)
  end
  return dir .. "/" .. rel
end

-- The table argument of render and upgrade, checked.
local function check_spec(run, t, fname, allowed)
  checktype(t, "table", 1, fname)
  checkopts(t, allowed, 1, fname)
  check_release(t.release, 1, fname)
  check_namespace(t.namespace, 1, fname)
  checktype(t.values, "table", 1, fname, true)
  local out = { release = t.release, namespace = t.namespace,
    chart = t.chart, values = t.values or {}, install = t.install == true }
  checktype(t.install, "boolean", 1, fname, true)
  if t.timeout ~= nil and (type(t.timeout) ~= "number" or t.timeout < 0)
  then
    argerr(1, fname, "timeout must be a non-negative number")
  end
  out.timeout = math.min(t.timeout or M.TIMEOUT, run:remaining())
  out.values_seen = values_granted(run, t.namespace)
  out.chart_path = chart_path(run, t.chart, fname)
  return out
end

---helm.render: the objects the chart renders, changing nothing.
---@param run uphook.Run
---@param t table {release=, namespace=, chart=, values=}
---@return table[]
function H.helm_render(run, t)
  t = check_spec(run, t, "render", { release = true, namespace = true,
    chart = true, values = true })
  if not t.chart_path then
    plan.note(run, "helm", "helm.render of " .. t.chart .. ": the chart is "
      .. "downloaded at upgrade; not rendered under plan")
    return {}
  end
  return upgrade.render(run, t)
end

---helm.upgrade: the release upgraded (or installed) to the chart.
---@param run uphook.Run
---@param t table {release=, namespace=, chart=, values=, install=, timeout=}
---@return table release
function H.helm_upgrade(run, t)
  t = check_spec(run, t, "upgrade", { release = true, namespace = true,
    chart = true, values = true, install = true, timeout = true })
  if not t.chart_path then
    plan.note(run, "helm", "helm.upgrade to " .. t.chart .. ": the chart is "
      .. "downloaded at upgrade; its objects are planned then")
    return { name = t.release, namespace = t.namespace, status = "deployed" }
  end
  return upgrade.upgrade(run, t)
end

return M

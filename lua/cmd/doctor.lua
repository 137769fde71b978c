--- uphook.cmd.doctor: what a snap refresh broke, and what fixes it
--- (`uphook doctor`, docs/microk8s.md "After a snap refresh").
---
--- 1. APIs gone: the apiVersion/kind of the objects in an addon's YAML
---    files that the cluster does not serve (discovery), or that the next
---    Kubernetes minor removes (lua/engine/deprecations.lua); one finding
---    per file and kind. Only Kubernetes' own API groups are checked
---    (kinds.BUILTIN_GROUPS): a custom resource is served once the CRD
---    that an addon's enable installs is there, and a configuration file
---    of kube-apiserver is no served API.
--- 2. Stale clones: an addon repository in $SNAP_COMMON/addons older than
---    the snap's own copy in $SNAP/addons (a refresh replaces the copy,
---    not the clone: MicroK8s issues #4191, #4088).
--- 3. Node drift: kubelet settings (configz) and versions that differ
---    between nodes.
--- 4. Each addon: enabled, hook, installed, addons.yaml's and the hook's
---    version, upgrade (the rows of `uphook list`).
local escape = require "uphook.core.escape"
local deprecations = require "uphook.engine.deprecations"
local hookload = require "uphook.engine.hookload"
local inventory = require "uphook.cmd.inventory"
local kinds = require "uphook.core.kinds"
local addonscan = require "uphook.engine.addonscan"
local record = require "uphook.engine.helm.record"
local semver = require "uphook.core.semver"

local M = {}

-- kubelet settings that differ between nodes by design
M.PER_NODE = { address = true, providerID = true, hostnameOverride = true,
  tlsCertFile = true, tlsPrivateKeyFile = true }

--- APIs -------------------------------------------------------------------

-- What is wrong with one use on this cluster, or nil.
local function api_problem(backend, use, provided, next_minor, cache)
  local key = use.apiVersion .. "/" .. use.kind
  if provided[key] then return nil end   -- the addon's own CRD serves it
  if not kinds.BUILTIN_GROUPS[kinds.split_api_version(use.apiVersion)] then
    return nil
  end
  if cache[key] == nil then   -- nil: unknown; an API error stops the run
    cache[key] = backend:namespaced(use.apiVersion, use.kind) ~= nil
  end
  local removal = deprecations.find(use.apiVersion, use.kind)
  if not cache[key] then
    return { problem = "not_served", removal = removal }
  end
  local minor = removal and deprecations.minor(removal.removed)
  if minor and next_minor and minor <= next_minor then
    return { problem = "removed_next", removal = removal }
  end
end

-- Does the snap's copy of the addon use this apiVersion/kind too?
local function bundled_uses(c, ctx, key, use)
  local dir = ctx.bundled_dirs[key]
  if not dir then return true end
  if not ctx.scanned[key] then
    local uses = addonscan.scan(c, dir)
    ctx.scanned[key] = {}
    for _, u in ipairs(uses) do
      ctx.scanned[key][u.apiVersion .. "/" .. u.kind] = true
    end
  end
  return ctx.scanned[key][use.apiVersion .. "/" .. use.kind] or false
end

-- What fixes an addon's use of a gone API: the snap's copy, when it no
-- longer uses it (`microk8s addons repo update`), and, for an addon that
-- is enabled, the upgrade hook (the clone's, or the copy's once updated),
-- which migrates what the addon installed. Returns the commands and the
-- hook's version.
local function api_fix(c, ctx, a, row, use)
  local key = a.repo .. "/" .. a.name
  local steps, hook = {}, row and row.target
  if not bundled_uses(c, ctx, key, use) then
    steps[#steps + 1] = "microk8s addons repo update " .. a.repo
    hook = ctx.bundled_hook[key] or hook
  end
  if row and row.enabled == false then hook = nil end
  if hook then
    steps[#steps + 1] = string.format("microk8s upgrade %s/%s", a.repo, a.name)
  end
  if #steps > 0 then return table.concat(steps, ", then "), hook end
end

-- One finding for a use of a gone API: the first object of its file and
-- kind (`same` maps file and kind to the finding, which counts them).
local function api_event(c, ctx, a, row, dir, u, p)
  local fix, hook = api_fix(c, ctx, a, row, u)
  return { event = "api", repo = a.repo, addon = a.name,
    file = u.file, path = dir .. "/" .. u.file,
    apiVersion = u.apiVersion, kind = u.kind, problem = p.problem,
    removed_in = p.removal and p.removal.removed,
    use = p.removal and p.removal.use, template = u.template,
    enabled = row and row.enabled, fix = fix, hook_version = hook,
    objects = 1 }
end

---Every use of an API that is gone or going, per addon of the clones:
---one event per file and apiVersion/kind, with the count of its objects.
---@param ctx {bundled_dirs: table, bundled_hook: table, scanned: table}
---@return table[] uses
function M.apis(c, addons, rows, backend, cluster, ctx, notes)
  local out, cache = {}, {}
  for i, a in ipairs(addons) do
    local dir = c.sys.realpath(a.dir) or a.dir
    local uses, provided, unread = addonscan.scan(c, dir)
    local same = {}
    for _, u in ipairs(uses) do
      local p = api_problem(backend, u, provided, cluster.next_minor, cache)
      local key = p and (u.file .. "\0" .. u.apiVersion .. "/" .. u.kind)
      if key and same[key] then
        same[key].objects = same[key].objects + 1
      elseif key then
        same[key] = api_event(c, ctx, a, rows[i], dir, u, p)
        out[#out + 1] = same[key]
      end
    end
    for _, f in ipairs(unread) do
      notes[#notes + 1] = { event = "note", repo = a.repo, addon = a.name,
        message = "not read: " .. f }
    end
  end
  return out
end

--- Versions ---------------------------------------------------------------

-- 1 when a is newer than b (or b is absent), -1 older, 0 the same, nil
-- when they differ but cannot be ordered (not semver).
local function order(a, b)
  if a == b then return 0 end
  if not b then return 1 end
  if not a then return -1 end
  local ok, r = pcall(semver.compare, a, b)
  if ok then return r end
end

-- Hook versions of the bundled copies, read before the backend connects
-- (a forked child never holds the cluster's credentials).
function M.bundled_hooks(c, bundled, limits)
  local out = {}
  for _, a in ipairs(bundled) do
    if a.hook then
      local info = hookload.load(c, a.hook, a.name .. "/upgrade.lua", false,
        limits)
      out[a.repo .. "/" .. a.name] = info and info.version or nil
    end
  end
  return out
end

-- The snap's copy of an addon against the clone's: an entry when the copy
-- is newer (by addons.yaml or by the hook), or the clone lacks the addon;
-- `unordered` when they only differ in versions that are not semver.
local function stale_entry(a, clone, clone_hook, hook)
  local listed = a.version ~= "" and a.version or nil
  local clisted = clone and clone.version ~= "" and clone.version or nil
  local ol, oh = order(listed, clisted), order(hook, clone_hook)
  local newer = not clone or ol == 1 or oh == 1
  if not newer and ol ~= nil and oh ~= nil then return nil end
  return { name = a.name, new = clone == nil or nil,
    unordered = not newer or nil,
    clone = clone and { addons_yaml = clisted, hook = clone_hook } or nil,
    bundled = { addons_yaml = listed, hook = hook } }
end

---Repositories whose clone is older than the snap's copy.
function M.stale(o, bundled, bundled_hook, rows)
  local clones, hooks, seen, out = {}, {}, {}, {}
  for i, a in ipairs(o.addons or {}) do
    clones[a.repo .. "/" .. a.name] = a
    hooks[a.repo .. "/" .. a.name] = rows[i] and rows[i].target
    seen[a.repo] = seen[a.repo] or a.dir:match("^(.*)/addons/[^/]+$")
  end
  local by_repo = {}
  for _, a in ipairs(bundled) do
    local key = a.repo .. "/" .. a.name
    local e = seen[a.repo] and stale_entry(a, clones[key], hooks[key],
      bundled_hook[key])
    if e then
      local s = by_repo[a.repo]
      if not s then
        s = { event = "stale_clone", repo = a.repo, clone = seen[a.repo],
          bundled = a.dir:match("^(.*)/addons/[^/]+$"), addons = {},
          fix = "microk8s addons repo update " .. a.repo }
        by_repo[a.repo] = s
        out[#out + 1] = s
      end
      s.addons[#s.addons + 1] = e
    end
  end
  return out
end

--- Nodes ------------------------------------------------------------------

local function flatten(v, prefix, out, json)
  if type(v) == "table" and next(v) ~= nil and v[1] == nil then
    for k, x in pairs(v) do
      flatten(x, prefix == "" and k or (prefix .. "." .. k), out, json)
    end
  else
    out[prefix] = type(v) == "table" and json.encode(v) or tostring(v)
  end
end

---The Kubernetes version of the cluster: its nodes' kubelets (MicroK8s
---runs the API server and the kubelet from one snap).
function M.cluster(backend)
  local cl = { nodes = backend:list("v1/Node", {}), versions = {} }
  local top
  for _, n in ipairs(cl.nodes) do
    local v = n.status and n.status.nodeInfo and n.status.nodeInfo.kubeletVersion
    if type(v) == "string" then
      cl.versions[n.metadata.name] = v
      local minor = deprecations.minor(v)
      if minor and (not top or minor > top) then top, cl.version = minor, v end
    end
  end
  cl.next_minor = top and top + 1
  return cl
end

---Kubelet settings and versions that differ between nodes.
function M.drift(c, backend, cl, notes)
  local out, names = {}, {}
  local distinct = {}
  for n, v in pairs(cl.versions) do distinct[v] = n end
  if next(distinct, next(distinct)) then
    out[#out + 1] = { event = "node_drift", setting = "kubeletVersion",
      values = cl.versions }
  end
  if #cl.nodes < 2 then return out end
  if not backend.kubelet_config then
    notes[#notes + 1] = { event = "note", message = "kubelet settings not "
      .. "compared: this backend cannot read a node's configz" }
    return out
  end
  local flat = {}
  for _, n in ipairs(cl.nodes) do
    local name = n.metadata.name
    local cfg, err = backend:kubelet_config(name)
    if cfg then
      names[#names + 1] = name
      flat[name] = {}
      flatten(cfg, "", flat[name], c.json)
    else
      out[#out + 1] = { event = "node_unread", node = name,
        error = type(err) == "table" and err.message or tostring(err) }
    end
  end
  local keys = {}
  for _, name in ipairs(names) do
    for k in pairs(flat[name]) do keys[k] = true end
  end
  local sorted = {}
  for k in pairs(keys) do
    if not M.PER_NODE[k] then sorted[#sorted + 1] = k end
  end
  table.sort(sorted)
  for _, k in ipairs(sorted) do
    local values, first, differ = {}, nil, false
    for i, name in ipairs(names) do
      values[name] = flat[name][k] or "(unset)"
      if i == 1 then first = values[name]
      elseif values[name] ~= first then differ = true end
    end
    if differ then
      out[#out + 1] = { event = "node_drift", setting = k, values = values }
    end
  end
  return out
end

---Helm releases that a plain Helm run left pending (killed mid-way):
---`helm upgrade` refuses them ("another operation is in progress"); the
---next helm.upgrade of their addon supersedes the pending revision
---(docs/guide.md "Helm addons"). One `helm_pending` event each.
---@param backend table
---@return table[] events
function M.helm_pending(backend)
  local out = {}
  for status in pairs(record.PENDING) do
    if status ~= "failed" then
      local ok, list = pcall(backend.list, backend, "v1/Secret",
        { labels = { owner = "helm", status = status } })
      for _, s in ipairs(ok and list or {}) do
        local md = s.metadata
        if s.type == record.TYPE and md.labels and md.labels.name then
          out[#out + 1] = { event = "helm_pending", release = md.labels.name,
            namespace = md.namespace, status = status,
            revision = tonumber(md.labels.version) }
        end
      end
    end
  end
  table.sort(out, function(a, b)
    return a.namespace .. "/" .. a.release < b.namespace .. "/" .. b.release
  end)
  return out
end

--- Output -----------------------------------------------------------------

local function addon_events(rows)
  local out = {}
  for _, r in ipairs(rows) do
    local e = inventory.event(r)
    if r.pending_journal and not r.in_progress then
      -- an interrupted upgrade: every upgrade refuses until recover
      e.fix = string.format("uphook recover %s", r.name)
      e.interrupted = true
    elseif r.upgradable and r.enabled ~= false then
      e.fix = string.format("microk8s upgrade %s/%s", r.repo, r.name)
    end
    out[#out + 1] = e
  end
  return out
end

---How many findings need a fix: API versions, stale repositories, node
---drift, and each interrupted upgrade (its journal blocks every upgrade).
---@param found table
---@return integer
function M.problems(found)
  local n = #found.apis + #found.stale + #found.drift + #(found.helm or {})
  for _, e in ipairs(found.addons) do
    if e.interrupted then n = n + 1 end
  end
  return n
end

--- Text ------------------------------------------------------------------

local function api_lines(w, events)
  for _, e in ipairs(events) do
    w("  %s/%s  %s: %s %s%s%s\n", e.repo, e.addon, e.file, e.apiVersion,
      e.kind, e.objects > 1 and string.format(" (%d objects)", e.objects)
      or "", e.removed_in and string.format(" (removed in %s%s)",
      e.removed_in, e.use and ("; use " .. e.use) or "") or "")
    if e.fix then
      w("      fix: %s%s\n", e.fix, e.hook_version
        and (" (its hook installs " .. e.hook_version .. ")") or "")
    elseif e.enabled == false then
      w("      not enabled: its enable fails until its repository moves it%s\n",
        e.use and (" to " .. e.use) or "")
    else
      w("      no upgrade hook: the addon's repository has to move it%s\n",
        e.use and (" to " .. e.use) or "")
    end
  end
  if #events == 0 then w("  none\n") end
end

local function version_pair(v)
  return string.format("addons.yaml %s, %s", v.addons_yaml or "-",
    v.hook and ("hook " .. v.hook) or "no hook")
end

local function stale_lines(w, events)
  for _, s in ipairs(events) do
    w("  %s (%s)\n", s.repo, s.clone)
    for _, e in ipairs(s.addons) do
      w("      %s: the snap's copy %s; %s%s\n", e.name,
        version_pair(e.bundled), e.new and "not in the clone"
        or ("the clone " .. version_pair(e.clone)),
        e.unordered and " (versions that cannot be ordered)" or "")
    end
    w("      fix: %s\n", s.fix)
  end
  if #events == 0 then w("  none\n") end
end

local function drift_lines(w, events)
  for _, e in ipairs(events) do
    local names, parts = {}, {}
    for n in pairs(e.values or {}) do names[#names + 1] = n end
    table.sort(names)
    for _, n in ipairs(names) do parts[#parts + 1] = n .. " " .. e.values[n] end
    if e.event == "node_unread" then
      w("  %s: configz not read: %s\n", e.node, e.error)
    else
      w("  %s: %s\n", e.setting, table.concat(parts, ", "))
    end
  end
  if #events == 0 then w("  none\n") end
end

local function helm_lines(w, events)
  for _, e in ipairs(events) do
    w("  %s/%s: revision %s is %s\n", e.namespace, e.release,
      tostring(e.revision), e.status)
  end
  if #events == 0 then w("  none\n") end
end
M.helm_lines = helm_lines

local function addon_lines(w, rows)
  local fmt = "  %-12s %-20s %-7s %-10s %-12s %-10s %s\n"
  w(fmt, "REPO", "ADDON", "ENABLED", "INSTALLED", "ADDONS.YAML", "HOOK",
    "UPGRADE")
  for _, r in ipairs(rows) do
    -- the installed version as list shows it: detect's with a star
    w(fmt, r.repo, r.name, r.enabled == nil and "?" or (r.enabled and "yes"
      or "no"), r.installed or (r.detected and (r.detected .. "*")) or "-",
      r.addons_yaml_version or (r.target and "same" or "-"), r.target
      or (r.hook and "error" or "none"), r.in_progress
      or (r.interrupted and ("interrupted: " .. r.fix)) or r.fix or "no")
  end
end

---The report for people, one section per question.
function M.text(found, snap)
  local out = {}
  -- every string shown is a repository's or the cluster's text
  local function w(f, ...)
    local a = table.pack(...)
    for i = 1, a.n do
      if type(a[i]) == "string" then a[i] = escape.text(a[i]) end
    end
    out[#out + 1] = string.format(f, table.unpack(a, 1, a.n))
  end
  local cl = found.cluster
  if cl.version then
    w("Kubernetes %s on %d node%s; the next minor is 1.%d.\n", cl.version,
      #cl.nodes, #cl.nodes == 1 and "" or "s", cl.next_minor)
  else
    w("No node reports its Kubernetes version: what the next minor "
      .. "removes is not checked.\n")
  end
  local gone, soon = {}, {}
  for _, e in ipairs(found.apis) do
    if e.problem == "not_served" then gone[#gone + 1] = e
    else soon[#soon + 1] = e end
  end
  w("\nAPI versions this cluster does not serve (these addons' enable "
    .. "and disable fail):\n")
  api_lines(w, gone)
  w("\nAPI versions the next minor removes:\n")
  api_lines(w, soon)
  w("\nAddon repositories older than the snap's copy (%s/addons):\n",
    snap or "$SNAP")
  stale_lines(w, found.stale)
  w("\nKubelet settings that differ between nodes:\n")
  drift_lines(w, found.drift)
  w("\nHelm releases a Helm run left pending (helm upgrade refuses them; "
    .. "the next upgrade of their addon repairs them, with your yes):\n")
  helm_lines(w, found.helm)
  w("\nAddons:\n")
  addon_lines(w, found.addons)
  for _, n in ipairs(found.notes) do
    w("note: %s%s\n", n.addon and (n.repo .. "/" .. n.addon .. ": ") or "",
      n.message)
  end
  local problems = M.problems(found)
  w(problems == 0 and "\nNothing that a refresh broke.\n"
    or string.format("\n%d problem%s to fix.\n", problems,
      problems == 1 and "" or "s"))
  return table.concat(out)
end

---@param o table options of lua/cmd/cli.lua (addons, bundled, snap, output)
---@return integer exit code: 0 nothing found, 1 something to fix
function M.main(o, c, report)
  local bundled = o.bundled or {}
  o.limits = hookload.limits(o, c)   -- one deadline for every hook loaded
  local bundled_hook = M.bundled_hooks(c, bundled, o.limits)
  local rows, backend, problem = inventory.rows(o, c, report)
  if not backend then error(problem, 0) end
  local cl = M.cluster(backend)
  local stale = M.stale(o, bundled, bundled_hook, rows)
  local ctx = { bundled_dirs = {}, bundled_hook = bundled_hook, scanned = {} }
  for _, a in ipairs(bundled) do
    ctx.bundled_dirs[a.repo .. "/" .. a.name] = c.sys.realpath(a.dir) or a.dir
  end
  local notes = {}
  local found = { apis = M.apis(c, o.addons or {}, rows, backend, cl, ctx,
    notes), stale = stale, drift = M.drift(c, backend, cl, notes),
    addons = addon_events(rows), cluster = cl, notes = notes,
    helm = M.helm_pending(backend) }
  local problems = M.problems(found)
  if o.output == "json" then
    for _, group in ipairs { found.apis, found.stale, found.drift,
                             found.helm, found.addons, found.notes } do
      for _, e in ipairs(group) do report:event(e) end
    end
  else
    io.stdout:write(M.text(found, o.snap))
  end
  local code = problems > 0 and 1 or 0
  report:event { event = "result", code = code, problems = problems,
    kubernetes = cl.version, next_minor = cl.next_minor
      and ("1." .. cl.next_minor) or nil }
  return code
end

return M

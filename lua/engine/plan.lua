--- uphook.engine.plan: what an upgrade changes, recorded as it goes (under
--- `uphook plan` instead of changing anything), and the same records
--- reporting a real upgrade's changes at its end.
---
--- Entries are plain data, in order, each with the number of the step it
--- belongs to (`step`, 0 before the first log.step):
---
---   {type="step", text=}            a log.step heading
---   {type="log", level="info"|"warn", text=, phase=}  what the hook logged
---   {type="kube", action=, kind=, name=, namespace=, diff=, data_loss=,
---    reason=}                       an apply or delete; diff: field changes
---                                   with JSON values (lua/core/fielddiff.lua)
---   {type="file", path=, action=, diff=, mode=}   diff: the bounded unified
---                                   diff (lua/core/textdiff.lua)
---   {type="download", url=, sha256=, dest=}  {type="install", source=, dest=}
---   {type="restart", service=, node=}   {type="wait", text=, timeout=}
---   {type="fetch", text=url}        a net.fetch under plan (docs/security.md "Unchecked reads")
---   {type="privileged", text=}      an object that needs kube:privileged
---
--- Other modules may add entries of their own types with `plan.add`;
--- lua/engine/plantext.lua renders them (and falls back to their `text`).
local fielddiff = require "uphook.core.fielddiff"
local textdiff = require "uphook.core.textdiff"
local redact = require "uphook.core.redact"
local nodes = require "uphook.engine.nodes"
local permissions = require "uphook.engine.permissions"

local M = {}

--- Recording -------------------------------------------------------------

---Append an entry to the run's plan, in the current step.
---@param run table the run record
---@param e table
---@return table e
function M.add(run, e)
  e.step = run.step_no or 0
  run.entries[#run.entries + 1] = e
  return e
end
local add = M.add

---A log.step heading.
---@param run uphook.Run
---@param text string
function M.step(run, text)
  run.step_no = (run.step_no or 0) + 1
  add(run, { type = "step", text = text })
end

---A line the hook logged (info or warn), shown under its step.
---@param run table
---@param level "info"|"warn"
---@param text string
function M.log(run, level, text)
  add(run, { type = "log", level = level, text = text, phase = run.phase })
end

---Field changes between two versions of an object, Secret values
---redacted.
---@param run table
---@param prior table
---@param stored table|nil
---@return table[]
function M.object_diff(run, prior, stored)
  local secret = redact.is_secret(prior) or redact.is_secret(stored)
  return fielddiff.diff(prior, stored, { null = run.null, secret = secret,
    redact = secret and function(field, v)
      return redact.value(run, field, v)
    end or nil })
end

---An apply or a delete. `reason` says why a delete happens (prune).
---@param run uphook.Run
---@param action string created, configured, unchanged or deleted
---@param ref table {kind, name, namespace}
---@param prior table|nil the object before
---@param stored table|nil the object after
---@param data_loss boolean|nil deleted with allow_data_loss
---@param reason string|nil why a delete happens
---@return table entry the plan entry
function M.kube(run, action, ref, prior, stored, data_loss, reason)
  local e = add(run, { type = "kube", action = action, kind = ref.kind,
    name = ref.name, namespace = ref.namespace, data_loss = data_loss,
    reason = reason })
  if action == "configured" or (action == "created" and prior) then
    e.diff = M.object_diff(run, prior, stored)
  end
  return e
end

---A file write or removal; the diff is bounded whatever the sizes.
---@param run table
---@param path string root:relative
---@param old string|nil
---@param new string|nil
---@param mode? string the mode the file gets ("0644"), shown in the plan
---@param node? string this node's name, on a cluster of several nodes
function M.file(run, path, old, new, mode, node)
  if old == new then return end
  return add(run, { type = "file", path = path, node = node,
    action = old == nil and "created" or new == nil and "deleted"
             or "changed", mode = new ~= nil and mode or nil,
    bytes = new and #new or nil, old_bytes = old and #old or nil,
    diff = textdiff.unified(old, new, path) })
end

---A node's args change on a cluster of several nodes: one entry and one
---JSON event (`node`) per node. `e.changes` are `{flag=, prior=, how=,
---new=}`; prior and new are a string, true (a bare flag) or false
---(absent); how is "read" (from the node's kubelet configz, or this
---node's file) or "assumed" (this node's value).
---@param e {node:string, address?:string, service:string, changes:table[], this?:boolean}
function M.node_args(run, e)
  add(run, { type = "node_args", node = e.node, address = e.address,
    service = e.service, changes = e.changes, this = e.this })
  if run.report and run.report.event then
    run.report:event({ event = "node", action = "args", node = e.node,
      address = e.address, service = e.service, changes = e.changes,
      plan = run.plan or false })
  end
end

---A download; returns its entry (an install joins it).
---@param run uphook.Run
---@param url string
---@param sum string sha256
---@return table entry
function M.download(run, url, sum)
  return add(run, { type = "download", url = url, sha256 = sum })
end

--- An install joins the entry of its download (dest and mode), so the
--- plan shows URL, sha256 and destination together.
---@param run uphook.Run
---@param token string cache:<sha256>
---@param dest string root:relative
---@param mode string|nil
function M.install(run, token, dest, mode, node)
  local where = mode and (dest .. " (mode " .. mode .. ")") or dest
  if node then where = where .. " on " .. node .. " only" end
  for i = #run.entries, 1, -1 do
    local e = run.entries[i]
    if e.type == "download" and "cache:" .. e.sha256 == token then
      e.dest = e.dest and (e.dest .. ", " .. where) or where
      e.installs = (e.installs or 0) + 1
      return
    end
  end
  add(run, { type = "install", source = token, dest = where })
end

---A service restart, on `node` (nil: this node on a cluster of one; this
---node's name on a cluster of several), with one JSON `node` event then.
---@param run table
---@param svc string
---@param node? string
---@param address? string the node's InternalIP
function M.restart(run, svc, node, address)
  add(run, { type = "restart", service = svc, node = node,
    address = address })
  if node and run.report and run.report.event then
    run.report:event({ event = "node", action = "restart", node = node,
      address = address, service = svc, plan = run.plan or false })
  end
end

---A wait (rollout, condition) and how long it may take.
---@param run table
---@param text string
---@param timeout? number seconds
function M.wait(run, text, timeout)
  add(run, { type = "wait", text = text, timeout = timeout })
end

---Another line of the plan.
---@param run uphook.Run
---@param kind string the entry's type
---@param text string
function M.note(run, kind, text)
  add(run, { type = kind, text = text })
end

--- Summaries -------------------------------------------------------------

---The entries that are changes (what `result` events list): not the
---headings and log lines.
---@param entries table[]
---@return table[]
function M.changes(entries)
  local out = {}
  for _, e in ipairs(entries) do
    if e.type ~= "log" and e.type ~= "step" then out[#out + 1] = e end
  end
  return out
end

---Counts of each kind of change.
---@param entries table[] run.entries
---@return table counts {created, configured, deleted, unchanged, files, ...}
function M.summary(entries)
  local c = { created = 0, configured = 0, unchanged = 0, deleted = 0,
              files = 0, downloads = 0, restarts = 0 }
  for _, e in ipairs(entries) do
    if e.type == "kube" then c[e.action] = (c[e.action] or 0) + 1
    elseif e.type == "file" or e.type == "install"
           or (e.type == "node_args" and not e.this) then
      c.files = c.files + 1
    elseif e.type == "download" then
      c.downloads = c.downloads + 1
      c.files = c.files + (e.installs or 0)   -- installed from the download
    elseif e.type == "restart" then c.restarts = c.restarts + 1 end
  end
  return c
end

---The counts as one line.
---@param entries table[]
---@return string
function M.summary_line(entries)
  local c = M.summary(entries)
  return string.format("%d created, %d configured, %d deleted, %d unchanged"
    .. ", %d file%s changed, %d download%s, %d restart%s", c.created,
    c.configured, c.deleted, c.unchanged, c.files, c.files == 1 and "" or "s",
    c.downloads, c.downloads == 1 and "" or "s", c.restarts,
    c.restarts == 1 and "" or "s")
end

--- Where a permission acts on a cluster of several nodes (docs/guide.md
--- §6 "Several nodes"): `args:` and `restart:` on every node, `bin:` and
--- `plugins:` on this one.
---Does the run's cluster have nodes besides this one? (The topology the
---run saw; read now when the hook had no node setting to look at.)
local function several_nodes(run)
  local top = run.topology
  if not top and run.backend and run.backend.list then
    local ok, t = pcall(nodes.topology, run)
    top = ok and t or nil
  end
  return top ~= nil and #top.others > 0
end

---What a plan says about the hook before its steps: description and
---permissions (`new` marks those the last upgrade was not granted, when
---the run knows: run.new_permissions, a set; `nodes`, on a cluster of
---several nodes, where an `args:`, `restart:`, `bin:` or `plugins:` one
---acts), and
---uphook's own stamps.
---@param run table
---@return table header
function M.header(run)
  local hook = run.hook or {}
  local perms = {}
  local several = #(hook.permissions or {}) > 0 and several_nodes(run)
  for _, p in ipairs(hook.permissions or {}) do
    perms[#perms + 1] = { name = p,
      new = run.new_permissions and run.new_permissions[p] or nil,
      nodes = several and permissions.scope(p) or nil }
  end
  return { addon = run.addon, from = run.from, to = run.to,
    description = hook.description, permissions = perms }
end

return M

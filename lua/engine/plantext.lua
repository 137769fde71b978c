--- uphook.engine.plantext: a plan for people (docs/guide.md, "Plan").
---
--- The plan opens with the hook's description and permissions; each step
--- lists what the hook logged for it, every change, and what the step
--- means for the cluster (`impact:` workloads restarted or recreated,
--- services restarted on which nodes, how long its waits may take).
--- Object diffs are by meaning (lua/core/fielddiff.lua): a multi-line string
--- is a line diff, a long value is shown around its difference, a CRD's
--- schema churn is one line per version unless `full`. Everything the
--- hook controls goes through lua/core/escape.lua; Secret values are
--- redactions (lua/core/redact.lua); every text diff is the bounded one
--- (lua/core/textdiff.lua).
local escape = require "uphook.core.escape"
local textdiff = require "uphook.core.textdiff"
local redact = require "uphook.core.redact"
local kinds = require "uphook.core.kinds"
local plan = require "uphook.engine.plan"
local fielddiff = require "uphook.core.fielddiff"

local M = {}

local esc = escape.text
local STAMP_LABEL = "metadata.labels.addon.microk8s.io/name"
local STAMP_ANNOTATION = "metadata.annotations.addon.microk8s.io/version"

--- Values ------------------------------------------------------------------

local function quote(s)
  return '"' .. esc(s):gsub('"', '\\"') .. '"'
end

--- A compact one-line rendering, at most `budget` characters.
local function compact(v, null, budget)
  if v == nil then return "(absent)" end
  if v == null then return "null" end
  if redact.is(v) then return redact.text(v) end
  if type(v) == "string" then
    local q = quote(v)
    if #q > budget then q = q:sub(1, budget - 4) .. '..."' end
    return q
  end
  if type(v) ~= "table" then return tostring(v) end
  local list = v[1] ~= nil or (next(v) == nil and getmetatable(v) ~= nil)
  local parts, used, whole = {}, 2, true
  local function part(s, inner)
    parts[#parts + 1] = s
    used = used + #s + 2
    whole = whole and inner ~= false
    return used > budget
  end
  if list then
    for _, x in ipairs(v) do
      if part(compact(x, null, math.max(8, budget - used))) then
        whole = false; break
      end
    end
  else
    local keys = {}
    for k in pairs(v) do keys[#keys + 1] = tostring(k) end
    table.sort(keys)
    for _, k in ipairs(keys) do
      local s, inner = compact(v[k], null, math.max(8, budget - used))
      if part(esc(k) .. ": " .. s, inner) then whole = false; break end
    end
  end
  local s = (list and "[" or "{") .. table.concat(parts, ", ")
    .. (whole and "" or ", ...") .. (list and "]" or "}")
  return s, whole and #s <= budget
end

--- Leaves of a subtree as {path, scalar} pairs, at most `max`; also the
--- total count.
local function leaves(v, path, null, out, max)
  if type(v) ~= "table" or v == null or next(v) == nil then
    out.n = out.n + 1
    if #out < max then out[#out + 1] = { path, v } end
    return
  end
  local keys = {}
  for k in pairs(v) do keys[#keys + 1] = k end
  table.sort(keys, function(a, b)
    if type(a) == type(b) then return a < b end
    return type(a) == "number"
  end)
  for _, k in ipairs(keys) do
    local x = v[k]
    local p = type(k) == "number"
      and (path .. "[" .. (type(x) == "table" and x.name or k) .. "]")
      or (path .. "." .. tostring(k))
    leaves(x, p, null, out, max)
  end
end

--- Two long one-line strings, shown around where they first differ.
local function around(a, b)
  local n, p = math.min(#a, #b), 1
  while p <= n and a:byte(p) == b:byte(p) do p = p + 1 end
  local from = math.max(1, p - 24)
  local function cut(s)
    local part = s:sub(from, p + 48)
    return (from > 1 and '"...' or '"') .. esc(part):gsub('"', '\\"')
      .. (p + 48 < #s and '..."' or '"')
  end
  return cut(a), cut(b)
end

local function scalar_list(v)
  if type(v) ~= "table" or redact.is(v) or next(v) == nil and not getmetatable(v)
  then return false end
  for _, x in pairs(v) do if type(x) == "table" then return false end end
  return v[1] ~= nil or next(v) == nil
end

--- Two lists of scalars: what was removed and what was added, by value
--- (a list of `verbs` or `args` changes by its elements, not positions).
local function list_lines(path, a, b, null, out, pad)
  local count = {}
  for _, x in ipairs(a) do count[x] = (count[x] or 0) + 1 end
  local added = {}
  for _, x in ipairs(b) do
    if (count[x] or 0) > 0 then count[x] = count[x] - 1
    else added[#added + 1] = "+" .. compact(x, null, 100) end
  end
  local removed = {}
  for _, x in ipairs(a) do
    if (count[x] or 0) > 0 then
      count[x] = count[x] - 1
      removed[#removed + 1] = "-" .. compact(x, null, 100)
    end
  end
  local parts = {}
  for _, r in ipairs(removed) do parts[#parts + 1] = r end
  for _, r in ipairs(added) do parts[#parts + 1] = r end
  if #parts == 0 then
    out[#out + 1] = pad .. path .. ": reordered: " .. compact(b, null, 200)
    return
  end
  local line = table.concat(parts, " ")
  if #line <= 100 then
    out[#out + 1] = pad .. path .. ": " .. line
    return
  end
  out[#out + 1] = pad .. path .. ":"
  for _, r in ipairs(parts) do out[#out + 1] = pad .. "  " .. r end
end

--- kubectl's last-applied copy of the object: its size, never its text.
local function last_applied(v)
  if v == nil then return "(absent)" end
  if redact.is(v) then return "(kubectl's last-applied configuration, "
    .. tostring(v.bytes) .. " bytes, redacted)" end
  return "(kubectl's last-applied configuration, " .. #tostring(v)
    .. " bytes)"
end

--- Lines for one field change.
local function change_lines(c, null, out, pad)
  local path = esc(c.path)
  local a, b = c.old, c.new
  if c.path == fielddiff.LAST_APPLIED then
    out[#out + 1] = string.format("%s%s: %s -> %s", pad, path,
      last_applied(a), last_applied(b))
    return
  end
  if scalar_list(a) and scalar_list(b) then
    return list_lines(path, a, b, null, out, pad)
  end
  if (type(a) == "string" and a:find("\n", 1, true))
     or (type(b) == "string" and b:find("\n", 1, true)) then
    if type(a) ~= "table" and type(b) ~= "table" then
      local body, summary = textdiff.lines(type(a) == "string" and a or nil,
        type(b) == "string" and b or nil)
      out[#out + 1] = pad .. path .. ":" .. (summary and (" " .. summary)
        or "")
      for _, l in ipairs(body) do out[#out + 1] = pad .. "  " .. esc(l) end
      return
    end
  end
  if type(a) == "string" and type(b) == "string" and (#a > 60 or #b > 60) then
    local x, y = around(a, b)
    out[#out + 1] = string.format("%s%s: %s -> %s", pad, path, x, y)
    return
  end
  local one_side = (a == nil or a == null) ~= (b == nil or b == null)
  local big = a ~= nil and a ~= null and a or b
  if one_side and type(big) == "table" and not redact.is(big) then
    local _, fits = compact(big, null, 100)
    if fits then
      out[#out + 1] = string.format("%s%s: %s -> %s", pad, path,
        compact(a, null, 100), compact(b, null, 100))
      return
    end
    local ls = { n = 0 }
    leaves(big, "", null, ls, 12)
    out[#out + 1] = string.format("%s%s: %s (%d field%s)", pad, path,
      a == nil and "added" or b == nil and "removed" or "set", ls.n,
      ls.n == 1 and "" or "s")
    local sign = (a == nil or a == null) and "+ " or "- "
    for _, l in ipairs(ls) do
      out[#out + 1] = pad .. "  " .. sign .. esc(l[1]:sub(2)) .. ": "
        .. compact(l[2], null, 80)
    end
    if ls.n > #ls then
      out[#out + 1] = string.format("%s  ... and %d more", pad, ls.n - #ls)
    end
    return
  end
  out[#out + 1] = string.format("%s%s: %s -> %s", pad, path,
    compact(a, null, 100), compact(b, null, 100))
end

--- CRD schemas ------------------------------------------------------------

local SCHEMA = "^spec%.versions%[([^%]]+)%]%.schema%.(.*)$"

--- "openAPIV3Schema.properties.spec.properties.x" -> "spec.x"
local function field_name(rest)
  return (rest:gsub("^openAPIV3Schema%.?", ""):gsub("^properties%.", "")
    :gsub("%.properties%.", "."))
end

local function fold_schema(changes, pad)
  local by_version, order = {}, {}
  local rest = {}
  for _, c in ipairs(changes) do
    local v, sub = c.path:match(SCHEMA)
    if v then
      local f = by_version[v]
      if not f then
        f = { n = 0, desc = 0, added = {}, removed = {}, types = {}, other = 0 }
        by_version[v] = f
        order[#order + 1] = v
      end
      f.n = f.n + 1
      local leaf = sub:match("([^.]+)$")
      if leaf == "description" then f.desc = f.desc + 1
      elseif leaf == "type" and type(c.old) == "string" and type(c.new) == "string" then
        f.types[#f.types + 1] = string.format("%s %s -> %s",
          field_name(sub:gsub("%.type$", "")), c.old, c.new)
      elseif sub:match("properties%.[^.]+$") and c.old == nil then
        f.added[#f.added + 1] = field_name(sub)
      elseif sub:match("properties%.[^.]+$") and c.new == nil then
        f.removed[#f.removed + 1] = field_name(sub)
      else f.other = f.other + 1 end
    else
      rest[#rest + 1] = c
    end
  end
  local function list(t)
    local shown = {}
    for i = 1, math.min(#t, 4) do shown[i] = esc(t[i]) end
    return table.concat(shown, ", ") .. (#t > 4 and (", +" .. (#t - 4)) or "")
  end
  local lines = {}
  for _, v in ipairs(order) do
    local f, parts = by_version[v], {}
    if #f.types > 0 then parts[#parts + 1] = "types changed: " .. list(f.types) end
    if #f.added > 0 then
      parts[#parts + 1] = #f.added .. " field" .. (#f.added == 1 and "" or "s")
        .. " added (" .. list(f.added) .. ")"
    end
    if #f.removed > 0 then
      parts[#parts + 1] = #f.removed .. " removed (" .. list(f.removed) .. ")"
    end
    if f.other > 0 then parts[#parts + 1] = f.other .. " other" end
    if f.desc > 0 then
      parts[#parts + 1] = f.desc .. " description" .. (f.desc == 1 and "" or "s")
    end
    local only = (f.desc == f.n) and ", descriptions only" or ""
    lines[#lines + 1] = string.format("%sschema of %s changed: %d change%s%s "
      .. "(%s; --full shows them)", pad, esc(v), f.n, f.n == 1 and "" or "s",
      only, only ~= "" and "no field or type changed" or table.concat(parts, ", "))
  end
  return rest, lines
end

--- Entries --------------------------------------------------------------------

local SIGN = { created = "+", configured = "~", unchanged = "=",
               deleted = "-" }

local function kube_lines(e, out, opts)
  local name = esc(kinds.joinname(e.name, e.namespace))
  out[#out + 1] = string.format("  %s %s %s (%s)%s", SIGN[e.action] or "?",
    esc(e.kind), name, e.action, e.reason and (": " .. esc(e.reason)) or "")
  local changes, hidden = {}, 0
  for _, c in ipairs(e.diff or {}) do
    if c.path == STAMP_LABEL or c.path == STAMP_ANNOTATION
       or (c.path == fielddiff.LAST_APPLIED and c.new == nil) then
      hidden = hidden + 1
    else changes[#changes + 1] = c end
  end
  local folded = {}
  if e.kind == "CustomResourceDefinition" and not opts.full then
    changes, folded = fold_schema(changes, "      ")
  end
  for _, c in ipairs(changes) do change_lines(c, opts.null, out, "      ") end
  for _, l in ipairs(folded) do out[#out + 1] = l end
  if hidden > 0 and #changes == 0 and #folded == 0 then
    out[#out + 1] = "      (only uphook's label and annotation, and kubectl's "
      .. "bookkeeping: see the top)"
  end
end

---Renderers by entry type: function(e, out, opts) appending lines.
---Other modules' entry types get one here; an unknown type shows its
---`text`.
M.renderers = {
  step = function(e, out)
    out[#out + 1] = string.format("[%d] %s", e.step, esc(e.text))
  end,
  log = function(e, out)
    local where = (e.phase and e.phase ~= "upgrade") and (e.phase .. ": ")
      or ""
    out[#out + 1] = "  " .. (e.level == "warn" and "warning: " or "")
      .. where .. esc(e.text)
  end,
  kube = kube_lines,
  file = function(e, out)
    out[#out + 1] = string.format("  %s file %s (%s%s)%s",
      e.action == "created" and "+" or e.action == "deleted" and "-" or "~",
      esc(e.path), e.action, e.mode and (", mode " .. esc(e.mode)) or "",
      e.node and (" on " .. esc(e.node) .. ((e.path:match("^bin:")
        or e.path:match("^plugins:")) and " only" or "")) or "")
    for l in e.diff:gmatch("[^\n]+") do out[#out + 1] = "      " .. esc(l) end
  end,
  download = function(e, out)
    out[#out + 1] = "  download " .. esc(e.url)
    out[#out + 1] = "      sha256 " .. e.sha256
    if e.dest then out[#out + 1] = "      -> " .. esc(e.dest) end
    if e.status ~= nil then
      out[#out + 1] = "      HEAD: " .. esc(e.status)
        .. ((e.answers or e.answers == nil) and "" or " (does not answer)")
    end
  end,
  install = function(e, out)
    out[#out + 1] = string.format("  install %s -> %s", esc(e.source),
      esc(e.dest))
  end,
  -- another node's args (this node's share is its file entry)
  node_args = function(e, out)
    if e.this then return end
    out[#out + 1] = string.format("  ~ args:%s on %s (%s)", esc(e.service),
      esc(e.node), esc(tostring(e.address)))
    for _, ch in ipairs(e.changes) do
      local function v(x)
        return x == false and "absent" or esc(string.format("%q",
          tostring(x)))
      end
      out[#out + 1] = string.format("      %s: %s (%s) -> %s", esc(ch.flag),
        v(ch.prior), ch.how, v(ch.new))
    end
  end,
  restart = function(e, out)
    out[#out + 1] = "  restart " .. esc(e.service)
      .. (e.node and (" on " .. esc(e.node)) or "")
  end,
  fetch = function(e, out)
    out[#out + 1] = "  fetch " .. esc(e.text)
  end,
  after_yes = function(e, out)
    out[#out + 1] = "  after your yes: " .. esc(e.text)
  end,
  privileged = function(e, out)
    out[#out + 1] = "  ! kube:privileged " .. esc(e.text)
  end,
  wait = function(e, out)
    out[#out + 1] = "  wait for " .. esc(e.text)
      .. (e.timeout and string.format(" (up to %s)", M.duration(e.timeout))
          or "")
  end,
}

---"45 s", "5 min", "1 min 30 s".
---@param s number seconds
---@return string
function M.duration(s)
  s = math.floor(s + 0.5)
  if s < 120 then return s .. " s" end
  local m, r = s // 60, s % 60
  return m .. " min" .. (r > 0 and (" " .. r .. " s") or "")
end

--- Impact ----------------------------------------------------------------------

local WORKLOADS = { Deployment = "pods", DaemonSet = "pods on every node",
  StatefulSet = "pods one at a time", ReplicaSet = "pods",
  ReplicationController = "pods" }

local function template_changed(e)
  for _, c in ipairs(e.diff or {}) do
    if c.path:find("^spec%.template%.") or c.path == "spec.template" then
      return true
    end
  end
end

---What one step means for the cluster, as its parts (the text plan's
---`impact:` line joins them with "; "); an empty list for none.
---@param list table[] the step's entries
---@return string[]
function M.impact_parts(list)
  local parts, deleted, restarts, order = {}, {}, {}, {}
  local waits, wait_total = 0, 0
  for _, e in ipairs(list) do
    if e.type == "kube" and WORKLOADS[e.kind] then
      local id = esc(e.kind .. " " .. kinds.joinname(e.name, e.namespace))
      if e.action == "deleted" then deleted[id] = #parts + 1
        parts[#parts + 1] = id .. " stops"
      elseif e.action == "created" and deleted[id] then
        parts[deleted[id]] = id .. " is recreated: its " .. WORKLOADS[e.kind]
          .. " stop before the new ones start (downtime)"
      elseif e.action == "created" then parts[#parts + 1] = id .. " starts"
      elseif e.action == "configured" and template_changed(e) then
        parts[#parts + 1] = id .. " restarts its " .. WORKLOADS[e.kind]
          .. " (rolling update)"
      end
    elseif e.type == "restart" then
      local svc = esc(e.service)
      if not restarts[svc] then restarts[svc] = {}; order[#order + 1] = svc end
      restarts[svc][#restarts[svc] + 1] = e.node and esc(e.node) or "this node"
    elseif e.type == "wait" then
      waits, wait_total = waits + 1, wait_total + (e.timeout or 0)
    end
  end
  for _, svc in ipairs(order) do
    parts[#parts + 1] = "restarts " .. svc .. " on "
      .. table.concat(restarts[svc], ", ")
  end
  if waits > 0 then
    parts[#parts + 1] = string.format("waits up to %s (%d wait%s)",
      M.duration(wait_total), waits, waits == 1 and "" or "s")
  end
  return parts
end

---The `impact:` line of one step, or nil.
---@param list table[] the step's entries
---@return string|nil
function M.impact(list)
  local parts = M.impact_parts(list)
  if #parts == 0 then return nil end
  return "  impact: " .. table.concat(parts, "; ")
end

---Every step's impact, for the JSON plan (docs/output.md): one
---{step = n, text = the step's title, impact = parts} per step that has
---any (n 0 and no text: before the first step).
---@param entries table[]
---@return table[]
function M.impacts(entries)
  local out, step, head = {}, {}, nil
  local function flush()
    local parts = M.impact_parts(step)
    if #parts > 0 then
      out[#out + 1] = { step = head and head.step or 0,
        text = head and head.text, impact = parts }
    end
    step = {}
  end
  for _, e in ipairs(entries) do
    if e.type == "step" then flush(); head = e end
    step[#step + 1] = e
  end
  flush()
  return out
end

--- The whole plan -------------------------------------------------------------

---The header's lines (plan.header's table): "<title> <addon> <from> ->
---<to>", the description, the permissions with the new ones marked.
---@param h table plan.header(run)
---@param out string[] appended to
---@param title? string "Plan for" unless given ("Upgrading")
---@return string[] out
function M.header_lines(h, out, title)
  out[#out + 1] = string.format("%s %s %s -> %s", title or "Plan for",
    esc(h.addon), esc(tostring(h.from)), esc(tostring(h.to)))
  if h.description then out[#out + 1] = "  " .. esc(h.description) end
  local perms = {}
  for _, p in ipairs(h.permissions or {}) do
    perms[#perms + 1] = esc(p.name) .. (p.nodes and " (" .. p.nodes .. ")"
      or "") .. (p.new and " (new)" or "")
  end
  out[#out + 1] = "  permissions: " .. (#perms > 0
    and table.concat(perms, ", ") or "none")
  return out
end
local header_lines = M.header_lines

--- What every object's diff would repeat, said once: uphook's own label
--- and annotation, and kubectl's last-applied copy leaving the objects
--- whose fields uphook's server-side apply takes over.
local function bookkeeping_lines(h, entries, out)
  local applied, dropped = false, 0
  for _, e in ipairs(entries) do
    if e.type == "kube" and e.action ~= "deleted" then applied = true end
    for _, c in ipairs(e.type == "kube" and e.diff or {}) do
      if c.path == fielddiff.LAST_APPLIED and c.new == nil then
        dropped = dropped + 1
      end
    end
  end
  if applied then
    out[#out + 1] = string.format("  every object applied is labelled "
      .. "addon.microk8s.io/name=%s and annotated "
      .. "addon.microk8s.io/version=%s (not repeated below)", esc(h.addon),
      esc(tostring(h.to)))
  end
  if dropped > 0 then
    out[#out + 1] = string.format("  %d object%s lose kubectl's "
      .. "last-applied-configuration annotation: uphook's server-side apply "
      .. "takes over the fields kubectl applied (not repeated below)",
      dropped, dropped == 1 and "" or "s")
  end
end

---Text rendering of entries. opts: `changed_only` (the end of a real
---upgrade: no log lines, unchanged objects or waits), `full` (CRD
---schemas unfolded), `header` (plan.header(run): description and
---permissions first), `null`.
---@param entries table[]
---@param opts? table
---@return string
function M.render(entries, opts)
  opts = opts or {}
  local out, loss, privileged = {}, {}, {}
  if opts.header then
    header_lines(opts.header, out)
    bookkeeping_lines(opts.header, entries, out)
  end
  local step = {}
  local function flush()
    if not opts.changed_only then
      local line = M.impact(step)
      if line then out[#out + 1] = line end
    end
    step = {}
  end
  for _, e in ipairs(entries) do
    if e.type == "step" then flush() end
    step[#step + 1] = e
    local hide = opts.changed_only and (e.action == "unchanged"
      or e.type == "wait" or e.type == "log" or e.type == "fetch"
      or e.type == "privileged" or e.type == "after_yes")
    if not hide then
      local r = M.renderers[e.type]
      if r then r(e, out, opts)
      else out[#out + 1] = "  " .. esc(e.type) .. " " .. esc(e.text or "") end
    end
    if e.type == "kube" and e.data_loss then
      loss[#loss + 1] = string.format("  - %s %s", esc(e.kind),
        esc(kinds.joinname(e.name, e.namespace)))
    elseif e.type == "privileged" then
      privileged[#privileged + 1] = "  - " .. esc(e.text)
    end
  end
  flush()
  if #privileged > 0 then
    out[#out + 1] = "!! PRIVILEGED: root on the nodes or in the cluster "
      .. "(kube:privileged):"
    for _, l in ipairs(privileged) do out[#out + 1] = l end
  end
  if #loss > 0 then
    out[#out + 1] = "!! DATA LOSS: these deletions were allowed with "
      .. "allow_data_loss = true:"
    for _, l in ipairs(loss) do out[#out + 1] = l end
  end
  out[#out + 1] = "Summary: " .. plan.summary_line(entries)
  return table.concat(out, "\n") .. "\n"
end

return M

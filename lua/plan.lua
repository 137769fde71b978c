--- uphook.plan: what an upgrade changes, recorded as it goes (under
--- `uphook plan` instead of changing anything), rendered as text or JSON.
---
--- The same records report a real upgrade's changes at its end.
local kinds = require "uphook.kinds"

local M = {}

local SERVER_FIELDS = kinds.IS_SERVER_METADATA

--- A compact one-line rendering of a value, for diffs.
local function compact(v, null, budget)
  budget = budget or 100
  if v == nil then return "(absent)" end
  if v == null then return "null" end
  if type(v) == "string" then return string.format("%q", v) end
  if type(v) ~= "table" then return tostring(v) end
  local parts, n = {}, 0
  if v[1] ~= nil or next(v) == nil then
    for _, x in ipairs(v) do parts[#parts + 1] = compact(x, null, 40) end
    n = #parts
  else
    local keys = {}
    for k in pairs(v) do keys[#keys + 1] = tostring(k) end
    table.sort(keys)
    for _, k in ipairs(keys) do
      parts[#parts + 1] = k .. ": " .. compact(v[k], null, 40)
    end
    n = #parts
  end
  local open, close = "{", "}"
  if v[1] ~= nil or (next(v) == nil and getmetatable(v)) then
    open, close = "[", "]"
  end
  local s = open .. table.concat(parts, ", ") .. close
  if #s > budget then s = s:sub(1, budget - 4) .. "..." .. close end
  return s, n
end

local function is_list(t)
  return type(t) == "table" and t[1] ~= nil
end

--- List items are matched by name (or mountPath, containerPort) when
--- they have one, else by position.
local function item_key(x, i)
  local key = type(x) == "table" and (x.name or x.mountPath
              or x.containerPort)
  return key and tostring(key) or tostring(i)
end

local function diff_into(a, b, path, out, null, depth)
  if a == b then return end
  local ta, tb = type(a) == "table" and a ~= null, type(b) == "table" and b ~= null
  if not (ta and tb) or depth > 40 then
    out[#out + 1] = { path = path, old = compact(a, null),
                      new = compact(b, null) }
    return
  end
  local ka, kb, order = {}, {}, {}
  if is_list(a) or is_list(b) then
    for i, x in ipairs(a) do local k = item_key(x, i); ka[k] = x; order[#order + 1] = k end
    for i, x in ipairs(b) do
      local k = item_key(x, i)
      kb[k] = x
      if ka[k] == nil then order[#order + 1] = k end
    end
    for _, k in ipairs(order) do
      diff_into(ka[k], kb[k], path .. "[" .. k .. "]", out, null, depth + 1)
    end
    return
  end
  for k, x in pairs(a) do ka[tostring(k)] = x; order[#order + 1] = tostring(k) end
  for k, x in pairs(b) do
    kb[tostring(k)] = x
    if a[k] == nil then order[#order + 1] = tostring(k) end
  end
  table.sort(order)
  for _, k in ipairs(order) do
    local skip = (path == "metadata" and SERVER_FIELDS[k])
                 or (path == "" and k == "status")
    if not skip then
      diff_into(ka[k], kb[k], path == "" and k or (path .. "." .. k), out,
                null, depth + 1)
    end
  end
end

---Field-level differences between two objects: a new or removed subtree
---is one line.
---@return {path:string, old:string, new:string}[]
function M.field_diff(a, b, null)
  local out = {}
  diff_into(a, b, "", out, null, 0)
  return out
end

--- Line diff (LCS) rendered as a unified diff with 3 lines of context.
local function lines(s)
  local t = {}
  if not s or s == "" then return t end
  for l in (s:sub(-1) == "\n" and s or s .. "\n"):gmatch("(.-)\n") do
    t[#t + 1] = l
  end
  return t
end

local function lcs_ops(a, b)
  local n, m = #a, #b
  if n * m > 4e6 then   -- too big to align: show a replacement
    local ops = {}
    for i = 1, n do ops[#ops + 1] = { "-", a[i] } end
    for j = 1, m do ops[#ops + 1] = { "+", b[j] } end
    return ops
  end
  local L = {}
  for i = n + 1, 1, -1 do
    L[i] = {}
    for j = m + 1, 1, -1 do
      if i > n or j > m then L[i][j] = 0
      elseif a[i] == b[j] then L[i][j] = L[i + 1][j + 1] + 1
      else L[i][j] = math.max(L[i + 1][j], L[i][j + 1]) end
    end
  end
  local ops, i, j = {}, 1, 1
  while i <= n or j <= m do
    if i <= n and j <= m and a[i] == b[j] then
      ops[#ops + 1] = { " ", a[i] }; i, j = i + 1, j + 1
    elseif i <= n and (j > m or L[i + 1][j] >= L[i][j + 1]) then
      ops[#ops + 1] = { "-", a[i] }; i = i + 1
    else
      ops[#ops + 1] = { "+", b[j] }; j = j + 1
    end
  end
  return ops
end

---@param old string|nil
---@param new string|nil
---@param name string
---@return string
function M.unified(old, new, name)
  local ops = lcs_ops(lines(old), lines(new))
  local out = { "--- a/" .. name, "+++ b/" .. name }
  local k = 1
  while k <= #ops do
    if ops[k][1] == " " then k = k + 1 else
      local s = math.max(1, k - 3)
      local e, gap = k, 0
      while e <= #ops and gap <= 6 do
        gap = ops[e][1] == " " and gap + 1 or 0
        e = e + 1
      end
      e = math.min(#ops, e - 1 - math.max(0, gap - 3))
      local oa, ob, na, nb = 0, 0, 0, 0
      for x = 1, s - 1 do
        if ops[x][1] ~= "+" then oa = oa + 1 end
        if ops[x][1] ~= "-" then na = na + 1 end
      end
      for x = s, e do
        if ops[x][1] ~= "+" then ob = ob + 1 end
        if ops[x][1] ~= "-" then nb = nb + 1 end
      end
      out[#out + 1] = string.format("@@ -%d,%d +%d,%d @@", oa + 1, ob,
        na + 1, nb)
      for x = s, e do out[#out + 1] = ops[x][1] .. ops[x][2] end
      k = e + 1
    end
  end
  return table.concat(out, "\n") .. "\n"
end

--- Recording -------------------------------------------------------------

local function add(run, e)
  e.step = run.step_no or 0
  run.entries[#run.entries + 1] = e
  return e
end

function M.step(run, text)
  run.step_no = (run.step_no or 0) + 1
  add(run, { type = "step", text = text })
end

function M.kube(run, action, ref, prior, stored, data_loss)
  local e = add(run, { type = "kube", action = action, kind = ref.kind,
    name = ref.name, namespace = ref.namespace, data_loss = data_loss })
  if action == "configured" or (action == "created" and prior) then
    e.diff = M.field_diff(prior, stored, run.null)
  end
end

---@param mode? string the mode the file gets ("0644"), shown in the plan
function M.file(run, path, old, new, mode)
  if old == new then return end
  add(run, { type = "file", path = path,
    action = old == nil and "created" or new == nil and "deleted"
             or "changed", mode = new ~= nil and mode or nil,
    diff = M.unified(old, new, path) })
end

function M.download(run, url, sum)
  return add(run, { type = "download", url = url, sha256 = sum })
end

--- An install joins the entry of its download (dest and mode), so the
--- plan shows URL, sha256 and destination together.
function M.install(run, token, dest, mode)
  local where = mode and (dest .. " (mode " .. mode .. ")") or dest
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

function M.restart(run, svc)
  add(run, { type = "restart", service = svc })
end

function M.note(run, kind, text)
  add(run, { type = kind, text = text })
end

--- Rendering ---------------------------------------------------------------

local SIGN = { created = "+", configured = "~", unchanged = "=",
               deleted = "-" }

local function render_entry(e, out)
  if e.type == "step" then
    out[#out + 1] = string.format("[%d] %s", e.step, e.text)
  elseif e.type == "kube" then
    out[#out + 1] = string.format("  %s %s %s (%s)", SIGN[e.action] or "?",
      e.kind, kinds.joinname(e.name, e.namespace), e.action)
    for _, d in ipairs(e.diff or {}) do
      out[#out + 1] = string.format("      %s: %s -> %s", d.path, d.old, d.new)
    end
  elseif e.type == "file" then
    out[#out + 1] = string.format("  %s file %s (%s%s)",
      e.action == "created" and "+" or e.action == "deleted" and "-" or "~",
      e.path, e.action, e.mode and (", mode " .. e.mode) or "")
    for l in e.diff:gmatch("[^\n]+") do out[#out + 1] = "      " .. l end
  elseif e.type == "download" then
    out[#out + 1] = string.format("  download %s\n      sha256 %s%s%s",
      e.url, e.sha256, e.dest and ("\n      -> " .. e.dest) or "",
      e.status == nil and "" or ("\n      HEAD: " .. tostring(e.status)
        .. (e.answers and "" or " (does not answer)")))
  elseif e.type == "install" then
    out[#out + 1] = string.format("  install %s -> %s", e.source, e.dest)
  elseif e.type == "restart" then
    out[#out + 1] = "  restart " .. e.service
  elseif e.type == "wait" then
    out[#out + 1] = "  wait for " .. e.text
  elseif e.type == "fetch" then
    out[#out + 1] = "  fetch " .. e.text
  elseif e.type == "privileged" then
    out[#out + 1] = "  ! kube:privileged " .. e.text
  end
end

---Counts of each kind of change.
function M.summary(entries)
  local c = { created = 0, configured = 0, unchanged = 0, deleted = 0,
              files = 0, downloads = 0, restarts = 0 }
  for _, e in ipairs(entries) do
    if e.type == "kube" then c[e.action] = (c[e.action] or 0) + 1
    elseif e.type == "file" or e.type == "install" then c.files = c.files + 1
    elseif e.type == "download" then
      c.downloads = c.downloads + 1
      c.files = c.files + (e.installs or 0)   -- installed from the download
    elseif e.type == "restart" then c.restarts = c.restarts + 1 end
  end
  return c
end

function M.summary_line(entries)
  local c = M.summary(entries)
  return string.format("%d created, %d configured, %d deleted, %d unchanged"
    .. ", %d file%s changed, %d download%s, %d restart%s", c.created,
    c.configured, c.deleted, c.unchanged, c.files, c.files == 1 and "" or "s",
    c.downloads, c.downloads == 1 and "" or "s", c.restarts,
    c.restarts == 1 and "" or "s")
end

---Text rendering; `changed_only` hides unchanged objects and waits.
function M.render(entries, changed_only)
  local out, loss, privileged = {}, {}, {}
  for _, e in ipairs(entries) do
    if not (changed_only and (e.action == "unchanged" or e.type == "wait"
            or e.type == "fetch" or e.type == "privileged"))
    then render_entry(e, out) end
    if e.type == "kube" and e.data_loss then
      loss[#loss + 1] = string.format("  - %s %s", e.kind,
        kinds.joinname(e.name, e.namespace))
    elseif e.type == "privileged" then
      privileged[#privileged + 1] = "  - " .. e.text
    end
  end
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
  out[#out + 1] = "Summary: " .. M.summary_line(entries)
  return table.concat(out, "\n") .. "\n"
end

return M

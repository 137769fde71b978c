--- values: a Helm chart's values, edited by key path (docs/contract.md §5).
---
--- ```lua
--- local values = require "values"
--- local rel = helm.release("traefik", "ingress")
--- local user = rel and rel.values or {}
--- -- chart 41 renamed the key: move what the user set before
--- values.rename(user, "providers.kubernetesIngressNginx",
---               "providers.kubernetesIngressNGINX")
--- values.drop(user, "ports.websecure.tls.deprecated")
--- local v = values.merge({ deployment = { kind = "DaemonSet" } }, user)
--- helm.upgrade { release = "traefik", namespace = "ingress",
---                chart = "charts/traefik-41.3.0.tgz", values = v }
--- ```
---
--- A path is a string of keys joined by dots (`"a.b.c"`); a key that
--- holds a dot is written with a backslash before it
--- (`"podAnnotations.prometheus\\.io/scrape"`), or the path is given as a
--- list of keys (`{ "podAnnotations", "prometheus.io/scrape" }`).
--- Lists are values like any other: a path never goes into one.
---
--- `merge` follows Helm's own merge of `--values` files over a chart's
--- defaults: maps merge key by key, the user's value wins, a list
--- replaces the list it meets (it is not merged item by item), and a
--- `null` the user gives stays in the result (Helm then removes the
--- chart's default of that key).
local M = {}

local function is_list(v)
  if type(v) ~= "table" then return false end
  local mt = getmetatable(v)
  if type(mt) == "table" and mt.__name == "array" then return true end
  local n = #v
  if n == 0 then return false end
  local count = 0
  for _ in pairs(v) do count = count + 1 end
  return count == n
end

local function is_map(v)
  return type(v) == "table" and not is_list(v)
end

--- A path's keys, checked; `fname` names the function in errors.
local function keys_of(path, fname, n)
  local keys = {}
  if type(path) == "table" then
    for i, k in ipairs(path) do
      if type(k) ~= "string" or k == "" then
        error(string.format("values.%s: path #%d: key %d must be a "
          .. "non-empty string", fname, n, i), 3)
      end
      keys[i] = k
    end
  elseif type(path) == "string" then
    local cur = {}
    local i, len = 1, #path
    while i <= len do
      local ch = path:sub(i, i)
      if ch == "\\" and path:sub(i + 1, i + 1) == "." then
        cur[#cur + 1] = "."
        i = i + 1
      elseif ch == "." then
        keys[#keys + 1] = table.concat(cur)
        cur = {}
      else
        cur[#cur + 1] = ch
      end
      i = i + 1
    end
    keys[#keys + 1] = table.concat(cur)
    for _, k in ipairs(keys) do
      if k == "" then
        error(string.format("values.%s: path #%d %q has an empty key",
          fname, n, path), 3)
      end
    end
  else
    error(string.format("values.%s: path #%d must be a string or a list "
      .. "of keys, got %s", fname, n, type(path)), 3)
  end
  if #keys == 0 then
    error(string.format("values.%s: path #%d is empty", fname, n), 3)
  end
  return keys
end

local function checkt(t, fname)
  if not is_map(t) then
    error(string.format("values.%s: values must be a map (a table of "
      .. "keys), got %s", fname, is_list(t) and "a list" or type(t)), 3)
  end
end

--- The maps along `keys` (all but the last key): a list of the tables
--- walked, or nil where the path stops at an absent key or a non-map.
local function walk(t, keys)
  local trail = { t }
  for i = 1, #keys - 1 do
    local nxt = trail[i][keys[i]]
    if not is_map(nxt) then return nil end
    trail[i + 1] = nxt
  end
  return trail
end

--- Remove the maps along `trail` that the removal left empty (not `t`).
local function prune(trail, keys)
  for i = #trail, 2, -1 do
    if next(trail[i]) ~= nil then return end
    trail[i - 1][keys[i - 1]] = nil
  end
end

---Remove the value at `path` from `t` (in place); maps it leaves empty go
---too. Nothing happens when the path is absent.
---Since hook API 0.2.
---@param t table the values (a map)
---@param path string|string[] `"a.b"` or `{ "a", "b" }`
---@return any removed the value removed, or nil when there was none
function M.drop(t, path)
  checkt(t, "drop")
  local keys = keys_of(path, "drop", 2)
  local trail = walk(t, keys)
  if not trail then return nil end
  local last = trail[#trail]
  local v = last[keys[#keys]]
  if v == nil then return nil end
  last[keys[#keys]] = nil
  prune(trail, keys)
  return v
end

---Move the value at `from` to `to` in `t` (in place), making the maps
---`to` needs; maps `from` leaves empty go. Nothing happens when `from` is
---absent. When both are set it is an error naming both: which one the
---user meant is not known.
---Since hook API 0.2.
---@param t table the values (a map)
---@param from string|string[] the old key path
---@param to string|string[] the new key path
---@return boolean moved true when a value moved
function M.rename(t, from, to)
  checkt(t, "rename")
  local fk, tk = keys_of(from, "rename", 2), keys_of(to, "rename", 3)
  local trail = walk(t, fk)
  local v = trail and trail[#trail][fk[#fk]]
  if v == nil then return false end
  -- checked before anything moves: the maps on the way, the target free
  local cur = t
  for i = 1, #tk do
    local nxt = cur[tk[i]]
    if i == #tk and nxt ~= nil then
      error(string.format("values.rename: both %s and %s are set; keep one",
        table.concat(fk, "."), table.concat(tk, ".")), 2)
    elseif nxt ~= nil and not is_map(nxt) then
      error(string.format("values.rename: cannot move %s to %s: %s is not "
        .. "a map", table.concat(fk, "."), table.concat(tk, "."),
        table.concat(tk, ".", 1, i)), 2)
    elseif nxt == nil then break end
    cur = nxt
  end
  M.drop(t, fk)
  cur = t
  for i = 1, #tk - 1 do
    cur[tk[i]] = cur[tk[i]] or {}
    cur = cur[tk[i]]
  end
  cur[tk[#tk]] = v
  return true
end

local function copy(v, depth)
  if type(v) ~= "table" then return v end
  if depth > 100 then error("values.merge: nested deeper than 100", 0) end
  local out = {}
  for k, x in pairs(v) do out[k] = copy(x, depth + 1) end
  local mt = getmetatable(v)
  if type(mt) == "table" and mt.__name == "array" then
    setmetatable(out, mt)
  end
  return out
end

local function merge(d, u, depth)
  if depth > 100 then error("values.merge: nested deeper than 100", 0) end
  local out = copy(d, depth)
  for k, uv in pairs(u) do
    local dv = out[k]
    if is_map(dv) and is_map(uv) then
      out[k] = merge(dv, uv, depth + 1)
    else
      out[k] = copy(uv, depth + 1)
    end
  end
  return out
end

---A new table: `user` over `defaults`. Maps merge key by key, the user's
---value wins, a list replaces the whole list (or value) it meets; neither
---argument changes.
---Since hook API 0.2.
---@param defaults table|nil a map
---@param user table|nil a map
---@return table merged
function M.merge(defaults, user)
  if defaults ~= nil then checkt(defaults, "merge") end
  if user ~= nil then checkt(user, "merge") end
  return merge(defaults or {}, user or {}, 0)
end

return M

--- uphook.core.textdiff: the one bounded line diff (docs/security.md, "What
--- the user sees"). Every text the plan compares goes through it: a file
--- a hook writes, and a multi-line string field (a Corefile in a
--- ConfigMap). Its time and memory are bounded for any input:
---
--- * the common head and tail are skipped in 4 KiB blocks (linear, no
---   copy of the inputs);
--- * what is left is split into lines only when it is at most
---   `LIMITS.bytes` and `LIMITS.lines`; it is aligned with Myers' O(ND)
---   algorithm, giving up after `LIMITS.edits` edits or `LIMITS.work`
---   steps;
--- * past any limit the diff is one line, `files differ: N -> M bytes`,
---   with what can still be said (the first and last changed line);
--- * the rendered hunks stop after `LIMITS.out` lines.
local M = {}

M.LIMITS = { bytes = 256 << 10, lines = 4000, edits = 400, work = 2000000,
             out = 300, context = 3 }

--- Length of the common prefix of a and b, in bytes.
local function common_prefix(a, b)
  local n, i = math.min(#a, #b), 1
  while i + 4095 <= n and a:sub(i, i + 4095) == b:sub(i, i + 4095) do
    i = i + 4096
  end
  while i <= n and a:byte(i) == b:byte(i) do i = i + 1 end
  return i - 1
end

--- Length of the common suffix of a and b, not reaching into the first
--- `skip` bytes of either.
local function common_suffix(a, b, skip)
  local na, nb = #a, #b
  local max, k = math.min(na, nb) - skip, 0
  while k + 4096 <= max and a:sub(na - k - 4095, na - k)
        == b:sub(nb - k - 4095, nb - k) do
    k = k + 4096
  end
  while k < max and a:byte(na - k) == b:byte(nb - k) do k = k + 1 end
  return k
end

local function count_lines(s, i, j)
  local n = 0
  for _ in s:sub(i, j):gmatch("\n") do n = n + 1 end
  return n
end

M.NO_EOL = "\\ No newline at end of file"

--- Lines of s; a last line without its newline is followed by the
--- marker line diff(1) prints, so that "a" and "a\n" differ.
local function split(s)
  local t = {}
  if s == "" then return t end
  local eol = s:sub(-1) == "\n"
  for l in (eol and s or s .. "\n"):gmatch("(.-)\n") do t[#t + 1] = l end
  if not eol then t[#t + 1] = M.NO_EOL end
  return t
end

local function at_line_start(s, i)
  return i == 1 or s:byte(i - 1) == 10
end

--- Myers' greedy algorithm: the edit script from a to b, or nil past the
--- limits. Returns a list of {op, line} with op " ", "-" or "+".
local function myers(a, b, lim)
  local n, m = #a, #b
  local v, trace, work = { [1] = 0 }, {}, 0
  local maxd = math.min(n + m, lim.edits)
  for d = 0, maxd do
    local vd = {}
    for k = -d, d, 2 do
      local x
      if k == -d or (k ~= d and v[k - 1] < v[k + 1]) then x = v[k + 1]
      else x = v[k - 1] + 1 end
      local y, x0 = x - k, x
      while x < n and y < m and a[x + 1] == b[y + 1] do
        x, y = x + 1, y + 1
      end
      work = work + 1 + (x - x0)
      v[k], vd[k] = x, x
      if x >= n and y >= m then
        trace[d] = vd
        return M._backtrack(a, b, trace, d)
      end
    end
    trace[d] = vd
    work = work + d
    if work > lim.work then return nil end
  end
  return nil
end

function M._backtrack(a, b, trace, D)
  local rev, x, y = {}, #a, #b
  for d = D, 1, -1 do
    local vp, k = trace[d - 1], x - y
    local down = k == -d or (k ~= d and vp[k - 1] < vp[k + 1])
    local pk = down and k + 1 or k - 1
    local px = vp[pk]
    local py = px - pk
    local mx, my = down and px or px + 1, down and py + 1 or py
    while x > mx and y > my do
      rev[#rev + 1] = { " ", a[x] }; x, y = x - 1, y - 1
    end
    if down then rev[#rev + 1] = { "+", b[y] } else rev[#rev + 1] = { "-", a[x] } end
    x, y = px, py
  end
  while x > 0 and y > 0 do rev[#rev + 1] = { " ", a[x] }; x, y = x - 1, y - 1 end
  local ops = {}
  for i = #rev, 1, -1 do ops[#ops + 1] = rev[i] end
  return ops
end

--- Group ops into hunks with `ctx` lines of context; line numbers start
--- at base_a/base_b. Returns rendered lines (without a file header).
local function hunks(ops, base_a, base_b, lim)
  local out, ctx, k, total = {}, lim.context, 1, #ops
  local shown = 0
  -- line numbers before each op
  local la, lb = {}, {}
  local ia, ib = base_a, base_b
  for i = 1, total do
    la[i], lb[i] = ia, ib
    if ops[i][1] ~= "+" then ia = ia + 1 end
    if ops[i][1] ~= "-" then ib = ib + 1 end
  end
  while k <= total do
    if ops[k][1] == " " then k = k + 1 else
      local s, e, gap = math.max(1, k - ctx), k, 0
      while e <= total and gap <= 2 * ctx do
        gap = ops[e][1] == " " and gap + 1 or 0
        e = e + 1
      end
      e = math.min(total, e - 1 - math.max(0, gap - ctx))
      local na, nb = 0, 0
      for x = s, e do
        if ops[x][1] ~= "+" then na = na + 1 end
        if ops[x][1] ~= "-" then nb = nb + 1 end
      end
      out[#out + 1] = string.format("@@ -%d,%d +%d,%d @@", la[s], na, lb[s], nb)
      for x = s, e do
        if shown >= lim.out then
          local left = 0
          for y = x, total do if ops[y][1] ~= " " then left = left + 1 end end
          out[#out + 1] = string.format("... (%d more changed line%s not "
            .. "shown)", left, left == 1 and "" or "s")
          return out
        end
        out[#out + 1] = ops[x][1] .. ops[x][2]
        shown = shown + 1
      end
      k = e + 1
    end
  end
  return out
end

---The bounded line diff of two texts (nil: absent). Returns the hunk
---lines (`@@ -a,n +b,m @@`, then ` `/`-`/`+` lines) and a summary when
---the diff was too large to align (then the hunks are empty).
---@param old string|nil
---@param new string|nil
---@param limits? table overrides of M.LIMITS
---@return string[] lines, string|nil summary
function M.lines(old, new, limits)
  local lim = M.LIMITS
  if limits then
    lim = setmetatable(limits, { __index = M.LIMITS })
  end
  old, new = old or "", new or ""
  if old == new then return {}, nil end
  -- skip the common head and tail, at line boundaries
  local p = common_prefix(old, new)
  while p > 0 and old:byte(p) ~= 10 do p = p - 1 end
  -- the common tail starts at a line start in both texts
  local q = common_suffix(old, new, p)
  while q > 0 and not (at_line_start(old, #old - q + 1)
                       and at_line_start(new, #new - q + 1)) do
    q = q - 1
  end
  local ma, mb = old:sub(p + 1, #old - q), new:sub(p + 1, #new - q)
  local head_lines = count_lines(old, 1, p)
  local ctx = lim.context
  if #ma + #mb > lim.bytes then
    return {}, string.format("files differ: %d -> %d bytes, from line %d "
      .. "(too large to show)", #old, #new, head_lines + 1)
  end
  local a, b = split(ma), split(mb)
  if #a + #b > lim.lines then
    return {}, string.format("files differ: %d -> %d bytes, %d -> %d lines "
      .. "from line %d (too many to show)", #old, #new, #a, #b,
      head_lines + 1)
  end
  local ops = myers(a, b, lim)
  if not ops then
    return {}, string.format("files differ: %d -> %d bytes, %d -> %d lines "
      .. "from line %d (too many changes to show)", #old, #new, #a, #b,
      head_lines + 1)
  end
  -- context from the skipped head and tail
  local before = {}
  local hs = old:sub(math.max(1, p - 4096 * ctx), p)
  for l in hs:gmatch("([^\n]*)\n") do before[#before + 1] = l end
  while #before > ctx do table.remove(before, 1) end
  local all = {}
  for _, l in ipairs(before) do all[#all + 1] = { " ", l } end
  for _, o in ipairs(ops) do all[#all + 1] = o end
  local ts = old:sub(#old - q + 1, #old - q + 4096 * ctx)
  local n = 0
  if ts ~= "" then
    for l in (ts:sub(-1) == "\n" and ts or ts .. "\n"):gmatch("([^\n]*)\n") do
      if n == ctx then break end
      all[#all + 1] = { " ", l }; n = n + 1
    end
  end
  local base = head_lines - #before + 1
  return hunks(all, base, base, lim), nil
end

---Where two texts first differ (uphook.test's t.eq names it): the
---byte, and its line and column, each from 1; nil when they are equal.
---Linear, like the head this module's diffs skip.
---@param a string
---@param b string
---@return integer|nil byte, integer|nil line, integer|nil column
function M.first_difference(a, b)
  if a == b then return nil end
  local p = common_prefix(a, b)
  local ls = p
  while ls > 0 and a:byte(ls) ~= 10 do ls = ls - 1 end
  return p + 1, count_lines(a, 1, ls) + 1, p - ls + 1
end

---A unified diff with a `--- a/name` / `+++ b/name` header.
---@param old string|nil
---@param new string|nil
---@param name string
---@param limits? table
---@return string
function M.unified(old, new, name, limits)
  local body, summary = M.lines(old, new, limits)
  local out = { "--- a/" .. name, "+++ b/" .. name }
  if summary then out[#out + 1] = summary end
  for _, l in ipairs(body) do out[#out + 1] = l end
  return table.concat(out, "\n") .. "\n"
end

return M

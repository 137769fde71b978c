--- uphook.core.yamlpos: where a `$NAME` placeholder stands in YAML text
--- (stdlib/manifest.lua's rules, docs/reference.md "manifest"): inside a
--- block scalar, or alone on its line where YAML structure goes and no
--- value can. Shared by manifest.load in the hook's child and by `uphook
--- lint` (lua/cmd/lint.lua), which finds such placeholders in the files a
--- hook of API 0.1 loads. Pure Lua that requires nothing.
local M = {}

---The line numbers that are the content of a block scalar (`key: |`).
---@param text string
---@return table<integer, true>
function M.block_lines(text)
  local inside, n, parent, indent = {}, 0, nil, nil
  for line in (text .. "\n"):gmatch("(.-)\n") do
    n = n + 1
    local lead = #line:match("^ *")
    if parent then
      if line:match("^%s*$") then
        inside[n] = true
      elseif (indent or parent + 1) <= lead and lead > parent then
        indent = indent or lead
        inside[n] = true
      else
        parent, indent = nil, nil
      end
    end
    if not inside[n] then
      local code = line:gsub("%s+#.*$", "")
      if code:match("[:%-]%s+[|>][%-%+%d]*%s*$")
          or code:match("^%s*[|>][%-%+%d]*%s*$") then
        parent, indent = lead, nil
      end
    end
  end
  return inside
end

-- The column where the content of a line starts, past its indentation
-- and any `- ` of sequence items (`  - name: a` -> 4).
local function content_column(code)
  local lead = code:match("^[ %-]*")
  while lead:match("%-$") do lead = lead:sub(1, -2) end
  return #lead
end

---Does a placeholder alone on its line (from `ls`, indented `ind`) stand
---where YAML structure goes, not a value: at a document's start, or beside
---the keys or items above it? A value stands there only under a `key:` or
---`-` with nothing after it, indented deeper, or deeper than the content
---of the line above (a plain or flow scalar that goes on).
---@param text string the YAML text
---@param ls integer where the placeholder's line starts in `text`
---@param ind integer the placeholder's column (its indentation)
---@return boolean
function M.structure_position(text, ls, ind)
  local e = ls - 1
  while e > 0 do
    local s = e
    while s > 1 and text:sub(s - 1, s - 1) ~= "\n" do s = s - 1 end
    local prev = text:sub(s, e - 1)
    e = s - 1
    local code = prev:gsub("^%s*#.*$", ""):gsub("%s+#.*$", "")
    if code:match("^%-%-%-") or code:match("^%.%.%.") then return true end
    if not code:match("^%s*$") then
      if code:match(":%s*$") or code:match("^[%s%-]*%-%s*$") then
        return ind <= #code:match("^ *")
      end
      return ind <= content_column(code)
    end
  end
  return true
end

---The placeholders of `text` alone on their line where YAML structure goes
---(outside block scalars): `$NAME` or `${NAME}`, with only spaces before and
---spaces or a comment after.
---@param text string
---@return {line: integer, var: string}[]
function M.structure_placeholders(text)
  local out, blocks, n, ls = {}, M.block_lines(text), 0, 1
  for line in (text .. "\n"):gmatch("(.-)\n") do
    n = n + 1
    local code = line:gsub("%s+#.*$", "")
    local ind, var = code:match("^( *)%$([%a_][%w_]*)%s*$")
    if not var then ind, var = code:match("^( *)%${([%a_][%w_]*)}%s*$") end
    if var and not blocks[n] and M.structure_position(text, ls, #ind) then
      out[#out + 1] = { line = n, var = var }
    end
    ls = ls + #line + 1
  end
  return out
end

return M

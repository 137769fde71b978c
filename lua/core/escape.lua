--- uphook.core.escape: hook text made safe for a terminal (docs/security.md,
--- "What the user sees").
---
--- Everything a hook, a repository or a cluster controls reaches human
--- output through here: a hook's log lines, its error messages and -v
--- traceback, the names and values in a plan, the lines of a file diff,
--- doctor's and list's rows, a hook's --help, `uphook test`'s case
--- names and failures (tests/hostile/terminal_test.py walks every
--- command). Control characters cannot move the cursor, clear the
--- screen, change colours or forge a line: a newline is `\n`, a carriage
--- return `\r`, ESC `\x1b`, any other C0 or DEL byte `\xNN`, a C1 control
--- (U+0080..U+009F) `\u{9b}`, and a byte that is not valid UTF-8 `\xNN`.
--- Tabs stay (they move nothing but the column). JSON output carries
--- the raw strings: JSON's own escaping covers them.
local M = {}

local NAMED = { ["\n"] = "\\n", ["\r"] = "\\r" }

local function c0(ch)
  return NAMED[ch] or string.format("\\x%02x", ch:byte())
end

--- A run of bytes >= 0x80: one valid UTF-8 character stays, unless it is
--- a C1 control; anything else is escaped byte by byte.
local function high(seq)
  local n = utf8.len(seq)
  if n == 1 then
    local cp = utf8.codepoint(seq)
    if cp >= 0x80 and cp <= 0x9f then return string.format("\\u{%x}", cp) end
    return seq
  end
  return (seq:gsub(".", function(b) return string.format("\\x%02x", b:byte()) end))
end

---Escape a string for a terminal (see above). Non-strings are converted
---with tostring first.
---@param s any
---@return string
function M.text(s)
  s = tostring(s)
  if not s:find("[%z\1-\8\10-\31\127\128-\255]") then return s end
  s = s:gsub("[%z\1-\8\10-\31\127]", c0)
  if s:find("[\128-\255]") then
    s = s:gsub("[\128-\255][\128-\191]*", high)
  end
  return s
end

---Escape text of several lines (a traceback, a help text, a report):
---each line as M.text does, the newlines between them kept.
---@param s any
---@return string
function M.lines(s)
  return (tostring(s):gsub("[^\n]+", M.text))
end

return M

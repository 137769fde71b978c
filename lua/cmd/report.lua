--- uphook.cmd.report: what the user sees while an upgrade runs.
---
--- Human text (colour and a live status line only on a TTY; plain lines
--- with timestamps otherwise) or JSON lines, one event per line.
local escape = require "uphook.core.escape"
local timefmt = require "uphook.core.timefmt"

local M = {}
M.__index = M

local COLORS = { step = "\27[1;34m", warn = "\27[33m", error = "\27[1;31m",
                 ok = "\27[32m", reset = "\27[0m" }

--- Escape codes (colour, the status line) go only to a stream that is a
--- terminal, and to none under TERM=dumb; NO_COLOR drops the colour.
---@param o {format:string, tty:boolean, err_tty:boolean, term_dumb:boolean,
---  no_color:boolean, verbosity:integer, write:fun(s:string),
---  ewrite:fun(s:string), json:table, clock:fun():number}
---@return table report
function M.new(o)
  local codes = not o.term_dumb
  local r = setmetatable({ format = o.format or "human", tty = o.tty,
    status_line = o.err_tty and codes or false,
    color = { out = o.tty and codes and not o.no_color or false,
              err = o.err_tty and codes and not o.no_color or false },
    verbosity = o.verbosity or 0, write = o.write,
    ewrite = o.ewrite or o.write, json = o.json, clock = o.clock,
    lines = {}, step_no = 0, capture = o.capture, plan = o.plan,
    event_log = o.event_log }, M)
  -- transfers draw their bar on stderr: only when stderr is a terminal
  if r.format == "json" then r.transfer_progress = "json"
  elseif r.status_line and r.verbosity >= 0 and not r.capture then
    r.transfer_progress = "tty"
  end
  return r
end

---`s` in the colour of `kind` when colour is on for its stream.
---@param kind string a key of COLORS ("error", "warn", ...)
---@param s string
---@param stream "out"|"err"
---@return string
function M:paint(kind, s, stream)
  if not self.color[stream] then return s end
  return COLORS[kind] .. s .. COLORS.reset
end

local function stamp(self)
  if self.tty or not self.clock then return "" end
  return timefmt.format(self.clock()) .. " "
end

---A JSON event under --output json; nil otherwise (the
---caller prints the human form).
---@param t table the event
---@return true|nil printed
function M:event(t)
  if t.event == "result" then self.result_sent = true end
  if self.format == "json" then
    -- every event says when (docs/output.md): UTC, RFC 3339
    if self.clock and t.timestamp == nil then
      t.timestamp = timefmt.format(self.clock())
    end
    local line = self.json.encode(t)
    self.write(line .. "\n")
    if self.event_log then self.event_log(line) end
    return true
  end
end

---A line of hook log: level is "info", "warn" or "step".
---@param level "info"|"warn"|"step"
---@param text string
function M:log(level, text)
  self.lines[#self.lines + 1] = text
  if self.capture then return end
  if level == "step" then self.step_no = self.step_no + 1 end
  if self:event({ event = "log", level = level, message = text,
                  step = level == "step" and self.step_no or nil }) then
    return
  end
  -- a plan shows the steps and information lines in its body, under
  -- their step: they are not printed as they come (with -v on stderr)
  if self.plan and level ~= "warn" then
    if self.verbosity > 0 then
      self.ewrite(stamp(self) .. (level == "step" and string.format(
        "[%d] ", self.step_no) or "    ") .. escape.text(text) .. "\n")
    end
    return
  end
  text = escape.text(text)
  self:clear_status()
  if level == "step" then
    if self.verbosity < 0 then return end       -- -q: quiet
    self.write(stamp(self) .. self:paint("step", string.format("[%d] %s",
      self.step_no, text), "out") .. "\n")
  elseif level == "warn" then
    self.ewrite(stamp(self) .. self:paint("warn", "warning: ", "err") .. text .. "\n")
  elseif self.verbosity >= 0 then
    self.write(stamp(self) .. "    " .. text .. "\n")
  end
end

local SPIN = { "|", "/", "-", "\\" }

---A live status line during waits ("2/3 replicas updated"), with a
---spinner on a TTY.
---@param text string
function M:progress(text)
  if self.capture then return end
  if self:event({ event = "progress", message = text }) then return end
  if self.status_line and self.verbosity >= 0 then
    self.spin = (self.spin or 0) % #SPIN + 1
    self.status = text
    self.ewrite("\r\27[K  " .. SPIN[self.spin] .. " " .. escape.text(text))
  elseif self.verbosity > 0 then
    self.write(stamp(self) .. "  ... " .. escape.text(text) .. "\n")
  end
end

--- "12 s", "2 min 5 s"
local function secs(s)
  s = math.floor(s + 0.5)
  if s < 120 then return s .. " s" end
  if s % 60 == 0 then return string.format("%d min", s // 60) end
  return string.format("%d min %d s", s // 60, s % 60)
end

---A wait in progress (docs/output.md "Waits"): what is awaited, elapsed
---and limit. On a TTY the status line says it at every look; off one, a
---line at each heartbeat (`beat`, every 10 s of the wait); under
-----output json a `wait` event at each heartbeat.
---@param w {what: string, elapsed: number, limit: number, status?: string}
---@param beat boolean
function M:waiting(w, beat)
  if self.capture then return end
  if self.format == "json" then
    if beat then
      self:event({ event = "wait", what = w.what,
        elapsed = math.floor(w.elapsed * 10 + 0.5) / 10, limit = w.limit,
        status = w.status })
    end
    return
  end
  if self.verbosity < 0 then return end
  local text = string.format("waiting for %s: %s of %s%s", w.what,
    secs(w.elapsed), secs(w.limit), w.status and (" (" .. w.status .. ")")
    or "")
  if self.status_line then
    self.spin = (self.spin or 0) % #SPIN + 1
    self.status = text
    self.ewrite("\r\27[K  " .. SPIN[self.spin] .. " " .. escape.text(text))
  elseif beat then
    self.write(stamp(self) .. "  ... " .. escape.text(text) .. "\n")
  end
end

---Clear the status line (before any other line is printed).
function M:clear_status()
  if self.status_line and self.status then
    self.ewrite("\r\27[K")
    self.status = nil
  end
end

---An information line (hidden by -q).
---@param text string
function M:info(text)
  if self.capture then return end
  self:clear_status()
  if not self:event({ event = "info", message = text })
     and self.verbosity >= 0 then
    self.write(stamp(self) .. escape.text(text) .. "\n")
  end
end

---The outcome line of a command ("Upgraded ...", "Rolled back: ..."):
---an information line that -q prints too (docs/output.md).
---@param text string
function M:outcome(text)
  if self.capture then return end
  self:clear_status()
  if not self:event({ event = "info", message = text }) then
    self.write(stamp(self) .. escape.text(text) .. "\n")
  end
end

---An error line, on stderr.
---@param text string
function M:error(text)
  self.lines[#self.lines + 1] = text
  self.last_error = text
  if self.capture then return end
  self:clear_status()
  if not self:event({ event = "error", message = text }) then
    self.ewrite(stamp(self) .. self:paint("error", "uphook: ", "err")
      .. escape.text(text) .. "\n")
  end
end

return M

--- uphook.cmd.confirm: the one confirmation uphook asks for, and its one
--- flag (docs/security.md "Consent"; docs/guide.md "Data loss"): a
--- delete the hook made with allow_data_loss, and new permissions.
---
--- On a terminal (stdin) uphook shows what it is about to do and asks;
--- --yes answers yes without asking; with neither, the answer is no.
--- Data loss is asked on its own, each change, on a terminal even with
--- --yes: --yes never covers it; without a terminal only
--- --allow-data-loss allows it (docs/security.md, "What permissions
--- guarantee").
--- Only live upgrades ask: plan, --offline and `uphook test` get no
--- confirmer (what they would confirm is only shown).
local escape = require "uphook.core.escape"

local M = {}

---A confirmer for this command, or nil when the command never asks.
---@param o table options from host/cli.c (command, offline, yes, in_tty, err_tty, tty)
---@param report table lua/cmd/report.lua
---@param input? file* where answers are read (default io.stdin)
---@param interrupted? fun(): boolean did a signal come (c.broker's)
---@return nil|fun(lines: string[], what: string): boolean, string|nil
function M.new(o, report, input, interrupted)
  -- upgrade, and recover --accept-current (lua/cmd/cli.lua)
  if (o.command ~= "upgrade" and o.command ~= "recover") or o.offline then
    return nil
  end
  input = input or io.stdin
  ---@param lines string[] what is asked about (hook text is escaped)
  ---@param what string a name for it ("the data-loss delete of ...")
  ---@param kind? "data_loss" a data-loss change: --yes does not answer it
  ---@return boolean yes, string|nil why not
  return function(lines, what, kind)
    what = what or tostring(lines[1] or "this")
    local loss = kind == "data_loss"
    -- stdin a terminal is enough: the question goes to stderr (or stdout)
    -- even when both are piped, as `2>&1 | tee log` shows it
    local tty = o.in_tty
    if loss and not tty and o.allow_data_loss then
      report:info("yes (--allow-data-loss) to " .. what)
      report:event({ event = "confirm", what = what, answer = "yes",
        by = "--allow-data-loss" })
      return true
    end
    if o.yes and not loss then
      report:info("yes (--yes) to " .. what)
      report:event({ event = "confirm", what = what, answer = "yes",
        by = "--yes" })
      return true
    end
    if not tty then
      report:event({ event = "confirm", what = what, answer = "no",
        by = "no terminal" })
      return false, loss and "no terminal to ask on: --allow-data-loss "
        .. "allows it (--yes never covers data loss)"
        or "no terminal to ask on: --yes allows it"
    end
    report:clear_status()
    local w = (o.err_tty or not o.tty) and io.stderr or io.stdout
    for _, l in ipairs(lines) do w:write(escape.text(l), "\n") end
    w:write("Go ahead? [y/N] ")
    w:flush()
    -- a ^C before the read would leave it blocked: look first (a ^C
    -- during it ends it, EINTR: host/main.c installs no SA_RESTART)
    local answer = not (interrupted and interrupted()) and input:read("l")
      or nil
    if answer == nil then w:write("\n") end
    local yes = answer ~= nil and (answer:match("^%s*[yY]%s*$")
      or answer:match("^%s*[yY][eE][sS]%s*$")) ~= nil
    report:event({ event = "confirm", what = what,
      answer = yes and "yes" or "no", by = "terminal" })
    if yes then return true end
    if answer == nil and interrupted and interrupted() then
      return false, "interrupted"
    end
    return false, answer == nil and "no answer (end of input)"
      or "the answer was no"
  end
end

return M

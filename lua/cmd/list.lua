--- uphook.cmd.list: every addon found, with its repository, whether it is
--- enabled, the installed version, the hook's target and whether an
--- upgrade is possible (`uphook list [--output json]`).
local inventory = require "uphook.cmd.inventory"

local M = {}

-- A row's UPGRADE column: the target, an upgrade in progress or
-- interrupted, or why there is none.
local function upgrade(r, esc)
  if r.in_progress then return r.in_progress end
  if r.pending_journal then return "interrupted: run recover" end
  return r.upgradable and ("yes -> " .. esc(r.target))
    or r.unread and "?" or r.enabled == false and "no (not enabled)" or "no"
end

---@param o table options of host/cli.c
---@param c table the C families
---@param report table lua/cmd/report.lua
---@return integer exit code
function M.main(o, c, report)
  local rows, _, problem = inventory.rows(o, c, report)
  -- an unreachable cluster, or running out of the time limit (a partial
  -- table), is exit 4 (docs/uphook.1); the rows left unread say `?`
  local code = problem and 4 or 0
  if o.output == "json" then
    for _, r in ipairs(rows) do report:event(inventory.event(r)) end
    if problem then report:error(problem) end
    report:event({ event = "result", code = code, addons = #rows,
      error = problem })
    return code
  end
  local esc = require("uphook.core.escape").text   -- hook text, as in plans
  local fmt = "%-14s %-22s %-8s %-10s %-10s %s\n"
  io.stdout:write(string.format(fmt, "REPO", "ADDON", "ENABLED",
    "INSTALLED", "HOOK", "UPGRADE"))
  local star, pending, unknown, files = false, {}, false, {}
  for _, r in ipairs(rows) do
    star = star or r.detected
    if r.enabled_file and not r.unread then
      files[#files + 1] = r
    else
      unknown = unknown or r.unread or r.enabled == nil
    end
    if not r.in_progress and r.pending_journal then
      pending[#pending + 1] = r.name
    end
    io.stdout:write(string.format(fmt, esc(r.repo), esc(r.name),
      r.enabled == nil and "?" or (r.enabled and "yes" or "no"),
      r.installed and (esc(r.installed) .. (r.detected and "*" or ""))
        or r.unread and "?" or "-",
      esc(r.target or (r.hook and "error" or "none")), upgrade(r, esc)))
    if r.error then io.stderr:write("  ", esc(r.error), "\n") end
  end
  if unknown then
    io.stdout:write("(? = not known: the cluster could not be read for it, "
      .. "or its enabled check is not one uphook knows)\n")
  end
  -- MicroK8s tests a file check_status on the node (lua/engine/enabled.lua);
  -- --offline mocks the cluster, not this node's files
  for _, r in ipairs(files) do
    io.stdout:write(string.format("(? = %s: its check_status %s is a file "
      .. "on the node, which --offline cannot test)\n", esc(r.name),
      esc(r.enabled_file)))
  end
  if star then
    io.stdout:write("(* installed version found by the hook's detect: no "
      .. "uphook state yet)\n")
  end
  for _, name in ipairs(pending) do
    report:info(string.format("%s: an upgrade was interrupted; run: %s",
      name, require("uphook.cmd.selfcmd").line(o, c, "recover", name)))
  end
  if problem then report:error(problem) end
  return code
end

return M

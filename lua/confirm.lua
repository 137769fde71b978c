--- uphook.confirm: the one confirmation uphook asks for, and its one
--- flag (docs/security.md "Consent"; docs/guide.md "Data loss"): a
--- delete the hook made with allow_data_loss, and new permissions.
---
--- On a terminal (stdin) uphook shows what it is about to do and asks;
--- --yes answers yes without asking; with neither, the answer is no.
--- Only live upgrades ask: plan, --offline and `uphook test` get no
--- confirmer (what they would confirm is only shown).
local escape = require "uphook.escape"

local M = {}

---A confirmer for this command, or nil when the command never asks.
---@param o table options from host/cli.c (command, offline, yes, in_tty, err_tty, tty)
---@param report table lua/report.lua
---@param input? file* where answers are read (default io.stdin)
---@return nil|fun(lines: string[], what: string): boolean, string|nil
function M.new(o, report, input)
  if o.command ~= "upgrade" or o.offline then return nil end
  input = input or io.stdin
  ---@param lines string[] what is asked about (hook text is escaped)
  ---@param what string a name for it ("the data-loss delete of ...")
  return function(lines, what)
    what = what or tostring(lines[1] or "this")
    if o.yes then
      report:info("yes (--yes) to " .. what)
      report:event({ event = "confirm", what = what, answer = "yes",
        by = "--yes" })
      return true
    end
    if not o.in_tty or not (o.err_tty or o.tty) then
      report:event({ event = "confirm", what = what, answer = "no",
        by = "no terminal" })
      return false, "no terminal to ask on: --yes allows it"
    end
    report:clear_status()
    local w = o.err_tty and io.stderr or io.stdout
    for _, l in ipairs(lines) do w:write(escape.text(l), "\n") end
    w:write("Go ahead? [y/N] ")
    w:flush()
    local answer = input:read("l")
    if answer == nil then w:write("\n") end
    local yes = answer ~= nil and (answer:match("^%s*[yY]%s*$")
      or answer:match("^%s*[yY][eE][sS]%s*$")) ~= nil
    report:event({ event = "confirm", what = what,
      answer = yes and "yes" or "no", by = "terminal" })
    if yes then return true end
    return false, answer == nil and "no answer (end of input)"
      or "the answer was no"
  end
end

local function dig(t, ...)
  for _, k in ipairs { ... } do
    if type(t) ~= "table" then return nil end
    t = t[k]
  end
  return type(t) ~= "table" and t or nil
end

---What the user sees before a data-loss delete: the object, what it
---holds, why the hook deletes it.
---@param addon string
---@param obj table the object as it is (the delete's prior)
---@param reason string|nil the delete's reason (kube.prune's)
---@return string[] lines, string what
function M.data_loss(addon, obj, reason)
  local label = obj.kind .. " " .. (obj.metadata.namespace
    and (obj.metadata.namespace .. "/") or "") .. tostring(obj.metadata.name)
  local facts = {}
  local function fact(name, v)
    if v ~= nil then facts[#facts + 1] = name .. " " .. tostring(v) end
  end
  if obj.kind == "PersistentVolumeClaim" then
    fact("size", dig(obj, "status", "capacity", "storage")
      or dig(obj, "spec", "resources", "requests", "storage"))
    fact("storage class", dig(obj, "spec", "storageClassName"))
    fact("volume", dig(obj, "spec", "volumeName"))
  elseif obj.kind == "PersistentVolume" then
    fact("size", dig(obj, "spec", "capacity", "storage"))
    fact("reclaim policy", dig(obj, "spec", "persistentVolumeReclaimPolicy"))
    local ns, n = dig(obj, "spec", "claimRef", "namespace"),
      dig(obj, "spec", "claimRef", "name")
    if n then fact("bound to", (ns and (ns .. "/") or "") .. n) end
  elseif obj.kind == "CustomResourceDefinition" then
    fact("every object of", dig(obj, "spec", "names", "plural") and
      (dig(obj, "spec", "names", "plural") .. "." .. tostring(
        dig(obj, "spec", "group"))) or nil)
  elseif obj.kind == "Namespace" then
    facts[#facts + 1] = "everything in it"
  end
  local lines = { string.format("DATA LOSS: %s's upgrade deletes %s%s, and "
    .. "what it holds with it (the hook allows it: allow_data_loss = true)",
    addon, label, reason and (" (" .. reason .. ")") or "") }
  if #facts > 0 then lines[2] = "  " .. table.concat(facts, ", ") end
  return lines, "the data-loss delete of " .. label
end

return M

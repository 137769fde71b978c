--- uphook.engine.consent: the user's yes to what a hook may do (docs/security.md
--- "Consent"). The state ConfigMap records the permissions of the last
--- successful upgrade (lua/engine/state.lua); a hook that asks for one it does
--- not record, or the first upgrade of an addon, needs the user's yes
--- before the first change. Live runs ask through the one confirmation
--- the command line gives the engine (o.confirm: a TTY's question, or
--- --yes); `--offline`, `plan` and `uphook test` never ask.
local M = {}

---A repository's identity, which the state records beside the grant
---(docs/state.md "Which repository"): its name and its folder, the one
---that holds `addons/<addon>` (or `<addon>` directly: `--addons hooks`).
---A same-named addon of another repository, or of the same name in
---another folder, is not covered by this grant.
---@param repo string the repository's name
---@param addon_dir string the addon's folder
---@param addon string the addon's name
---@return string
function M.identity(repo, addon_dir, addon)
  local dir = addon_dir:gsub("/+$", "")
  local suffix = "/addons/" .. addon
  if dir:sub(-#suffix) == suffix then dir = dir:sub(1, -#suffix - 1)
  else dir = dir:match("^(.*)/[^/]*$") or dir end
  return repo .. " " .. dir
end

-- Does the state's grant cover this run's repository? A run that knows
-- its repository (the command line's) and a state that records another,
-- or none (an older uphook's), is not covered: its permissions are asked
-- again, once. `uphook test` runs know none and keep their seeded grants.
local function covers(saved, repository)
  return not repository or (saved and saved.repository) == repository
end
M.covers = covers

---The permissions a hook declares that the saved state does not record
---for this repository.
---@param hook {permissions: string[]}
---@param saved {permissions?: string[], repository?: string}|nil what state.read returned
---@param repository? string this run's repository (M.identity)
---@return table<string, true> new a set (empty when nothing is new)
---@return boolean first true when no upgrade recorded any permissions
---  for this repository
function M.new_permissions(hook, saved, repository)
  local granted = {}
  local first = not (saved and saved.permissions and covers(saved, repository))
  for _, p in ipairs(not first and saved.permissions or {}) do
    granted[p] = true
  end
  local new = {}
  for _, p in ipairs(hook.permissions or {}) do
    if not granted[p] then new[p] = true end
  end
  return new, first
end

---What reads and requests may use until the user's yes: the declared
---permissions the state records as granted (none on a first upgrade, or
---from a state without a record). permissions.now reads it.
---@param hook {permissions: string[]}
---@param saved {permissions?: string[], repository?: string}|nil
---@param repository? string this run's repository (M.identity)
---@return table<string, true>
function M.granted(hook, saved, repository)
  local recorded, out = {}, {}
  local perms = covers(saved, repository) and saved and saved.permissions
  for _, p in ipairs(perms or {}) do recorded[p] = true end
  for _, p in ipairs(hook.permissions or {}) do
    if recorded[p] then out[p] = true end
  end
  return out
end

---The question put to the user, or nil when nothing needs a yes.
---@param run table the run record: addon, from, to, hook, new_permissions
---@param first boolean no permissions recorded yet
---@return string[]|nil lines the question's lines (raw: the asker escapes)
---@return string|nil what what needs the yes, for the refusal
function M.question(run, first)
  local new = {}
  for _, p in ipairs(run.hook.permissions or {}) do
    if run.new_permissions[p] then new[#new + 1] = p end
  end
  if #new == 0 and not first then return nil end
  local list = #new > 0 and table.concat(new, ", ") or "none"
  local lines, what
  if first and run.other_repository ~= nil then
    lines, what = { string.format("The permissions recorded for %s were "
      .. "granted %s, not to this one (%s): this upgrade (%s -> %s) asks "
      .. "for them again: %s.", run.addon, run.other_repository
        and ("to the repository " .. run.other_repository)
        or "by an uphook that did not record the repository",
      tostring(run.repository), run.from, run.to, list) },
      "the permissions of " .. run.addon .. " from this repository ("
        .. list .. ")"
  elseif first then
    lines, what = { string.format("This is the first upgrade of %s by "
      .. "uphook (%s -> %s). Its hook asks for these permissions: %s.",
      run.addon, run.from, run.to, list) },
      "the first upgrade of " .. run.addon .. " (permissions: " .. list .. ")"
  else
    lines, what = { string.format("The hook of %s %s asks for permissions "
      .. "the last upgrade did not have: %s.", run.addon, run.to, list) },
      "new permissions " .. list
  end
  if run.other_nodes then
    -- docs/guide.md §6 "Several nodes": what another node had
    lines[#lines + 1] = string.format("It changes node settings on %d other "
      .. "node%s: a prior value uphook cannot read there is assumed to be "
      .. "this node's (the plan marks it \"assumed\"), and a rollback "
      .. "restores that assumed value.", run.other_nodes,
      run.other_nodes == 1 and "" or "s")
  end
  if run.new_permissions["kube:privileged"] then
    lines[#lines + 1] = M.PRIVILEGED_WHY
  end
  return lines, what
end

--- What kube:privileged gives, in the question that grants it
--- (lua/engine/podsecurity.lua has the rules; the plan's PRIVILEGED
--- section names each object and its reason).
M.PRIVILEGED_WHY = "PRIVILEGED: kube:privileged lets the hook become root "
  .. "on the nodes or cluster-admin: pods outside the baseline Pod "
  .. "Security Standard, hostPath or local PersistentVolumes, RBAC that "
  .. "escalates, binds, impersonates or reads secrets cluster-wide, "
  .. "webhooks that see every object (the plan names each and why)."

---Ask, when the run needs a yes; stops the run (exit 4, nothing changed)
---when the answer is no or no one can answer.
---@param run table
---@param first boolean
---@param confirm (fun(lines: string[], what: string): boolean, string|nil)|nil
---  lua/cmd/confirm.lua's: a TTY's question, or --yes
---@param stop fun(code: integer, msg: string)
---@param code integer the exit code of a refusal (engine.EARLY)
function M.ask(run, first, confirm, stop, code)
  if not confirm then return end
  local lines, what = M.question(run, first)
  if not lines then return end
  local ok, why = confirm(lines, what)
  if ok then return end
  run.refused = true
  -- "the first upgrade ... needs", "new permissions ... need"
  local one = what:find("^the first upgrade") ~= nil
  stop(code, string.format("not upgraded: %s need%s your yes (%s); nothing "
    .. "was changed", what, one and "s" or "", why or "refused"))
end

---The sorted list the state records.
---@param hook {permissions: string[]}
---@return string[]
function M.record(hook)
  local out, seen = {}, {}
  for _, p in ipairs(hook.permissions or {}) do
    if not seen[p] then seen[p], out[#out + 1] = true, p end
  end
  table.sort(out)
  return out
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

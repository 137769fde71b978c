--- uphook.engine.apiversion: the versions of the hook API (docs/reference.md
--- "API versions", docs/guide.md "Migrating hooks"), the one place of their
--- policy: which API a hook was written for (its `uphook` field), whether
--- this uphook can run it, and which conveniences an older API keeps with a
--- warning. A permission, confinement or data-loss rule is never kept for
--- an older API (docs/security.md): only conveniences are listed here.
local semver = require "uphook.core.semver"
local yamlpos = require "uphook.core.yamlpos"

local M = {}

--- The API a hook that declares no `uphook` was written for.
M.FIRST = "0.1"

--- The hook API versions, oldest first (CHANGELOG.md says what each changed).
M.APIS = { "0.1", "0.2" }

M.MAX_RANGE = 256

---@class uphook.Deprecation
---@field since string the API version whose hooks lose it
---@field what string what the hook does, in the warning
---@field new string the form to write instead

--- The conveniences a hook of an older API keeps, with a warning; a hook
--- written for `since` or later fails instead (tests/compat).
---@type table<string, uphook.Deprecation>
M.DEPRECATED = {
  manifest_structure = { since = "0.2",
    what = "a manifest.load placeholder in YAML structure position",
    new = "use manifest.raw(...) for YAML structure ({ NAME = "
      .. "manifest.raw(text) })" },
  positional = { since = "0.2",
    what = "an undeclared positional argument",
    new = "declare it in the hook table: positional = { \"name\" } "
      .. "(arguments beyond those declared are exit 2)" },
}

local function version_of(api) return api .. ".0" end

---Check a hook's `uphook` field against this uphook and return the API
---version the hook was written for ("0.1" when it has no such field): the
---oldest API the range admits. `bad(msg)` raises; it is called for a range
---that is not one, and for a hook that needs a newer uphook.
---@param range string|nil the hook's `uphook` field
---@param uphook string|nil this uphook's version (c.cli.version)
---@param bad fun(msg: string) raises
---@return string api "0.1", "0.2", ...
function M.check(range, uphook, bad)
  if range == nil then return M.FIRST end
  if type(range) ~= "string" then
    bad("field 'uphook' must be a version range such as \">=0.2\", got a "
      .. type(range))
  end
  if #range > M.MAX_RANGE then
    bad(string.format("field 'uphook' is longer than %d bytes", M.MAX_RANGE))
  end
  local ok, err = semver.valid_range(range)
  if range:match("^%s*$") then ok, err = false, "it is empty" end
  if not ok then
    bad(string.format("field 'uphook' is not a version range (such as "
      .. "\">=0.2\"): %s", tostring(err)))
  end
  uphook = uphook or version_of(M.APIS[#M.APIS])
  for _, api in ipairs(M.APIS) do
    if semver.compare(version_of(api), uphook) <= 0
       and semver.satisfies(version_of(api), range) then
      return api
    end
  end
  if semver.satisfies(uphook, range) then return M.APIS[#M.APIS] end
  bad(string.format("the hook needs uphook %s, and this is uphook %s: "
    .. "refresh the snap (sudo snap refresh microk8s) for a newer uphook",
    range, uphook))
  return M.APIS[#M.APIS]
end

---Does a hook written for API `api` keep the deprecated convenience `key`
---(M.DEPRECATED)? True for an API older than the one that removed it.
---@param api string|nil the hook's API (nil: M.FIRST)
---@param key string a key of M.DEPRECATED
---@return boolean
function M.keeps(api, key)
  local d = assert(M.DEPRECATED[key], key)
  return semver.compare(version_of(api or M.FIRST), version_of(d.since)) < 0
end

---The warning for one deprecated use: where (the hook's file and line), what,
---and the new form.
---@param key string a key of M.DEPRECATED
---@param where string "dns/upgrade.lua:12"
---@param detail string|nil what exactly (the placeholder, the argument)
---@return string
function M.warning(key, where, detail)
  local d = assert(M.DEPRECATED[key], key)
  local var = detail and detail:match("^%$([%a_][%w_]*)")
  return string.format("%s: %s%s is deprecated (hook API %s; it fails for "
    .. "hooks that declare uphook = \">=%s\"): %s", where, d.what,
    detail and (" (" .. detail .. ")") or "", M.FIRST, d.since,
    (d.new:gsub("NAME", var or "NAME")))
end

---A deprecated use during a run: true (and one warning per use, in the
---run's log and so in plan, upgrade and `uphook test`) when the hook's API
---keeps it; false when the hook must fail instead.
---@param run uphook.Run
---@param key string a key of M.DEPRECATED
---@param where string the hook's file and line
---@param detail string|nil
---@return boolean kept
function M.use(run, key, where, detail)
  local api = run.hook and run.hook.api
  if not M.keeps(api, key) then return false end
  local text = M.warning(key, where, detail)
  run.deprecated = run.deprecated or {}
  if not run.deprecated[text] then
    run.deprecated[text] = true
    run.report:log("warn", text)
  end
  return true
end

---A position in a hook's file as the hook's child names it (the path the
---hook was loaded from) made the hook's own, as the other warnings name
---it: "dns/upgrade.lua:12".
---@param run uphook.Run
---@param where string
---@return string
function M.hook_where(run, where)
  local dir, addon = run.roots and run.roots.addon, run.addon
  if type(dir) == "string" and where:sub(1, #dir + 1) == dir .. "/" then
    return addon .. "/" .. where:sub(#dir + 2)
  end
  if type(addon) ~= "string" then return where end
  local lit = addon:gsub("%p", "%%%0")
  local rest = where:match("^.*/" .. lit .. "/(.*)$")
    or where:match("^" .. lit .. "/(.*)$")
  return rest and (addon .. "/" .. rest) or where
end

---What `uphook lint` can tell of a hook's deprecated uses from its source
---and the files it loads (lua/cmd/lint.lua): for a hook whose API keeps
---them, each as its warning. A hook that reads `ctx.positional` and
---declares none; each `manifest.load("<file>")` whose file has a
---placeholder alone where YAML structure goes (`read(rel)` gives a file of
---the addon folder, or nil).
---@param info table hookdecl.validate's result
---@param name string the hook, in warnings ("dns/upgrade.lua")
---@param source string the hook file's text
---@param read fun(rel: string): string|nil
---@return string[] warnings
function M.lint(info, name, source, read)
  local out = {}
  if #info.decl.positional == 0 and M.keeps(info.api, "positional") then
    local n = M.positional_line(source)
    if source:find("%.positional%f[%W]") then
      out[#out + 1] = M.warning("positional", name .. ":" .. n,
        "the hook reads ctx.positional and declares none")
    end
  end
  if not M.keeps(info.api, "manifest_structure") then return out end
  local n = 0
  for line in (source .. "\n"):gmatch("(.-)\n") do
    n = n + 1
    local rel = line:gsub("%-%-.*$", ""):match("manifest%.load%(%s*[\"']([^\"']+)[\"']")
    local text = rel and read(rel)
    for _, p in ipairs(text and yamlpos.structure_placeholders(text) or {}) do
      out[#out + 1] = M.warning("manifest_structure", name .. ":" .. n,
        string.format("$%s at %s:%d", p.var, rel, p.line))
    end
  end
  return out
end

---The line of a hook's source where it reads its positional arguments
---(`ctx.positional`), for warnings; else the line of its last `return {`,
---else 1.
---@param source string|nil the hook file's text
---@return integer
function M.positional_line(source)
  local n, ret = 0, nil
  for line in ((source or "") .. "\n"):gmatch("(.-)\n") do
    n = n + 1
    local code = line:gsub("%-%-.*$", "")
    if code:find("%.positional%f[%W]") then return n end
    if code:find("^%s*return%s*{") then ret = n end
  end
  return ret or 1
end

return M

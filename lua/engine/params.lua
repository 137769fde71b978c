--- uphook.engine.params: a hook's parameters as `enable` takes them
--- (docs/reference.md "Parameters"): declarations, the command line
--- after the addon name, validation, merging and the addon's --help.
---
--- The command line after the addon is the hook's: `--name=value`,
--- `--name value`, `-s value`, `-svalue` for the params it declares
--- (`--name`, `--name=true`, `--name=false` and `-s` for a flag),
--- positional arguments up to what it declares in `positional`, and a
--- `--` after which everything is positional. Anything else is a usage
--- error (exit 2), found before anything happens.
---
--- `pattern` and `check` are hook code: they run in the child (the
--- "__params" phase of host/child.c), never in the broker.
local M = {}

local NAME = "^[%w][%w_.%-]*$"
local SPEC_FIELDS = { default = "string", choices = "table", short = "string",
  description = "string", pattern = "string", type = "string" }
local FLAG_VALUES = { ["true"] = true, ["false"] = true }

---@class uphook.ParamsDecl
---@field params table<string, table> name -> spec (type, default, choices, short, description, pattern, has_check)
---@field shorts table<string, string> short letter -> name
---@field positional {name:string, description:string|nil, rest:boolean}[]
---@field unknown string[] "params.x.field" entries that are not spec fields

M.MAX_PARAMS, M.MAX_CHOICES = 256, 256

--- Check the declarations of a hook's description (`data` from the
--- child). `bad(msg)` raises; `reserved` is the set of uphook's long
--- option names, which no param may take.
---@return uphook.ParamsDecl
---@param data table the hook's data fields (params, positional)
---@param bad fun(msg: string) raises
---@param reserved table<string, true>|nil
function M.declare(data, bad, reserved)
  local d = { params = {}, shorts = {}, positional = {}, unknown = {} }
  local checks = type(data.__param_checks) == "table"
                 and data.__param_checks or {}
  local n = 0
  for k, spec in pairs(data.params or {}) do
    -- bounded, so that a declaration costs the broker little
    -- (docs/security.md "Broker work outside the timeout")
    n = n + 1
    if n > M.MAX_PARAMS then bad("more than " .. M.MAX_PARAMS .. " params") end
    if type(k) ~= "string" or type(spec) ~= "table" or #k > 128 then
      bad("params." .. tostring(k):sub(1, 64) .. " must be a table")
    end
    if not k:match(NAME) then
      bad(string.format("params: %q is not a parameter name (letters, "
        .. "digits, '-', '_', '.')", k))
    end
    if reserved and reserved[k] then
      bad(string.format("params.%s: --%s is one of uphook's own options; "
        .. "name the parameter otherwise", k, k))
    end
    local out = { has_check = checks[k] == true }
    for f, v in pairs(spec) do
      local want = SPEC_FIELDS[f]
      if want and type(v) ~= want then
        bad(string.format("params.%s.%s must be a %s, got %s", k, f,
          f == "choices" and "list of strings" or want, type(v)))
      elseif want then out[f] = v
      else d.unknown[#d.unknown + 1] = "params." .. k .. "." .. tostring(f) end
    end
    if out.choices and #out.choices > M.MAX_CHOICES then
      bad(string.format("params.%s.choices: more than %d", k, M.MAX_CHOICES))
    end
    for i, ch in ipairs(out.choices or {}) do
      if type(ch) ~= "string" then
        bad(string.format("params.%s.choices[%d] must be a string", k, i))
      end
    end
    if out.short then
      if not out.short:match("^%w$") then
        bad(string.format("params.%s.short must be one letter or digit, "
          .. "got %q", k, out.short))
      end
      if d.shorts[out.short] then
        bad(string.format("params.%s.short: -%s is also params.%s's", k,
          out.short, d.shorts[out.short]))
      end
      d.shorts[out.short] = k
    end
    if out.pattern and not pcall(string.find, "", out.pattern) then
      bad(string.format("params.%s.pattern is not a Lua pattern: %q", k,
        out.pattern))
    end
    M.declare_type(k, out, bad)
    d.params[k] = out
  end
  M.declare_positional(data.positional, bad, d)
  table.sort(d.unknown)
  return d
end

--- A param's `type`: "string" (the default) or "flag", a boolean switch
--- whose value is "true" or "false" (docs/reference.md `uphook.Param`):
--- no choices or pattern of its own, and "false" when not given unless
--- its default says "true".
---@param k string the param's name, in messages
---@param spec table the declared spec, completed in place
---@param bad fun(msg: string) raises
function M.declare_type(k, spec, bad)
  local ty = spec.type or "string"
  if ty ~= "string" and ty ~= "flag" then
    bad(string.format('params.%s.type must be "string" or "flag", got %q',
      k, ty))
  end
  spec.type = ty
  if ty ~= "flag" then return end
  if spec.choices or spec.pattern then
    bad(string.format("params.%s: a flag takes no %s (its values are true "
      .. "and false)", k, spec.choices and "choices" or "pattern"))
  end
  if spec.default ~= nil and not FLAG_VALUES[spec.default] then
    bad(string.format('params.%s.default: a flag\'s default is "true" or '
      .. '"false", got %q', k, spec.default))
  end
  spec.default = spec.default or "false"
end

--- `positional = { "nameservers", {name = "dnsip", description = ...} }`;
--- a last name ending in "..." takes every remaining argument.
---@param list table the hook's positional declarations
---@param bad fun(msg: string) raises
---@param d uphook.ParamsDecl filled in
function M.declare_positional(list, bad, d)
  if list == nil then return end
  if type(list) ~= "table" then bad("field 'positional' must be a list") end
  local seen = {}
  for i, p in ipairs(list) do
    local name, desc = p, nil
    if type(p) == "table" then name, desc = p.name, p.description end
    if type(name) ~= "string" or not name:gsub("%.%.%.$", ""):match(NAME)
       or (desc ~= nil and type(desc) ~= "string") then
      bad(string.format("positional[%d] must be a name, or {name = ..., "
        .. "description = ...}", i))
    end
    local rest = name:sub(-3) == "..."
    name = rest and name:sub(1, -4) or name
    if rest and i < #list then
      bad(string.format("positional[%d]: only the last one can take the "
        .. "rest (%s...)", i, name))
    end
    if seen[name] then bad("positional: " .. name .. " is declared twice") end
    seen[name] = true
    d.positional[i] = { name = name, description = desc, rest = rest }
  end
end

local function names_of(d)
  local keys, out = {}, {}
  for k in pairs(d.params) do keys[#keys + 1] = k end
  table.sort(keys)
  for i, k in ipairs(keys) do
    local spec = d.params[k]
    out[i] = (spec.short and ("-" .. spec.short .. "/") or "") .. "--" .. k
  end
  return out
end

local function positional_usage(d)
  local out = {}
  for _, p in ipairs(d.positional) do
    out[#out + 1] = "[" .. p.name:upper() .. (p.rest and "..." or "") .. "]"
  end
  return table.concat(out, " ")
end

---Split the hook's command line; `usage(msg)` raises (exit 2).
---`keep(extra)`, when given, is asked about positional arguments beyond
---those declared: true keeps them (an older hook API's convenience,
---lua/engine/apiversion.lua), anything else is the usage error.
---@param argv string[] the arguments after the addon name
---@param d uphook.ParamsDecl
---@return table<string, string> given, string[] positional
---@param addon string for messages
---@param usage fun(msg: string) raises a usage error
---@param keep? fun(extra: string[]): boolean
function M.parse(argv, d, addon, usage, keep)
  local given, positional, i, only = {}, {}, 1, false
  local function unknown(opt)
    local names = names_of(d)
    usage(string.format("unknown parameter %s for %s (it takes %s); see "
      .. "'uphook upgrade %s --help'", opt:match("^[^=]*"), addon,
      #names > 0 and table.concat(names, ", ") or "none", addon))
  end
  local function value_of(opt, inline)
    if inline ~= nil and inline ~= "" then return inline end
    if argv[i + 1] == nil then usage(opt .. " needs a value") end
    i = i + 1
    return argv[i]
  end
  -- a flag: bare is "true"; a value only as =true or =false
  local function flag_of(opt, name, inline)
    if inline == nil then return "true" end
    if FLAG_VALUES[inline] then return inline end
    usage(string.format("%s is a flag: give %s alone, or --%s=true or "
      .. "--%s=false; got %q", opt, opt, name, name, argv[i]))
  end
  while i <= #argv do
    local a = argv[i]
    if only or a == "-" or a:sub(1, 1) ~= "-" then
      positional[#positional + 1] = a
    elseif a == "--" then only = true
    elseif a:sub(1, 2) == "--" then
      local name, eq = a:match("^%-%-([^=]+)(=?)")
      if not name or not d.params[name] then unknown(a) end
      local inline = eq == "=" and a:sub(#name + 4) or nil
      if d.params[name].type == "flag" then
        given[name] = flag_of("--" .. name, name, inline)
      else given[name] = inline or value_of("--" .. name) end
    else
      local name = d.shorts[a:sub(2, 2)]
      if not name then unknown(a:sub(1, 2)) end
      if d.params[name].type == "flag" then
        given[name] = flag_of(a:sub(1, 2), name, #a > 2 and a:sub(3) or nil)
      else given[name] = value_of(a:sub(1, 2), a:sub(3)) end
    end
    i = i + 1
  end
  local max, rest = #d.positional, d.positional[#d.positional]
  if #positional > max and not (rest and rest.rest)
     and not (keep and keep(table.move(positional, max + 1, #positional, 1, {}))) then
    if max == 0 then
      usage(string.format("%s takes no positional arguments, got %q%s",
        addon, positional[1], next(d.params) and (" (its options: "
        .. table.concat(names_of(d), ", ") .. ")") or ""))
    end
    usage(string.format("%s takes at most %d argument%s (%s), got %d: %s",
      addon, max, max == 1 and "" or "s", positional_usage(d), #positional,
      table.concat(positional, " ")))
  end
  return given, positional
end

---What is wrong with a value, as far as the broker can tell (choices);
---nil when nothing is. The pattern and check run in the child.
---@param spec table a declared param
---@param value string
---@return string|nil problem
function M.choice_problem(spec, value)
  if type(value) ~= "string" then return "must be a string" end
  if spec.type == "flag" and not FLAG_VALUES[value] then
    return "is a flag: it must be true or false"
  end
  if not spec.choices then return nil end
  for _, c in ipairs(spec.choices) do if c == value then return nil end end
  return "must be one of " .. table.concat(spec.choices, ", ")
end

---Defaults, then `base` (saved or detected), then `given`.
---@param d uphook.ParamsDecl
---@param base table<string, string>|nil
---@param given table<string, string>
---@return table<string, string>
function M.merge(d, base, given)
  local out = {}
  for k, spec in pairs(d.params) do out[k] = spec.default end
  for k, v in pairs(base or {}) do
    if d.params[k] and type(v) == "string" then out[k] = v end
  end
  for k, v in pairs(given or {}) do out[k] = v end
  return out
end

---Do two merged parameter tables hold the same values?
---@param a table<string, string>|nil
---@param b table<string, string>|nil
---@return boolean
function M.same(a, b)
  for k, v in pairs(a) do if b[k] ~= v then return false end end
  for k, v in pairs(b) do if a[k] ~= v then return false end end
  return true
end

--- The addon's --help ------------------------------------------------------

local function param_line(name, spec)
  local flag = spec.type == "flag"
  local head = (spec.short and ("-" .. spec.short .. ", ") or "    ")
    .. "--" .. name .. (flag and "" or " VALUE")
  local notes = {}
  if flag then notes[#notes + 1] = "a flag: --" .. name .. "=false unsets it" end
  if spec.default then notes[#notes + 1] = "default " .. spec.default end
  if spec.choices then
    notes[#notes + 1] = "one of " .. table.concat(spec.choices, ", ")
  end
  if spec.pattern then notes[#notes + 1] = "pattern " .. spec.pattern end
  local text = spec.description or ""
  if #notes > 0 then
    text = text .. (text ~= "" and " " or "") .. "(" .. table.concat(notes,
      "; ") .. ")"
  end
  return string.format("  %-28s %s", head, text)
end

---The text of `uphook upgrade <addon> --help`.
---@param info table hookdecl.validate's result
---@return string
---@param addon string
---@param command string upgrade or plan
function M.help(info, addon, command)
  local d = info.decl
  local out = { string.format("usage: uphook %s %s%s%s", command, addon,
    next(d.params) and " [options]" or "",
    #d.positional > 0 and (" " .. positional_usage(d)) or ""), "" }
  if info.description then out[#out + 1] = info.description end
  out[#out + 1] = string.format("Upgrades %s %s to %s.", addon, info.from,
    info.version)
  local names = {}
  for k in pairs(d.params) do names[#names + 1] = k end
  table.sort(names)
  if #names > 0 then
    out[#out + 1] = ""
    out[#out + 1] = "parameters (a value given replaces the one saved by "
      .. "the last upgrade):"
    for _, k in ipairs(names) do out[#out + 1] = param_line(k, d.params[k]) end
  end
  if #d.positional > 0 then
    out[#out + 1] = ""
    out[#out + 1] = "arguments:"
    for _, p in ipairs(d.positional) do
      out[#out + 1] = string.format("  %-28s %s", p.name:upper()
        .. (p.rest and "..." or ""), p.description or "")
    end
  end
  if #names == 0 and #d.positional == 0 then
    out[#out + 1] = ""
    out[#out + 1] = addon .. " takes no parameters."
  end
  out[#out + 1] = ""
  out[#out + 1] = "Permissions: " .. (#info.permissions > 0
    and table.concat(info.permissions, ", ") or "none")
  out[#out + 1] = string.format("uphook's own options: 'uphook %s --help'.",
    command)
  return (table.concat(out, "\n"):gsub(" +\n", "\n")) .. "\n"
end

return M

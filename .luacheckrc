-- luacheck's configuration: tests/tree/luacheck_test.sh runs luacheck
-- over lua/, stdlib/ and hooks/ in make test and requires no warning.
-- A warning is fixed in the code; what is configured here is only where
-- code runs (its globals) and the patterns that are on purpose, each
-- with its reason.

-- lua/: the engine, in the broker, with Lua 5.4's whole library.
std = "lua54"

-- A method keeps its self whether its body uses it or not: the Backend's
-- methods (live, mock, offline), the test env's and the mock's are
-- called with `:` through one interface (docs/internals.md "The backend
-- interface"), and one that needs no state is still one of them.
self = false

-- A LuaLS annotation cannot wrap its type over lines (a ---@field of a
-- function type, lua/core/backend.lua's Backend): comments may be long;
-- code lines keep luacheck's 120.
max_comment_line_length = false

-- hooks/ and stdlib/ run in the hook child's sandbox, and their
-- *_test.lua files in the confined test child, whose environment is the
-- same (docs/security.md "Test files"): Lua's library cut to the allow
-- list, and the primitives' families. Both come from the LuaLS stubs,
-- docs/meta/uphook.lua, which tests/cli/stubs_test.py holds to what
-- host/child.c builds: read here, so that this list cannot drift.
local here = debug.getinfo(1, "S").source:match("^@(.*)[/\\]") or "."
local function sandbox(internal)
  -- _ENV is every chunk's environment (an upvalue, not a global); the
  -- standard library looks names up in it that a harness may not give
  local globals = { _ENV = { other_fields = true } }
  local f = assert(io.open(here .. "/docs/meta/uphook.lua"))
  for line in f:lines() do
    local lib, names = line:match("^%-%- allow (%a+): (.*)$")
    if lib == "basic" then
      for name in names:gmatch("%S+") do globals[name] = {} end
    elseif lib then
      local fields = {}
      for name in names:gmatch("%S+") do fields[name] = {} end
      globals[lib] = { fields = fields }
    end
    local family = line:match("^([%a_][%w_]*) = {}$")
    if family and (internal or family ~= "__uphook") then
      globals[family] = { fields = {} }
    end
    local owner, member = line:match("^function ([%a_][%w_]*)%.([%a_][%w_]*)%(")
    if not owner then
      owner, member = line:match("^([%a_][%w_]*)%.([%a_][%w_]*) = ")
    end
    if owner and globals[owner] then globals[owner].fields[member] = {} end
  end
  f:close()
  return { read_globals = globals }
end
stds.hook = sandbox(false)
-- the standard library's modules call the host's internals (__uphook:
-- "Not for hooks", docs/meta/uphook.lua)
stds.stdlib = sandbox(true)

files["hooks"] = { std = "hook" }
files["stdlib"] = { std = "stdlib" }

-- Generated data (tests/data/k8s-schema/gen_schema.py): one type a line.
files["lua/backend/mock/schema.lua"] = { max_line_length = false }
-- Verbatim copies of MicroK8s's default args files, in long strings.
files["lua/backend/mock/default_args.lua"] = { max_string_line_length = false }

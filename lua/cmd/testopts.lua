--- uphook.cmd.testopts: what t.env{} takes (docs/contract.md §6): the
--- paths it names, each inside the test file's folder, and each option's
--- keys and values, checked with errors raised at the line of t.env's
--- caller. A helper of `uphook test` (lua/cmd/testenv.lua), not a command.
local tables = require "uphook.core.tables"
local lib = require "uphook.cmd.testlib"

local M = {}

--- What the runner sets: the C families, and the test file being run
--- (t.env's relative paths are the file's).
M.ctx = { c = nil, file = "?" }
local ctx = M.ctx
local repr = lib.repr

local function dirname(p) return p:match("^(.*)/[^/]*$") or "." end
local function basename(p) return (p:gsub("/+$", "")):match("([^/]+)$") end

-- The folder every path a test file names stays in: the test file's own
-- (docs/contract.md §6), its real path.
local function test_root(level)
  local root, err = ctx.c.fs.pin(dirname(ctx.file))
  if not root then error("t.env: " .. tostring(err), level + 1) end
  return root
end

--- A path t.env takes (addon, cluster, downloads): relative to the test
--- file and inside its folder, no absolute path and no `..`, so a test
--- file reads only what its repository holds (docs/security.md, "Offline
--- worlds and uphook test"). Returns the root and the relative path.
local function inside(what, path, level)
  if type(path) ~= "string" or path == "" or path:find("\0", 1, true)
     or path:sub(1, 1) == "/" then
    error(string.format("t.env: %s: %s is not a path relative to the "
      .. "test file", what, lib.repr(path)), level + 1)
  end
  for part in path:gmatch("[^/]+") do
    if part == ".." then
      error(string.format("t.env: %s: %s leaves the test file's folder "
        .. "(no `..`)", what, lib.repr(path)), level + 1)
    end
  end
  return test_root(level + 1), path
end

--- A path of the test file (the cluster fixture): inside its folder.
local function resolve(path)
  local root, rel = inside("cluster", path, 3)
  return root .. "/" .. rel
end

-- A file beneath the test file's folder (symlinks leading out of it are
-- refused: fs.read), read once per run of the command. `path` is
-- absolute, the folder's real path first (resolve, or the pinned addon
-- folder inside it).
local function read_cached(cache, path, decode)
  local v = cache[path]
  if v == nil then
    local root = test_root(3)
    local rel = path:sub(1, #root + 1) == root .. "/" and path:sub(#root + 2)
    local ok, text, err = false, nil, "outside the test file's folder"
    if rel then ok, text, err = pcall(ctx.c.fs.read, root, rel) end
    if not ok or not text then error("t.env: cannot read "
      .. lib.repr(rel or path) .. ": " .. tostring(not ok and text
        or err or "no such file"), 3) end
    if decode then
      local okd, objs = pcall(ctx.c.yaml.decode_all, text)
      if not okd then error(rel .. ": " .. tostring(objs), 3) end
      v = objs
    else v = text end
    cache[path] = v
  end
  return v
end

-- The addon folder t.env names, pinned: inside the test file's folder
-- after every symlink is followed.
local function addon_dir(path)
  local root, rel = inside("addon", path, 3)
  local dir = ctx.c.fs.pin(rel == "." and root or (root .. "/" .. rel))
  if not dir then error("t.env: no addon folder " .. lib.repr(path), 3) end
  if dir ~= root and dir:sub(1, #root + 1) ~= root .. "/" then
    error(string.format("t.env: addon: %s leads out of the test file's "
      .. "folder", lib.repr(path)), 3)
  end
  return dir
end

local function sorted_keys(set)
  return table.concat(tables.keys(set), ", ")
end

-- Is a table's every key one of `allowed`? Raises naming the first that
-- is not, for the caller's caller.
local function check_keys(what, t, allowed, level)
  local bad = {}
  for k in pairs(t) do
    if not allowed[k] then bad[#bad + 1] = tostring(k) end
  end
  if #bad > 0 then
    table.sort(bad)
    error(string.format('%s: unknown key "%s" (known: %s)', what, bad[1],
      sorted_keys(allowed)), level + 1)
  end
end

--- The keys t.env{} takes, each with the type of its value.
local ENV_KEYS = { addon = "string", name = "string", cluster = "string",
  state = "table", args = "table", files = "table", downloads = "table",
  plan_fetch = "boolean", hostname = "string", timeout = "number",
  memory_limit = "number", state_quota = "number", nodes = "table",
  resolv_conf = "table", hook = "string", certs = "table" }

--- The roots t.env{files = ...} may seed.
local FILE_ROOTS = { args = true, bin = true, plugins = true, state = true }

-- The state t.env{state=} and env:seed_state seed: its keys (a typo such
-- as `verison` would seed no version, and detect would run instead).
local function check_state(what, st, level)
  if type(st) ~= "table" then
    error(what .. " must be a table {version=, params=, ...}", level)
  end
  check_keys(what, st, { version = true, params = true, history = true,
    permissions = true }, level - 1)
end

-- Args files by service: each a file's text, or false for none.
local function check_args(what, args, level)
  if type(args) ~= "table" then error(what .. " must be a table", level) end
  for svc, text in pairs(args) do
    if type(svc) ~= "string" or (type(text) ~= "string" and text ~= false)
    then
      error(string.format("%s[%s] must be the file's text or false, got "
        .. "a %s", what, repr(svc), type(text)), level)
    end
  end
end

--- The keys of a t.env{nodes = {...}} entry, and its agent faults.
local NODE_KEYS = { name = true, args = true, address = true, ready = true,
  agent = true }
local AGENT_FAULTS = { unreachable = true, tls = true, token = true,
  ["down-after-restart"] = true }

--- A t.env{nodes = {...}} entry i, checked: {name=, args=, address=,
--- ready=, agent=} (a name alone is {name = name}).
function M.node_entry(i, n)
  if type(n) == "string" then n = { name = n } end
  if type(n) ~= "table" or type(n.name) ~= "string" then
    error("t.env: nodes[" .. i .. "] must be a name or {name = ...}", 4)
  end
  check_keys("t.env: nodes[" .. i .. "]", n, NODE_KEYS, 4)
  if n.args ~= nil then
    check_args("t.env: nodes[" .. i .. "].args", n.args, 5)
  end
  if n.agent ~= nil and not AGENT_FAULTS[n.agent]
     and not tostring(n.agent):match("^error") then
    error("t.env: nodes[" .. i .. "].agent must be \"unreachable\", "
      .. "\"tls\", \"token\", \"down-after-restart\" or "
      .. "\"error[: message]\"", 4)
  end
  return n
end

-- t.env's options checked, each error raised at the line of t.env's
-- caller.
local function check_env_opts(o)
  if type(o) ~= "table" or type(o.addon) ~= "string" then
    error("t.env: addon (the addon folder) is required", 3)
  end
  check_keys("t.env", o, ENV_KEYS, 3)
  if o.state ~= nil then check_state("t.env: state", o.state, 4) end
  if o.args ~= nil then check_args("t.env: args", o.args, 4) end
  for k, want in pairs(ENV_KEYS) do
    if o[k] ~= nil and type(o[k]) ~= want then
      error(string.format("t.env: %s must be a %s, got a %s%s", k, want,
        type(o[k]), k == "cluster" and " (one YAML file; shape variants "
        .. "with env:apply, env:patch, env:delete)" or ""), 3)
    end
  end
  if o.name ~= nil and (type(o.name) ~= "string" or o.name == "") then
    error("t.env: name must be the addon's name (a string)", 3)
  end
  if o.hook ~= nil and (o.hook:sub(1, 1) == "/" or o.hook:find("%.%.")
      or not o.hook:find("%.lua$")) then
    error("t.env: hook must be a .lua file inside the addon folder, "
      .. "relative to it, got " .. string.format("%q", o.hook), 3)
  end
end

-- t.env's `downloads`, as the mock transfer backend takes them.
local function downloads_of(list)
  local dl = {}
  for url, d in pairs(list) do
    if type(d) == "table" then
      check_keys("t.env: downloads[" .. tostring(url) .. "]", d,
        { file = true, body = true, status = true }, 3)
    elseif type(d) ~= "string" then
      error("t.env: downloads[" .. tostring(url) .. "] must be a fixture "
        .. "path or {file=, body=, status=}", 3)
    end
    if type(d) == "string" then d = { file = d } end
    if d.file then
      local root, rel = inside("downloads[" .. tostring(url) .. "]", d.file, 3)
      d = { root = root, file = rel, status = d.status }
    end
    dl[url] = d
  end
  return dl
end

M.dirname, M.basename, M.resolve, M.read_cached = dirname, basename,
  resolve, read_cached
M.addon_dir, M.sorted_keys, M.check_keys = addon_dir, sorted_keys,
  check_keys
M.FILE_ROOTS, M.check_state, M.check_env_opts = FILE_ROOTS, check_state,
  check_env_opts
M.downloads_of = downloads_of

return M

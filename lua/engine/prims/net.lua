--- uphook.engine.prims.net: the net.* primitives, hash.file and config.install:
--- transfers under the net: permissions, the sha256-verified download
--- cache (docs/downloads.md) and what installs from it.
local rollback = require "uphook.engine.rollback"
local plan = require "uphook.engine.plan"
local args = require "uphook.engine.prims.args"
local permissions = require "uphook.engine.permissions"
local files = require "uphook.engine.prims.files"
local argerr, checktype, checkopts =
  args.argerr, args.checktype, args.checkopts
local need = permissions.need
local split_path, fs_ok, net_ok, node_label, file_mode, charge_state =
  files.split_path, files.fs_ok, files.net_ok, files.node_label,
  files.file_mode, files.charge_state

local M = {}
local H = {}   -- handlers by primitive name (prims.lua dispatches)
M.handlers = H

--- May the hook reach url? The rule has one home, host/http_allow.c,
--- which host/http.c applies again to every redirect target.
local function need_net(run, url, fname)
  checktype(url, "string", 1, fname)
  local https, http = permissions.net_hosts(run.perms)
  local ok, why, perm = run.c.http.allowed(url, { hosts = https,
    http_hosts = http })
  if ok then return end
  if perm then need(run, perm, fname .. "(" .. url .. ")") end
  error(string.format("%s(%s): %s", fname, url, why), 0)
end

--- Until the user's yes, no request leaves the machine for a host the
--- user has not granted (docs/security.md, "Consent"): the request is
--- refused, and the plan says it happens after the yes. Checked right
--- before each request (a fetch, a checksum file, a download, a probe),
--- whatever the backend (list and doctor have none).
local function withheld(run, url)
  if not run.granted then return false end
  local https, http = permissions.net_hosts(run.granted)
  return not run.c.http.allowed(url, { hosts = https, http_hosts = http })
end

local function egress(run, url, fname)
  if not withheld(run, url) then return end
  permissions.after_yes(run, fname .. " " .. url)
  error(string.format("%s(%s): withheld until your yes: its net: "
    .. "permission is not granted yet, and no request leaves the machine "
    .. "before it is (it happens after your yes)", fname, url), 0)
end

--- Under plan a fetch is a read, and is made: the plan shows each one
--- (recorded before the request leaves), so that no request goes
--- anywhere the plan does not show.
local function shown(run, url, fname)
  egress(run, url, fname or "net.fetch")
  if run.plan then plan.note(run, "fetch", url) end
end

local function check_max(opts, fname)
  local m = opts.max_bytes
  if m ~= nil and (math.type(m) ~= "integer" or m <= 0) then
    argerr(2, fname, "max_bytes must be a positive integer")
  end
end

local function transfer_opts(run, url, opts, max)
  local https, http = permissions.net_hosts(permissions.now(run))
  return { url = url, hosts = https, http_hosts = http,
    ca_file = run.ca_file, max_bytes = opts.max_bytes or max,
    deadline = run:remaining(), progress = run.report.transfer_progress }
end

---net.fetch.
---@param run uphook.Run
---@param url string
---@param opts table|nil {sha256=, max_bytes=}
---@return string body
function H.net_fetch(run, url, opts)
  opts = checkopts(opts, { sha256 = true, max_bytes = true }, 2, "fetch")
  checktype(opts.sha256, "string", 2, "fetch", true)
  check_max(opts, "fetch")
  need_net(run, url, "net.fetch")
  local t = transfer_opts(run, url, opts, 16 << 20)
  t.sha256 = opts.sha256
  shown(run, url)
  return net_ok(url, run.net:fetch(t))
end

--- The sum of url's file in the checksum file at sums_url.
local function sum_from(run, url, sums_url)
  checktype(sums_url, "string", 2, "download")
  need_net(run, sums_url, "net.download")
  shown(run, sums_url, "net.download")
  local text = net_ok(sums_url, run.net:fetch(transfer_opts(run, sums_url, {},
    1 << 20)))
  -- the file name: after the last "/", before any query (linear patterns)
  local file = (url:gsub("[?#].*$", "")):match("^.*/([^/]+)$") or ""
  local sum, err = run.c.http.checksum_for(text, file)
  if not sum then
    error(string.format("net.download(%s): %s %s", url, err, sums_url), 0)
  end
  return sum
end

--- Under `plan --plan-fetch`: does the URL answer a HEAD?
local function probe(run, url, entry)
  if withheld(run, url) then
    permissions.after_yes(run, "probe " .. url)
    entry.status = "after your yes"   -- answers stays nil: not asked
    return
  end
  local status, err = run.net:head(transfer_opts(run, url, {}, 0))
  entry.status = status or err
  entry.answers = status ~= nil and status < 400
end

---net.download: verified into the cache (only listed under plan).
---@param run uphook.Run
---@param url string
---@param opts table {sha256=|sha256_url=, max_bytes=}
---@return string token cache:<sha256>
function H.net_download(run, url, opts)
  opts = checkopts(opts, { sha256 = true, sha256_url = true,
    max_bytes = true }, 2, "download")
  checktype(opts.sha256, "string", 2, "download", true)
  check_max(opts, "download")
  need_net(run, url, "net.download")
  local sum = opts.sha256
  if sum == nil and opts.sha256_url ~= nil then
    sum = sum_from(run, url, opts.sha256_url)
  end
  if type(sum) ~= "string" or not sum:lower():match("^" .. ("%x"):rep(64)
     .. "$") then
    error("net.download(" .. url .. "): a checksum is required: give "
      .. "opts.sha256 (64 hex digits) or opts.sha256_url", 0)
  end
  sum = sum:lower()
  local entry = plan.download(run, url, sum)
  if run.plan then
    if run.plan_fetch then probe(run, url, entry) end
    return "cache:" .. sum
  end
  egress(run, url, "net.download")
  local t = transfer_opts(run, url, opts, 2 << 30)
  t.sha256, t.cache_dir = sum, run.cache_dir
  net_ok(url, run.net:download(t))
  return "cache:" .. sum
end

--- A cache token from net.download -> the file's absolute path.
local function cache_file(run, token)
  local sum = token:match("^cache:(%x+)$")
  if not sum or #sum ~= 64 then return nil end
  return run.cache_dir .. "/sha256/" .. sum, sum
end

M.cache_file = cache_file   -- helm.upgrade's chart from net.download

---hash.file of a root:path or a download's token.
---@param run uphook.Run
---@param path string
---@return string hex
function H.hash_file(run, path)
  checktype(path, "string", 1, "file")
  local abs, sum = cache_file(run, path)
  if abs then
    if run.plan then return sum end
    return fs_ok(path, run.c.hash.file(abs))
  end
  local _, dir, rel = split_path(run, path, 1, "file")
  return fs_ok(path, run.c.fs.hash(dir, rel))
end

---config.install: a downloaded file put in place, its prior bytes
---backed up beside the journal.
---@param run uphook.Run
---@param downloaded string the token net.download returned
---@param path string root:relative
---@param opts table|nil {mode=}
function H.config_install(run, downloaded, path, opts)
  checktype(downloaded, "string", 1, "install")
  local src = cache_file(run, downloaded)
  if not src then
    argerr(1, "install", "a path returned by net.download expected")
  end
  local root, dir, rel = split_path(run, path, 2, "install")
  opts = files.write_opts(run, root, rel, opts, "install", "0755")
  local where = root .. ":" .. rel
  local st = run.c.fs.stat(dir, rel)
  local mode = file_mode(where, st, opts.mode, "config.install")
  if root == "state" then
    local size = run.plan and 0 or (run.c.fs.stat(src:match("^(.*)/[^/]+$"),
      src:match("([^/]+)$")) or {}).size
    charge_state(run, dir, rel, st and st.size, size or 0, "config.install")
  end
  plan.install(run, downloaded, where, mode, node_label(run, root))
  if run.plan then return end
  rollback.record_backup(run, root, dir, rel)
  -- the copy is verified against the token's sum (the cache is checked
  -- again here, whoever could write it: docs/security.md)
  fs_ok(where, run.c.fs.install(src, dir, rel, mode,
    downloaded:match("^cache:(%x+)$"):lower()))
  rollback.changed(run)
end

return M

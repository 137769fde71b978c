--- uphook.cmd.selfcmd: the uphook command line a message tells the user to
--- run ("run: ... recover dns"), as they can type it. Through
--- `microk8s upgrade` uphook is $SNAP/bin/uphook and not on PATH: the
--- command then names the binary by its path (the snap's `current`
--- link rather than a revision), with `sudo` when the user came through
--- it, and the options that found this run's addon, state and cluster.
local M = {}

--- A word quoted for sh where it needs it.
local function quote(w)
  if w:match("^[%w@%%+=:,./_-]+$") then return w end
  return "'" .. w:gsub("'", "'\\''") .. "'"
end

--- How this binary is typed: "uphook" when PATH finds this very file,
--- else its path.
---@param c table the C families
---@return string
function M.binary(c)
  local exe = c.sys.realpath("/proc/self/exe")
  if not exe then return "uphook" end
  for dir in (c.sys.getenv("PATH") or ""):gmatch("[^:]+") do
    if c.sys.realpath(dir .. "/uphook") == exe then return "uphook" end
  end
  local snap = c.sys.getenv("SNAP")
  if snap and c.sys.realpath(snap .. "/bin/uphook") == exe then
    -- /snap/microk8s/x1 -> /snap/microk8s/current: survives a refresh
    local current = (snap:gsub("/[^/]+$", "/current")) .. "/bin/uphook"
    if c.sys.realpath(current) == exe then return current end
    return snap .. "/bin/uphook"
  end
  return exe
end

---The command line that runs `uphook <words...>` for the user, with the
---options of this run that name its addon repositories, cluster and
---state (a relative path made absolute: the user may be elsewhere).
---@param o table options from host/cli.c
---@param c table the C families
---@param ... string the command and its operands ("recover", "dns")
---@return string
function M.line(o, c, ...)
  local w = {}
  if c.sys.getenv("SUDO_USER") then w[1] = "sudo" end
  w[#w + 1] = M.binary(c)
  local function path(opt, p)
    if p then
      w[#w + 1] = opt
      w[#w + 1] = c.sys.realpath(p) or p
    end
  end
  for _, d in ipairs(o.addons_dirs or {}) do path("--addons", d) end
  path("--kubeconfig", o.kubeconfig)
  path("--offline", o.offline)
  path("--state-dir", o.state_dir)
  for _, a in ipairs { ... } do w[#w + 1] = a end
  for i, x in ipairs(w) do w[i] = quote(x) end
  return table.concat(w, " ")
end

return M

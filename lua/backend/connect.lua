--- uphook.backend.connect: the cluster a command runs against: the live one
--- (lua/backend/live.lua), or with `--offline FIXTURE` a mock world
--- (lua/backend/offline.lua), with the transfer backend beside it.
local transfer = require "uphook.backend.transfer"

local M = {}

local function must(v, err)
  if v == nil then error(err, 0) end
  return v
end

---The backend, the transfer backend and the name of the node uphook
---runs on; L (a layout) makes an offline world persistent under its
---state dir, with its nodes' files (docs/state.md).
---@param o table options of lua/cmd/cli.lua (offline, kubeconfig, ...)
---@param c table the C families
---@param report table lua/cmd/report.lua
---@param L table|nil the run's layout (state_dir)
---@return uphook.Backend backend
---@return table net the transfer backend
---@return string node this node's name
function M.connect(o, c, report, L)
  if o.offline then
    -- the mock is loaded only for an offline world, never by a live run
    local offline = require "uphook.backend.offline"
    local world = L and (L.state_dir .. "/offline")
    local path = o.offline
    if world and c.sys.kind(world .. "/cluster.yaml") == "file" then
      path = world .. "/cluster.yaml"
    end
    local text = must(c.sys.read(path), "no fixture " .. path)
    local ok, docs = pcall(c.yaml.decode_all, text)
    if not ok then error(path .. ": " .. tostring(docs), 0) end
    local objs, node_args = offline.split_fixture(c, docs, path)
    local host = offline.this_node(objs, c.sys.hostname())
    local b = offline.cluster(c, objs, host)
    if world then
      must(c.sys.mkdirs(world))
      -- a fixture's NodeArgs set the files of a world that starts here;
      -- a world that goes on keeps the files it has (docs/state.md)
      offline.nodes(c, b, L.roots and L.roots.args or (world .. "/args"),
        world .. "/nodes", node_args)
      b = offline.persistent(c, b, world, "cluster.yaml")
      if path == o.offline then b.save() end   -- the world starts here
    end
    -- the cluster is mocked, transfers are real: the command line has no
    -- fixture for downloads (only `uphook test` mocks them), and this is
    -- how a hook's downloads are tried before it meets a cluster
    return b, transfer.live(c), host
  end
  local ok, live = pcall(require, "uphook.backend.live")
  if not ok then
    error("no live backend in this build: " .. tostring(live), 0)
  end
  return must(live.connect(o, c, report)), transfer.live(c),
    c.sys.hostname()
end

return M

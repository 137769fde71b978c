-- lua/backend/live.lua's multi-node methods against the fake API server and
-- cluster-agent test servers (tests/nodes/backend_test.sh starts them and
-- sets NODES_TMP, NODES_NET, NODES_THIS, NODES_KC, NODES_PORT).
local t = require "uphook.test"
t.serial()
local live = require "uphook.backend.live"
local json = require "uphook.c.json"
local sys = require "uphook.c.sys"
local TMP, NET, THIS = os.getenv("NODES_TMP"), os.getenv("NODES_NET"),
  os.getenv("NODES_THIS")
local B = assert(live.connect({ kubeconfig = os.getenv("NODES_KC"),
  snap_data = TMP .. "/this", timeout = 60 }, { json = json }))

local function read(p)
  local f = io.open(p); if not f then return nil end
  local s = f:read("a"); f:close(); return s
end
local function log(node)
  local out = {}
  for l in (read(TMP .. "/nodes/" .. node .. "/agent.log") or ""):gmatch("[^\n]+") do
    out[#out + 1] = json.decode(l)
  end
  return out
end
local function ctl(path, body)
  local st, text = B.client:request("POST", "/_fake/" .. path,
    json.encode(body), "application/json", 10)
  assert(st == 200, tostring(text))
end
local function dns(v)
  return { service = { { name = "kubelet",
    arguments_update = { { ["--cluster-dns"] = v } }, restart = false } } }
end

t.case("agent_configure: an empty service list is the token proof", function()
  local r = B:agent_configure { { node = "node-2", address = NET .. ".2",
    body = { service = {} } }, { node = "node-3", address = NET .. ".3",
    body = {} } }
  t.ok(r[1].ok and r[2].ok, r[1].error or r[2].error)
  local l = log("node-2")
  t.eq(l[#l].kind, "empty")
  t.eq(l[#l].status, 200)
end)

t.case("agent_configure: args on two nodes at once", function()
  local r = B:agent_configure { { node = "node-2", address = NET .. ".2",
    body = dns("10.152.183.20") }, { node = "node-3", address = NET .. ".3",
    body = dns("10.152.183.20") } }
  t.ok(r[1].ok and r[2].ok, r[1].error or r[2].error)
  for _, n in ipairs { "node-2", "node-3" } do
    t.match(read(TMP .. "/nodes/" .. n .. "/args/kubelet"),
      "%-%-cluster%-dns=10%.152%.183%.20\n")
  end
  t.eq(read(TMP .. "/nodes/node-2/restarts.log"), nil)
end)

t.case("agent_configure: errors name the node and its address", function()
  local r = B:agent_configure({ { node = "node-9", address = NET .. ".9",
    body = {} } }, { timeout = 5 })
  t.eq(r[1].ok, false)
  t.eq(r[1].error.reason, "Unreachable")
  t.eq(r[1].error.node, "node-9")
  t.match(r[1].error.message, "^node node%-9 %(" .. NET:gsub("%.", "%%.")
    .. "%.9%): cannot reach the cluster agent")
end)

t.case("kubelet_config reads configz through the API server", function()
  local cfg, err = B:kubelet_config("node-2")
  t.ok(cfg, err and err.message)
  t.eq(cfg.clusterDNS, { "10.152.183.10" })     -- running: not restarted
  t.eq(cfg.clusterDomain, "cluster.local")
  t.eq(cfg.authentication.webhook.enabled, true)
  local none, e2 = B:kubelet_config("node-x")
  t.eq(none, nil)
  t.eq(e2.code, 404)
  t.match(e2.message, '^node node%-x: nodes "node%-x" not found')
end)

t.case("kubelet_config while the kubelet restarts: 503 naming the node", function()
  ctl("nodes/node-3/restart", { seconds = 8 })
  local cfg, err = B:kubelet_config("node-3")
  t.eq(cfg, nil)
  t.eq(err.code, 503)
  t.match(err.message, "^node node%-3: error trying to reach service")
end)

t.case("api_ready waits out this node's API server restart", function()
  ctl("nodes/" .. THIS .. "/restart", { seconds = 0.6, apiserver = true })
  local t0 = sys.now()
  local ok, err = B:api_ready(10)
  t.ok(ok, err)
  t.ok(sys.now() - t0 >= 0.3, "it waited")
  ctl("nodes/" .. THIS .. "/restart", { seconds = 1.5, apiserver = true })
  local ok2, err2 = B:api_ready(0.5)
  t.eq(ok2, false)
  t.match(err2, "^the API server https://127%.0%.0%.1:%d+ is not ready 0%.5 s")
  t.ok(B:api_ready(10))
end)

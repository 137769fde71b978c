-- rbac: Role-Based Access Control on every node's API server.
--
-- `microk8s enable rbac` (canonical/microk8s-core-addons@f68981151ad19ec08f6d2bce6538cc80bdddbf8b:
-- addons/rbac/enable) applies no manifest: it sets kube-apiserver's
-- --authorization-mode=RBAC,Node (refresh_opt_in_config, which also sends
-- it to every other node) and restarts the API server (kubelite). That
-- is all this hook does, on every node of the cluster, with what uphook
-- adds: the change journaled per node, rolled back on any failure, the
-- restarts rolling one node at a time.
--
-- The addon has no version (addons.yaml says ""). This hook installs
-- 1.0.0: RBAC,Node on every node. An rbac enabled by `microk8s enable`
-- (RBAC among this node's modes, no uphook state) is 0.0.0.
--
-- Another node's kube-apiserver args cannot be read (configz is the
-- kubelet's): the upgrade sends the mode to every node whatever this node
-- has (`assume = false`), so a node that joined after rbac was enabled,
-- and kept AlwaysAllow, gets it too. A later run at 1.0.0 finds no drift
-- it can read, and changes nothing.
local MODE = "RBAC,Node"

local function modes(s)
  local out = {}
  for m in (type(s) == "string" and s or ""):gmatch("[^,%s]+") do
    out[#out + 1] = m
  end
  return out
end

local function has(list, want)
  for _, m in ipairs(list) do if m == want then return true end end
  return false
end

return {
  uphook = ">=0.2",   -- the hook API it is written for (docs/reference.md)
  version = "1.0.0",
  from = ">=0.0.0 <1.0.0",
  description = "RBAC authorization: edits kube-apiserver's args on every "
    .. "node (--authorization-mode=RBAC,Node) and restarts kubelite",
  permissions = { "args:kube-apiserver", "restart:kubelite" },

  -- enabled when this node's API server authorizes with RBAC
  detect = function()
    local mode = config.args("kube-apiserver")["--authorization-mode"]
    if has(modes(mode), "RBAC") then return "0.0.0" end
    return nil
  end,

  check = function()
    local mode = config.args("kube-apiserver")["--authorization-mode"]
    local extra = {}
    for _, m in ipairs(modes(mode)) do
      if m ~= "RBAC" and m ~= "Node" then extra[#extra + 1] = m end
    end
    if #extra > 0 then
      log.warn("--authorization-mode=%s becomes %s, as microk8s enable rbac "
        .. "sets it: %s is dropped", tostring(mode), MODE,
        table.concat(extra, ", "))
    end
  end,

  upgrade = function()
    log.step("kube-apiserver --authorization-mode=%s on every node", MODE)
    if config.set_args("kube-apiserver", { ["--authorization-mode"] = MODE },
        { assume = false }) then
      service.restart("kubelite", { nodes = "changed" })
    else
      log.info("already set: kubelite not restarted")
    end
  end,

  verify = function(ctx)
    if ctx.plan then return end
    local mode = config.args("kube-apiserver")["--authorization-mode"]
    if mode ~= MODE then
      error(string.format("kube-apiserver has --authorization-mode=%s, not "
        .. "%s", tostring(mode), MODE), 0)
    end
    -- the API server answers again, with its RBAC bootstrap roles
    if not kube.get("ClusterRole", "cluster-admin") then
      error("the API server has no ClusterRole cluster-admin: its RBAC "
        .. "bootstrap policy did not run", 0)
    end
  end,
}

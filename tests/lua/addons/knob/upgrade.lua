-- A hook for the engine's multi-node tests (tests/lua/nodes_test.lua): one
-- kubelet flag, set on every node or this one, then an action chosen by
-- --action.
return {
  version = "2.0.0",
  from = ">=1.0.0 <2.0.0",
  description = "sets kubelet --cluster-domain on every node (engine tests)",
  permissions = { "args:kubelet", "args:kube-apiserver", "bin:tool",
                  "restart:kubelite", "kube:cluster" },
  params = {
    value = { default = "knob.local" },
    nodes = { default = "all", choices = { "all", "this" } },
    restart = { default = "changed", choices = { "all", "this", "changed", "none" } },
    action = { default = "set" },
    node = { default = "" },
  },
  detect = function() return "1.0.0" end,
  upgrade = function(ctx)
    local p = ctx.params
    if p.action == "set" then
      local changed = config.set_args("kubelet", { ["--cluster-domain"] = p.value },
        p.nodes == "this" and { nodes = "this" } or nil)
      log.info("changed: %s", tostring(changed))
      if changed and p.restart ~= "none" then
        service.restart("kubelite", { nodes = p.restart })
      end
    elseif p.action == "add" then   -- adds two flags, sets one this node has
      if config.set_args("kube-apiserver", {
          ["--kubelet-client-certificate"] = "/c.crt",
          ["--kubelet-client-key"] = "/c.key", ["--audit-log-maxage"] = "90" })
      then service.restart("kubelite", { nodes = "changed" }) end
      if p.value == "fail" then error("failed after the restarts") end
    elseif p.action == "list" then  -- --node=a,b: those nodes only
      local list = {}
      for n in p.node:gmatch("[^,]+") do list[#list + 1] = n end
      config.set_args("kubelet", { ["--cluster-domain"] = p.value },
        { nodes = list })
      service.restart("kubelite", { nodes = list })
    elseif p.action == "write" then
      config.write("args:kubelet", "--cluster-domain=x\n")
    elseif p.action == "writethis" then   -- this node's copy, knowingly
      config.write("args:kubelet", "--cluster-domain=x\n", { nodes = "this" })
      config.remove("args:kube-apiserver", { nodes = "this" })
    elseif p.action == "remove" then
      config.remove("args:kube-apiserver")
    elseif p.action == "bin" then
      config.write("bin:tool", "#!/bin/sh\n")
    elseif p.action == "read" then
      for _, svc in ipairs { "kubelet", "kube-apiserver" } do
        local v, how = config.args(svc, p.node ~= "" and p.node or nil)
        local flag = svc == "kubelet" and "--cluster-domain" or "--authorization-mode"
        log.info("%s %s=%s (%s)", svc, flag, tostring(v[flag]), tostring(how[flag]))
      end
    elseif p.action == "configz" then
      log.info("configz %s", tostring(nodes.kubelet_config(p.node).clusterDomain))
    elseif p.action == "join" then     -- a node joins during the run
      kube.apply { apiVersion = "v1", kind = "Node",
        metadata = { name = "node-new" } }
      config.set_args("kubelet", { ["--cluster-domain"] = p.value })
    elseif p.action == "resolv" then
      log.info("resolv %s", tostring(nodes.resolv_conf()))
    end
  end,
}

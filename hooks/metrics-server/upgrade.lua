--- metrics-server v0.5.x -> v0.8.1.
---
--- Reuses the enable manifest (metrics-server.yaml, v0.8.1):
--- * the image moves from k8s.gcr.io to registry.k8s.io;
--- * ClusterRole system:metrics-server loses nodes/stats, namespaces and
---   configmaps and gains nodes/metrics. Server-side apply replaces the
---   `rules` list as a whole (it is not a keyed list), so the old rules
---   go: nothing is merged into the new ones.
--- * `$ARCH` (the Deployment's kubernetes.io/arch nodeSelector, which
---   enable filled with the architecture of the node it ran on) keeps its
---   live value; without one, this node's, as enable would choose. There
---   is no parameter: enable has none.
--- Then, as enable does, on every node of the cluster: kubelet
--- `--authentication-token-webhook=true` (metrics-server reads the
--- kubelets' metrics with a token), restarting kubelite on the nodes
--- where that line changed, one at a time.
--- verify: the rollout, the APIService v1beta1.metrics.k8s.io Available,
--- and every node's kubelet running with webhook authentication.
local manifest = require "manifest"

local NS = "kube-system"
local NAME = "metrics-server"
local APISERVICE = "v1beta1.metrics.k8s.io"

local ARCHES = { amd64 = true, arm64 = true, arm = true, ppc64le = true,
                 s390x = true, riscv64 = true }

--- The architecture to schedule on, and where it came from.
local function arch()
  local d = kube.get("Deployment", NAME, NS)
  local sel = d and d.spec and d.spec.template and d.spec.template.spec
              and d.spec.template.spec.nodeSelector
  local live = type(sel) == "table" and sel["kubernetes.io/arch"] or nil
  if type(live) == "string" and live ~= "" then
    return live, "the live Deployment"
  end
  return nodes.this().arch, "this node"
end

return {
  uphook = ">=0.2",   -- the hook API it is written for (docs/reference.md)
  version = "0.8.1",
  from = ">=0.5.0 <0.8.1",
  description = "metrics-server v0.8.1 (registry.k8s.io, new RBAC rules); "
    .. "edits kubelet's args on every node (--authentication-token-webhook)",
  -- kube:privileged: the ClusterRoleBinding microk8s-admin binds the
  -- front-proxy client to ClusterRole admin, as the enable script does
  permissions = { "kube:kube-system", "kube:cluster", "kube:privileged",
                  "args:kubelet", "restart:kubelite" },

  detect = function()
    local d = kube.get("Deployment", NAME, NS)
    if not d then return nil end
    local tag = manifest.image_tag(d, NAME)
    return tag and tag:match("^v?(%d+%.%d+%.%d+)$") or nil
  end,

  check = function()
    local a, from = arch()
    if not ARCHES[a or ""] then
      error(string.format("the nodeSelector kubernetes.io/arch %q (from %s) "
        .. "is not a Kubernetes node architecture (amd64, arm64, arm, "
        .. "ppc64le, s390x, riscv64)", tostring(a), from), 0)
    end
    log.info("scheduling on kubernetes.io/arch=%s (from %s)", a, from)
  end,

  upgrade = function(ctx)
    log.step("metrics-server %s", ctx.to)
    local objs = manifest.load("metrics-server.yaml", { ARCH = (arch()) })
    kube.apply(objs)

    log.step("kubelet --authentication-token-webhook=true on every node")
    if config.set_args("kubelet",
        { ["--authentication-token-webhook"] = "true" }) then
      service.restart("kubelite", { nodes = "changed" })
    else
      log.info("already set on every node: kubelite not restarted")
    end

    kube.rollout("Deployment", NAME, NS, { timeout = 300 })
  end,

  verify = function(ctx)
    kube.wait("APIService", APISERVICE, nil,
      { condition = "Available", timeout = 300 })
    if ctx.plan then return end
    for _, n in ipairs(nodes.list()) do
      local auth = nodes.kubelet_config(n.name).authentication
      if not (auth and auth.webhook and auth.webhook.enabled == true) then
        error(string.format("the kubelet of node %s does not run with "
          .. "--authentication-token-webhook=true: metrics-server cannot "
          .. "read its metrics", n.name), 0)
      end
    end
  end,
}

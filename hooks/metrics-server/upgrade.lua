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
---   live value; `--arch` overrides it; with neither, this node's.
--- Then, as enable does: kubelet `--authentication-token-webhook=true`,
--- restarting kubelite only when that line changed.
--- verify: the rollout, and the APIService v1beta1.metrics.k8s.io
--- Available.
local manifest = require "manifest"

local NS = "kube-system"
local NAME = "metrics-server"
local APISERVICE = "v1beta1.metrics.k8s.io"

local ARCHES = { amd64 = true, arm64 = true, arm = true, ppc64le = true,
                 s390x = true, riscv64 = true }

--- The architecture to schedule on, and where it came from.
local function arch(ctx)
  if ctx.params.arch ~= "" then return ctx.params.arch, "the parameters" end
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
  version = "0.8.1",
  from = ">=0.5.0 <0.8.1",
  description = "metrics-server v0.8.1 (registry.k8s.io, new RBAC rules)",
  -- kube:privileged: the ClusterRoleBinding microk8s-admin binds the
  -- front-proxy client to ClusterRole admin, as the enable script does
  permissions = { "kube:kube-system", "kube:cluster", "kube:privileged",
                  "args:kubelet", "restart:kubelite" },
  params = {
    -- enable has no parameters; this one only exists to override the
    -- nodeSelector enable derived from the node it ran on.
    arch = { default = "" },
  },

  -- The version, and the parameters read back from the cluster (the
  -- live nodeSelector), which stand in for saved ones without state.
  detect = function(ctx)
    local d = kube.get("Deployment", NAME, NS)
    if not d then return nil end
    local tag = manifest.image_tag(d, NAME)
    local version = tag and tag:match("^v?(%d+%.%d+%.%d+)$") or nil
    local sel = d.spec and d.spec.template and d.spec.template.spec
                and d.spec.template.spec.nodeSelector
    local live = type(sel) == "table" and sel["kubernetes.io/arch"] or nil
    return version, { arch = type(live) == "string" and live or "" }
  end,

  check = function(ctx)
    local a, from = arch(ctx)
    if not ARCHES[a or ""] then
      error(string.format("arch: %q (from %s) is not a Kubernetes node "
        .. "architecture (amd64, arm64, arm, ppc64le, s390x, riscv64)",
        tostring(a), from), 0)
    end
    log.info("scheduling on kubernetes.io/arch=%s (from %s)", a, from)
  end,

  upgrade = function(ctx)
    log.step("metrics-server %s", ctx.to)
    local objs = manifest.load("metrics-server.yaml", { ARCH = (arch(ctx)) })
    kube.apply(objs)

    log.step("kubelet --authentication-token-webhook=true")
    if config.set_args("kubelet", { ["--authentication-token-webhook"] = "true" })
    then
      service.restart("kubelite")
    else
      log.info("already set: kubelite not restarted")
    end

    kube.rollout("Deployment", NAME, NS, { timeout = 300 })
  end,

  verify = function(ctx)
    kube.wait("APIService", APISERVICE, nil,
      { condition = "Available", timeout = 300 })
  end,
}

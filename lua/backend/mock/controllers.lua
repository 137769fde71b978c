--- uphook.backend.mock.controllers: what the mock cluster's controllers write
--- into status, and the server's defaults.
---
--- Workloads "roll out at once": the status a controller would reach
--- after a finished rollout, or, when stalled, a rollout stuck with its
--- updated replicas behind (observedGeneration caught up).
local tables = require "uphook.core.tables"
local kinds = require "uphook.core.kinds"
local validate = require "uphook.backend.mock.validate"

local M = {}
local get = validate.get

-- Drop zero counts, as the API server's omitempty does.
local function nz(n) if n and n ~= 0 then return n end end

local function fnv(s)
  local h = 2166136261
  for i = 1, #s do
    h = ((h ~ s:byte(i)) * 16777619) & 0xffffffff
  end
  return h
end

local SUFFIX_CHARS = "bcdfghjklmnpqrstvwxz2456789"   -- apimachinery's rand
local hashes, hashes_n = {}, 0    -- what was hashed -> its hash (bounded)

---A pod-template hash like the controllers' ("7c5ddbdf54": FNV-32a, its
---decimal digits mapped by apimachinery's rand.SafeEncodeString, as
---kubernetes/kubernetes@v1.32.3 pkg/controller/controller_utils.go
---ComputeHash). Cheap and approximate: it follows the containers' names
---and images, which is what upgrades change (hashing the whole template
---cost half the time of building a cluster), each text hashed once.
---@param obj table
---@return string
function M.template_hash(obj)
  local cs = get(obj, "spec", "template", "spec", "containers")
  local parts = {}
  for i, c in ipairs(type(cs) == "table" and cs or {}) do
    if type(c) == "table" then
      parts[i] = tostring(c.name) .. "=" .. tostring(c.image)
    end
  end
  local text = table.concat(parts, ",")
  local h = hashes[text]
  if h then return h end
  h = tostring(fnv(text)):gsub("%d", function(d)
    local n = d:byte() % #SUFFIX_CHARS + 1
    return SUFFIX_CHARS:sub(n, n)
  end)
  if hashes_n >= 256 then hashes, hashes_n = {}, 0 end
  hashes[text], hashes_n = h, hashes_n + 1
  return h
end

local function cond(type_, status, reason, message, ts)
  return { type = type_, status = status, reason = reason,
           message = message, lastUpdateTime = ts,
           lastTransitionTime = ts }
end

local function replicas(obj)
  local r = get(obj, "spec", "replicas")
  return type(r) == "number" and r or 1
end

---Deployment status after a rollout, or stalled.
---@param obj table the workload
---@param ts string now, RFC 3339
---@param stalled boolean|nil
---@return table status
function M.Deployment(obj, ts, stalled, nodes)
  local g, r = obj.metadata.generation, replicas(obj)
  local name = obj.metadata.name
  local rs = name .. "-" .. M.template_hash(obj)
  local old = type(obj.status) == "table" and obj.status or {}
  if r > 0 and not select(2, M.placement(obj, nodes or {}, nil)) then
    -- its pods can go nowhere Ready: made and updated, none available
    return { observedGeneration = g, replicas = r, updatedReplicas = r,
      unavailableReplicas = r,
      conditions = {
        cond("Available", "False", "MinimumReplicasUnavailable",
             "Deployment does not have minimum availability.", ts),
        cond("Progressing", "True", "ReplicaSetUpdated",
             string.format('ReplicaSet "%s" is progressing.', rs), ts),
      } }
  end
  if stalled then
    local upd = math.max(r - 1, 0)
    return { observedGeneration = g, replicas = nz(r + 1),
      updatedReplicas = nz(upd),
      readyReplicas = nz(old.readyReplicas or r),
      availableReplicas = nz(old.availableReplicas or r),
      unavailableReplicas = 1,
      conditions = {
        cond("Available", "True", "MinimumReplicasAvailable",
             "Deployment has minimum availability.", ts),
        cond("Progressing", "True", "ReplicaSetUpdated",
             string.format('ReplicaSet "%s" is progressing.', rs), ts),
      } }
  end
  return { observedGeneration = g, replicas = nz(r), updatedReplicas = nz(r),
    readyReplicas = nz(r), availableReplicas = nz(r),
    conditions = {
      cond("Available", "True", "MinimumReplicasAvailable",
           "Deployment has minimum availability.", ts),
      cond("Progressing", "True", "NewReplicaSetAvailable",
           string.format('ReplicaSet "%s" has successfully progressed.', rs),
           ts),
    } }
end

-- Taints a DaemonSet's pods tolerate without saying so: the DaemonSet
-- controller adds these tolerations to every pod it makes
-- (kubernetes/kubernetes@v1.32.3:pkg/controller/daemon/util/
-- daemonset_util.go AddOrUpdateDaemonPodTolerations).
local DS_TOLERATED = {
  ["node.kubernetes.io/not-ready"] = true,
  ["node.kubernetes.io/unreachable"] = true,
  ["node.kubernetes.io/disk-pressure"] = true,
  ["node.kubernetes.io/memory-pressure"] = true,
  ["node.kubernetes.io/pid-pressure"] = true,
  ["node.kubernetes.io/unschedulable"] = true,
}

local function tolerates(tolerations, taint, daemon)
  if daemon and DS_TOLERATED[taint.key] then return true end
  for _, t in ipairs(type(tolerations) == "table" and tolerations or {}) do
    if type(t) == "table"
        and (t.effect == nil or t.effect == "" or t.effect == taint.effect)
        and ((t.key == nil or t.key == "") and t.operator == "Exists"
             or t.key == taint.key
                and (t.operator == "Exists" or t.value == taint.value)) then
      return true
    end
  end
  return false
end

---Does the DaemonSet `obj` run a pod on `node`? Its template's
---nodeSelector matches the node's labels and it tolerates the node's
---NoSchedule and NoExecute taints (required node affinity is not
---modelled). For other workloads (`daemon` false) the scheduler's view:
---only the template's own tolerations count, and a cordoned node
---(spec.unschedulable, the unschedulable taint) takes no pods.
---@param obj table the DaemonSet
---@param node table a Node
---@param daemon? boolean default true
---@return boolean
function M.schedules(obj, node, daemon)
  daemon = daemon ~= false
  local ps = get(obj, "spec", "template", "spec") or {}
  if not daemon and get(node, "spec", "unschedulable") == true then
    return false
  end
  local labels = get(node, "metadata", "labels") or {}
  for k, v in pairs(type(ps.nodeSelector) == "table" and ps.nodeSelector
                    or {}) do
    if labels[k] ~= v then return false end
  end
  for _, taint in ipairs(get(node, "spec", "taints") or {}) do
    if type(taint) == "table" and (taint.effect == "NoSchedule"
        or taint.effect == "NoExecute")
        and not tolerates(ps.tolerations, taint, daemon) then
      return false
    end
  end
  return true
end

---Is a Node Ready? A Node without a Ready condition (a fixture that
---gives none) counts as Ready.
---@param node table
---@return boolean
function M.node_ready(node)
  local cs = get(node, "status", "conditions")
  for _, c in ipairs(type(cs) == "table" and cs or {}) do
    if type(c) == "table" and c.type == "Ready" then
      return c.status == "True"
    end
  end
  return true
end

---Where a Deployment's or StatefulSet's pods run: the name of a Ready
---Node the scheduler can place them on (this_node when it is one, else
---the first by name), `this_node` when there are no Nodes at all, or
---nil when every Node it could go to is NotReady (the node lifecycle
---controller taints those node.kubernetes.io/not-ready:NoSchedule, and a
---pod that tolerates it is still not run by that node's kubelet): then
---its pods stay Pending and its rollout does not finish.
---@param obj table the workload
---@param nodes table[] the Nodes
---@param this_node string|nil
---@return string|nil node, boolean placed
function M.placement(obj, nodes, this_node)
  if #nodes == 0 then return this_node, true end
  local best
  for _, n in ipairs(nodes) do
    if M.node_ready(n) and M.schedules(obj, n, false) then
      local nn = n.metadata.name
      if nn == this_node then return nn, true end
      if best == nil or nn < best then best = nn end
    end
  end
  return best, best ~= nil
end

---DaemonSet status: one pod per Node it schedules on (`nodes`, the Node
---objects; none at all counts as one Ready node). A pod on a NotReady
---node is scheduled and updated but never available, so the rollout
---does not finish, as on a real cluster.
---@param obj table the workload
---@param stalled boolean|nil
---@param nodes table[] the Nodes
---@return table status
function M.DaemonSet(obj, _, stalled, nodes)
  local n, ready = 0, 0
  if #nodes == 0 then
    n, ready = 1, 1
  else
    for _, node in ipairs(nodes) do
      if M.schedules(obj, node) then
        n = n + 1
        if M.node_ready(node) then ready = ready + 1 end
      end
    end
  end
  local upd = stalled and math.max(n - 1, 0) or n
  if stalled then ready = math.min(ready, upd) end
  return { observedGeneration = obj.metadata.generation,
    currentNumberScheduled = n, desiredNumberScheduled = n,
    numberMisscheduled = 0, numberReady = ready,
    updatedNumberScheduled = nz(upd),
    numberAvailable = nz(ready),
    numberUnavailable = nz(n - ready) }
end

local function suffix(seed)
  local h, out = fnv(seed), {}
  for i = 1, 5 do
    local n = h % #SUFFIX_CHARS
    out[i] = SUFFIX_CHARS:sub(n + 1, n + 1)
    h = (h // #SUFFIX_CHARS) ~ (i * 2654435761 & 0xffffffff)
  end
  return table.concat(out)
end

---The Pods a workload's controller keeps (Deployment: through its
---ReplicaSet `<name>-<hash>`, pods `<rs>-<5 chars>`; DaemonSet: one
---`<name>-<5 chars>` per node it schedules on, spec.nodeName set;
---StatefulSet: `<name>-0`..), Ready unless on a NotReady node or not yet
---updated (a stalled rollout's last pod). Plain tables, not stored.
---@param obj table the workload (with its status)
---@param nodes table[] the Nodes
---@param this_node string|nil a node name for pods when there are no Nodes
---@param rs_uid? string a Deployment's ReplicaSet's uid, for its Pods
---@return table[] pods
function M.pods(obj, nodes, this_node, rs_uid)
  local md = obj.metadata
  local tmpl = get(obj, "spec", "template") or {}
  local labels = tables.copy(get(tmpl, "metadata", "labels") or {})
  local hash = M.template_hash(obj)
  local owner = { apiVersion = obj.apiVersion, kind = obj.kind,
    name = md.name, uid = md.uid, controller = true,
    blockOwnerDeletion = true }
  local places = {}           -- { name, node, ready }
  if obj.kind == "DaemonSet" then
    labels["controller-revision-hash"] = hash
    for _, n in ipairs(nodes) do
      if M.schedules(obj, n) then
        local nn = n.metadata.name
        places[#places + 1] = { md.name .. "-" .. suffix(md.name .. nn),
                                nn, M.node_ready(n) }
      end
    end
    if #nodes == 0 then
      places[1] = { md.name .. "-" .. suffix(md.name), this_node, true }
    end
    table.sort(places, function(a, b) return a[1] < b[1] end)
  else
    local r = replicas(obj)
    local on, placed = M.placement(obj, nodes, this_node)
    if obj.kind == "StatefulSet" and not placed then
      r = math.min(r, get(obj, "status", "replicas") or r)
    end
    local rs = md.name .. "-" .. hash
    if obj.kind == "Deployment" then
      labels["pod-template-hash"] = hash
      owner = { apiVersion = "apps/v1", kind = "ReplicaSet", name = rs,
                uid = rs_uid, controller = true, blockOwnerDeletion = true }
    elseif obj.kind == "StatefulSet" then
      labels["controller-revision-hash"] = rs
    end
    for i = 1, r do
      local name = obj.kind == "StatefulSet" and (md.name .. "-" .. (i - 1))
        or (rs .. "-" .. suffix(rs .. i))
      places[i] = { name, on, placed }
    end
  end
  local st = type(obj.status) == "table" and obj.status or {}
  local avail = obj.kind == "DaemonSet" and (st.numberAvailable or 0)
    or (st.availableReplicas or st.readyReplicas or 0)
  local out = {}
  for i, pl in ipairs(places) do
    local spec = tables.copy(tmpl.spec or {})
    spec.nodeName = pl[2]   -- nil: not scheduled (Pending)
    local ready = pl[3] and (obj.kind == "DaemonSet" or i <= avail)
    out[i] = { apiVersion = "v1", kind = "Pod", metadata = {
        name = pl[1], namespace = md.namespace, labels = tables.copy(labels),
        ownerReferences = { owner } },
      spec = spec,
      status = { phase = pl[3] and "Running" or "Pending",
        conditions = { { type = "Ready",
                         status = ready and "True" or "False" } } } }
  end
  return out
end

M.REVISION = "deployment.kubernetes.io/revision"

---A Deployment's ReplicaSet for its current template, as the Deployment
---controller keeps it (kubernetes/kubernetes@v1.32.3
---pkg/controller/deployment/sync.go getNewReplicaSet: named
---`<name>-<pod-template-hash>`, the hash in its labels, selector and
---template, the revision annotations, owned by the Deployment), its
---status following the Deployment's. A plain table, not stored.
---@param d table the Deployment (with its status)
---@param revision integer
---@return table replicaset
function M.replicaset(d, revision)
  local md, spec = d.metadata, d.spec or {}
  local hash, r = M.template_hash(d), replicas(d)
  -- shallow copies down to what changes (stored objects are never
  -- changed in place, so the rest is shared with the Deployment)
  local shallow = tables.shallow
  local tmpl = shallow(type(spec.template) == "table" and spec.template or {})
  tmpl.metadata = shallow(type(tmpl.metadata) == "table" and tmpl.metadata
                          or {})
  tmpl.metadata.labels = shallow(type(tmpl.metadata.labels) == "table"
                                 and tmpl.metadata.labels or {})
  tmpl.metadata.labels["pod-template-hash"] = hash
  local sel = shallow(type(spec.selector) == "table" and spec.selector or {})
  sel.matchLabels = shallow(type(sel.matchLabels) == "table"
                            and sel.matchLabels or {})
  sel.matchLabels["pod-template-hash"] = hash
  local st = type(d.status) == "table" and d.status or {}
  local ready = math.min(st.availableReplicas or 0, r)
  return { apiVersion = "apps/v1", kind = "ReplicaSet", metadata = {
      name = md.name .. "-" .. hash, namespace = md.namespace,
      labels = shallow(tmpl.metadata.labels),
      annotations = { [M.REVISION] = tostring(revision),
        ["deployment.kubernetes.io/desired-replicas"] = tostring(r),
        ["deployment.kubernetes.io/max-replicas"] =
          tostring(r + (r > 0 and 1 or 0)) },
      ownerReferences = { { apiVersion = "apps/v1", kind = "Deployment",
        name = md.name, uid = md.uid, controller = true,
        blockOwnerDeletion = true } } },
    spec = { replicas = r, minReadySeconds = spec.minReadySeconds,
             selector = sel, template = tmpl },
    status = { observedGeneration = 1, replicas = r,
      fullyLabeledReplicas = nz(r), readyReplicas = nz(ready),
      availableReplicas = nz(ready) } }
end

---Kinds whose controllers make Pods here: the workloads but ReplicaSet
---(a Deployment's Pods are made with it, owned by its ReplicaSet).
M.POD_OWNERS = {}
for k in pairs(kinds.WORKLOADS) do
  if k ~= "ReplicaSet" then M.POD_OWNERS[k] = true end
end

---StatefulSet status.
---@param obj table the workload
---@param stalled boolean|nil
---@return table status
function M.StatefulSet(obj, _, stalled, nodes)
  local g, r = obj.metadata.generation, replicas(obj)
  local rev = obj.metadata.name .. "-" .. M.template_hash(obj)
  local old = type(obj.status) == "table" and obj.status or {}
  if r > 0 and not select(2, M.placement(obj, nodes or {}, nil)) then
    -- OrderedReady: pod 0 is made, stays Pending, and the next waits
    local n = get(obj, "spec", "podManagementPolicy") == "Parallel" and r or 1
    return { observedGeneration = g, replicas = n, currentReplicas = n,
      updatedReplicas = n, currentRevision = old.currentRevision or rev,
      updateRevision = rev, collisionCount = 0 }
  end
  if stalled then
    return { observedGeneration = g, replicas = nz(r),
      readyReplicas = nz(old.readyReplicas or r),
      availableReplicas = nz(old.availableReplicas or r),
      currentReplicas = nz(r - math.max(r - 1, 0)),
      updatedReplicas = nz(math.max(r - 1, 0)),
      currentRevision = old.currentRevision or (rev .. "0"),
      updateRevision = rev, collisionCount = 0 }
  end
  return { observedGeneration = g, replicas = nz(r), readyReplicas = nz(r),
    availableReplicas = nz(r), currentReplicas = nz(r),
    updatedReplicas = nz(r), currentRevision = rev, updateRevision = rev,
    collisionCount = 0 }
end

---ReplicaSet status.
---@param obj table the workload
---@param stalled boolean|nil
---@return table status
function M.ReplicaSet(obj, _, stalled, _)
  local r = replicas(obj)
  local ready = stalled and math.max(r - 1, 0) or r
  return { observedGeneration = obj.metadata.generation, replicas = nz(r),
    fullyLabeledReplicas = nz(r), readyReplicas = nz(ready),
    availableReplicas = nz(ready) }
end

---Job status: complete at once; stalled means still running, stalled
---with "fail" failed past its backoffLimit (as the API server's Job
---controller reports it).
---@param obj table the workload
---@param ts string now, RFC 3339
---@param stalled boolean|"fail"|nil
---@return table status
function M.Job(obj, ts, stalled, _)
  -- the two True conditions a finished Job has, with one reason
  local function finished(interim, final, reason, message)
    local out = {}
    for i, kind in ipairs { interim, final } do
      out[i] = { type = kind, status = "True", reason = reason,
        message = message, lastProbeTime = ts, lastTransitionTime = ts }
    end
    return out
  end
  if stalled == "fail" then
    return { failed = 1, startTime = ts, ready = 0, terminating = 0,
      uncountedTerminatedPods = {},
      conditions = finished("FailureTarget", "Failed", "BackoffLimitExceeded",
        "Job has reached the specified backoff limit") }
  elseif stalled then
    return { active = 1, startTime = ts, ready = 0 }
  end
  local n = get(obj, "spec", "completions")
  n = type(n) == "number" and n or 1
  return { succeeded = n, startTime = ts, completionTime = ts, ready = 0,
    terminating = 0, uncountedTerminatedPods = {},
    conditions = finished("SuccessCriteriaMet", "Complete",
      "CompletionsReached", "Reached expected number of succeeded pods") }
end

---Kinds whose status a rollout controller drives: the workloads and Job.
M.ROLLOUT = { Job = true }
for k in pairs(kinds.WORKLOADS) do M.ROLLOUT[k] = true end

---Has the controller caught up with this object's generation?
---@param obj table
---@return boolean
function M.observed(obj)
  local s = obj.status
  return type(s) == "table"
     and (obj.kind == "Job" and s.startTime ~= nil
          or s.observedGeneration == obj.metadata.generation)
end

---CRD status: Established and NamesAccepted at once.
---@param obj table the CRD
---@param ts string now, RFC 3339
---@return table status
function M.crd_status(obj, ts)
  local spec = obj.spec or {}
  local stored = M.crd_stored_after(obj) or M.crd_stored(obj)
  return {
    acceptedNames = tables.copy(spec.names or {}),
    conditions = {
      { type = "NamesAccepted", status = "True", reason = "NoConflicts",
        message = "no conflicts found", lastTransitionTime = ts },
      { type = "Established", status = "True", reason = "InitialNamesAccepted",
        message = "the initial names have been accepted",
        lastTransitionTime = ts },
    },
    storedVersions = stored,
  }
end

---The CRD's status.storedVersions (a copy).
---@param obj table
---@return string[]
function M.crd_stored(obj)
  local st = type(obj.status) == "table" and obj.status or {}
  local out = {}
  for _, v in ipairs(type(st.storedVersions) == "table" and st.storedVersions
                     or {}) do
    out[#out + 1] = v
  end
  return out
end

---The storedVersions after a write: the API server adds the storage
---version on every create and update and never removes one
---(apiextensions-apiserver's CRD strategy); nil when it is among them
---already.
---@param obj table
---@return string[]|nil
function M.crd_stored_after(obj)
  local stored = M.crd_stored(obj)
  local spec = obj.spec or {}
  for _, v in ipairs(type(spec.versions) == "table" and spec.versions
                     or {}) do
    if type(v) == "table" and v.storage then
      for _, s in ipairs(stored) do if s == v.name then return nil end end
      stored[#stored + 1] = v.name
      return stored
    end
  end
end

---Is a condition of `type_` True in obj.status.conditions?
---@param obj table
---@param type_ string
---@return boolean
function M.condition_true(obj, type_)
  local cs = get(obj, "status", "conditions")
  for _, c in ipairs(type(cs) == "table" and cs or {}) do
    if type(c) == "table" and c.type == type_ then
      return c.status == "True"
    end
  end
  return false
end

---APIService status: Available.
---@param ts string now, RFC 3339
---@return table status
function M.apiservice_status(_, ts)
  return { conditions = {
    { type = "Available", status = "True", reason = "Passed",
      message = "all checks passed", lastTransitionTime = ts } } }
end

local function default_ports(list, field)
  for _, p in ipairs(type(list) == "table" and list or {}) do
    if type(p) == "table" then
      if p.protocol == nil then p.protocol = "TCP" end
      if field == "service" and p.targetPort == nil and p.port ~= nil then
        p.targetPort = p.port
      end
    end
  end
end

local function default_pod_spec(spec)
  if type(spec) ~= "table" then return end
  for _, f in ipairs({ "containers", "initContainers" }) do
    for _, c in ipairs(type(spec[f]) == "table" and spec[f] or {}) do
      if type(c) == "table" then default_ports(c.ports, "container") end
    end
  end
end

---Fill the API server's defaults a hook can trip over (absent fields
---only; values already set are kept). In place.
---@param kind string
---@param obj table
function M.defaults(kind, obj)
  local spec = obj.spec
  if kind == "StorageClass" then
    if obj.reclaimPolicy == nil then obj.reclaimPolicy = "Delete" end
    if obj.volumeBindingMode == nil then
      obj.volumeBindingMode = "Immediate"
    end
  elseif type(spec) ~= "table" then
    return
  elseif kind == "Service" then
    if spec.type == nil then spec.type = "ClusterIP" end
    default_ports(spec.ports, "service")
  elseif kind == "Deployment" or kind == "StatefulSet"
      or kind == "ReplicaSet" then
    if spec.replicas == nil then spec.replicas = 1 end
    default_pod_spec(get(spec, "template", "spec"))
  elseif kind == "DaemonSet" or kind == "Job" then
    default_pod_spec(get(spec, "template", "spec"))
  elseif kind == "Pod" then
    default_pod_spec(spec)
  end
end

local B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

---Standard base64 (for Secret stringData -> data).
---@param s string
---@return string
function M.base64(s)
  local out = {}
  for i = 1, #s, 3 do
    local a, b, c = s:byte(i, i + 2)
    local n = (a << 16) | ((b or 0) << 8) | (c or 0)
    local q = {}
    for j = 1, 4 do
      local idx = (n >> (6 * (4 - j))) & 63
      q[j] = B64:sub(idx + 1, idx + 1)
    end
    if not b then q[3] = "=" end
    if not c then q[4] = "=" end
    out[#out + 1] = table.concat(q)
  end
  return table.concat(out)
end

return M

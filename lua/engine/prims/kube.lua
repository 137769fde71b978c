--- uphook.engine.prims.kube: the kube.* primitives: apply (in batches,
--- lua/engine/batch.lua), get, list, delete, prune, rollout, wait.
local rollback = require "uphook.engine.rollback"
local batch = require "uphook.engine.batch"
local plan = require "uphook.engine.plan"
local kinds = require "uphook.core.kinds"
local names = require "uphook.core.names"
local hookerror = require "uphook.core.hookerror"
local wait = require "uphook.engine.wait"
local consent = require "uphook.engine.consent"
local args = require "uphook.engine.prims.args"
local permissions = require "uphook.engine.permissions"
local argerr, checktype, checkopts, check_ref, pkey, ref =
  args.argerr, args.checktype, args.checkopts, args.check_ref, args.pkey,
  args.ref
local host_owned, need_kube, need_read =
  permissions.host_owned, permissions.need_kube, permissions.need_read

--- A Secret as the hook sees it before the user's yes grants its
--- namespace (permissions.withheld_read): its metadata and type, not its
--- data; the plan says the data is read after the yes.
local function without_data(run, obj)
  if type(obj) ~= "table" then return obj end
  local out = {}
  for k, v in pairs(obj) do
    if k ~= "data" and k ~= "stringData" then out[k] = v end
  end
  permissions.after_yes(run, "read the data of " .. tostring(obj.kind)
    .. " " .. kinds.objname(obj))
  return out
end

local DATA_LOSS_KINDS = kinds.DATA_LOSS
local M = {}
local H = {}   -- handlers by primitive name (prims.lua dispatches)
M.handlers = H

M.MAX_OBJECTS = 4096   -- objects in one kube.apply

--- Object list from a YAML string, one object, or a list of objects.
local function objects_of(run, objs)
  if type(objs) == "string" then
    objs = run.c.yaml.decode_all(objs)
  elseif type(objs) == "table" and (objs.kind or objs.apiVersion) then
    objs = { objs }
  elseif type(objs) ~= "table" then
    argerr(1, "apply", "YAML string, object or list expected, got "
      .. type(objs))
  end
  local out = {}
  for i, o in ipairs(objs) do
    if o ~= run.null and o ~= nil then
      if type(o) ~= "table" or type(o.kind) ~= "string"
         or type(o.apiVersion) ~= "string" then
        argerr(1, "apply", "object #" .. i .. " has no kind/apiVersion")
      end
      if type(o.metadata) ~= "table" or type(o.metadata.name) ~= "string"
      then
        argerr(1, "apply", "object #" .. i .. " (" .. names.quote(o.kind)
          .. ") has no metadata.name")
      end
      for _, f in ipairs { "labels", "annotations" } do
        local m = o.metadata[f]
        if m ~= nil and m ~= run.null and type(m) ~= "table" then
          argerr(1, "apply", string.format("object #%d (%s %s): metadata.%s "
            .. "must be a map, got %s", i, o.kind, o.metadata.name, f,
            type(m)))
        end
      end
      names.check_kind(o.apiVersion .. "/" .. o.kind, "kube.apply")
      names.check_name(o.kind, o.metadata.name, "kube.apply")
      if o.metadata.namespace ~= nil then
        names.check_namespace(o.metadata.namespace, "kube.apply")
      end
      if #out == M.MAX_OBJECTS then
        argerr(1, "apply", "more than " .. M.MAX_OBJECTS .. " objects")
      end
      out[#out + 1] = o
    end
  end
  return out
end

---kube.apply: stamp, permission, journal, apply (or a server dry run
---under plan), plan entry; in batches (lua/engine/batch.lua).
---@param run uphook.Run
---@param objs string|table a YAML string, an object or a list (checked)
---@param opts table|nil {namespace=}
---@return {kind: string, name: string, namespace?: string, action: string}[]
function H.kube_apply(run, objs, opts)
  opts = checkopts(opts, { namespace = true }, 2, "apply")
  checktype(opts.namespace, "string", 2, "apply", true)
  if opts.namespace then names.check_namespace(opts.namespace, "kube.apply") end
  local list, results = objects_of(run, objs), {}
  local reader = batch.reader(run.backend, list, opts.namespace)
  local batches = batch.split(list)
  for i, objs_b in ipairs(batches) do
    batch.apply_batch(run, objs_b, opts, reader, results)
    -- what a batch made and dropped (its requests, answers and diffs,
    -- some 20 KiB an object) goes before the next: the heap stays near
    -- what the call keeps, not twice it (docs/bench.md, "Peak RSS")
    if i < #batches then collectgarbage() end
  end
  return results
end

---kube.get; under plan, what the plan would have left.
---@param run uphook.Run
---@param kind string Kind or group/version/Kind
---@param name string
---@param namespace string|nil
---@return table|nil obj
function H.kube_get(run, kind, name, namespace)
  check_ref(kind, name, namespace, "get")
  need_read(run, kind, namespace or "default", "kube.get of " .. kind
    .. " " .. kinds.joinname(name, namespace))
  local planned = run.plan and run.planned[pkey(kind, name, namespace)]
  local obj
  if planned ~= nil and planned ~= false then obj = planned
  elseif planned == false and run.plan then obj = nil
  else obj = run.backend:get(kind, name, namespace) end
  if obj and permissions.withheld_read(run, kind, namespace or "default")
  then return without_data(run, obj) end
  return obj
end

---kube.list.
---@param run uphook.Run
---@param kind string
---@param opts table|nil {namespace=, labels=}
---@return table[]
function H.kube_list(run, kind, opts)
  opts = checkopts(opts, { namespace = true, labels = true }, 2, "list")
  check_ref(kind, nil, opts.namespace, "list")
  checktype(opts.labels, "table", 2, "list", true)
  for k, v in pairs(opts.labels or {}) do
    if type(k) ~= "string" or type(v) ~= "string" then
      argerr(2, "list", "labels must map strings to strings")
    end
  end
  need_read(run, kind, opts.namespace, "kube.list of " .. kind)
  local objs = run.backend:list(kind, opts)
  if permissions.withheld_read(run, kind, opts.namespace) then
    local out = {}
    for i, o in ipairs(objs) do out[i] = without_data(run, o) end
    return out
  end
  return objs
end

--- Delete an object the caller read: the data-loss guard, the
--- permission, the journal (or, under plan, the record), the plan entry.
--- kube.delete and kube.prune both come here.
local function delete_object(run, prior, allow_data_loss, verb, reason)
  local short, md = prior.kind, prior.metadata
  if DATA_LOSS_KINDS[short] and allow_data_loss ~= true then
    error(string.format("%s refuses %s %s: it can lose data; pass "
      .. "{allow_data_loss = true} if the upgrade really needs it", verb,
      short, kinds.objname(prior)), 0)
  end
  need_kube(run, prior, verb)
  local key = ref(prior)
  local pk = pkey(prior.kind, md.name, md.namespace)
  run.deleted[pk] = prior
  if run.plan then
    run.planned[pk] = false
  else
    -- a data-loss delete is known only now: asked now (lua/cmd/confirm.lua)
    if DATA_LOSS_KINDS[short] and run.confirm then
      local lines, what = consent.data_loss(run.addon, prior, reason)
      local yes, why = run.confirm(lines, what, "data_loss")
      if not yes then
        error(string.format("%s was not confirmed (%s): nothing of it was "
          .. "deleted", what, why), 0)
      end
    end
    rollback.record(run, { op = "kube", ref = key, prior = prior,
      deleted = true })
    run.backend:delete(kinds.gvk(prior), md.name, md.namespace)
    rollback.changed(run)
  end
  plan.kube(run, "deleted", key, prior, nil, allow_data_loss, reason)
  return key
end

M.delete_object = delete_object   -- helm.upgrade's prune and hooks

---kube.delete: refuses the data-loss kinds unless allowed.
---@param run uphook.Run
---@param kind string
---@param name string
---@param namespace string|nil
---@param opts table|nil {allow_data_loss=}
---@return boolean deleted false when it was already absent
function H.kube_delete(run, kind, name, namespace, opts)
  check_ref(kind, name, namespace, "delete")
  opts = checkopts(opts, { allow_data_loss = true }, 4, "delete")
  local prior = H.kube_get(run, kind, name, namespace)
  if not prior then return false end
  delete_object(run, prior, opts.allow_data_loss, "kube.delete")
  return true
end

--- kube.prune's options, checked: the kinds, the label selector (default:
--- the addon's label), the refs to keep.
local function prune_opts(run, opts)
  checktype(opts, "table", 1, "prune")
  opts = checkopts(opts, { kinds = true, labels = true, namespace = true,
    keep = true, allow_data_loss = true }, 1, "prune")
  checktype(opts.kinds, "table", 1, "prune")
  if #opts.kinds == 0 or #opts.kinds > 64 then
    argerr(1, "prune", "kinds must list 1 to 64 kinds")
  end
  for i, k in ipairs(opts.kinds) do
    if type(k) ~= "string" or k == "" then
      argerr(1, "prune", "kinds[" .. i .. "] must be a kind such as "
        .. "\"Deployment\" or \"apps/v1/Deployment\"")
    end
  end
  checktype(opts.namespace, "string", 1, "prune", true)
  if opts.namespace then names.check_namespace(opts.namespace, "kube.prune") end
  checktype(opts.labels, "table", 1, "prune", true)
  local labels = opts.labels or { ["addon.microk8s.io/name"] = run.addon }
  if next(labels) == nil then
    argerr(1, "prune", "labels must select something (an empty selector "
      .. "would match every object)")
  end
  for k, v in pairs(labels) do
    if type(k) ~= "string" or type(v) ~= "string" then
      argerr(1, "prune", "labels must map strings to strings")
    end
  end
  checktype(opts.keep, "table", 1, "prune", true)
  local keep = {}
  for i, o in ipairs(opts.keep or {}) do
    local md = type(o) == "table" and (o.metadata or o)
    if type(md) ~= "table" or type(o.kind) ~= "string"
       or type(md.name) ~= "string" then
      argerr(1, "prune", "keep[" .. i .. "] must be an object or {kind=, "
        .. "name=, namespace=}")
    end
    keep[pkey(o.kind, md.name, md.namespace)] = true
  end
  return opts, labels, keep
end

--- Delete what the addon's new version no longer ships: every object of
--- `kinds` that the selector matches and that this run did not apply.
function H.kube_prune(run, opts)
  local labels, keep
  opts, labels, keep = prune_opts(run, opts)
  local reason = string.format("no longer in %s %s", run.addon, run.to)
  local deleted = {}
  for _, kind in ipairs(opts.kinds) do
    local ok, found = pcall(run.backend.list, run.backend, kind,
      { namespace = opts.namespace, labels = labels })
    if not ok then
      -- a kind the cluster does not serve (its CRD is gone) has nothing
      if not (type(found) == "table" and found.code == 404) then
        error(found, 0)
      end
      found = {}
    end
    table.sort(found, function(a, b)
      return kinds.objname(a) < kinds.objname(b)
    end)
    for _, o in ipairs(found) do
      local md = o.metadata
      local pk = pkey(o.kind, md.name, md.namespace)
      if not (run.applied[pk] or keep[pk] or run.planned[pk] == false
              or host_owned(o.kind, md.name, md.namespace)) then
        deleted[#deleted + 1] = delete_object(run, o, opts.allow_data_loss,
          "kube.prune", reason)
      end
    end
  end
  return deleted
end

--- Rollout rules, as kubectl's `rollout status` has them.
---@return boolean done, string status
local function rolled_out(obj)
  if not obj then return false, "absent" end
  local st, spec, md = obj.status or {}, obj.spec or {}, obj.metadata
  if (st.observedGeneration or 0) < (md.generation or 0) then
    return false, "waiting for the controller to observe generation "
      .. tostring(md.generation)
  end
  if obj.kind == "Deployment" then
    local want = spec.replicas or 1
    local upd, total = st.updatedReplicas or 0, st.replicas or 0
    local avail = st.availableReplicas or 0
    for _, c in ipairs(st.conditions or {}) do
      if c.type == "Progressing" and c.reason == "ProgressDeadlineExceeded"
      then return false, "progress deadline exceeded" end
    end
    if upd < want then
      return false, string.format("%d/%d replicas updated", upd, want)
    elseif total > upd then
      return false, string.format("%d old replicas pending termination",
        total - upd)
    elseif avail < upd then
      return false, string.format("%d/%d updated replicas available",
        avail, upd)
    end
    return true, string.format("%d/%d replicas updated and available",
      upd, want)
  elseif obj.kind == "DaemonSet" then
    local want = st.desiredNumberScheduled or 0
    local upd, avail = st.updatedNumberScheduled or 0, st.numberAvailable or 0
    if upd < want then
      return false, string.format("%d/%d pods updated", upd, want)
    elseif avail < want then
      return false, string.format("%d/%d updated pods available", avail, want)
    end
    return true, string.format("%d/%d pods updated and available", upd, want)
  elseif obj.kind == "StatefulSet" then
    local want = spec.replicas or 1
    local ready = st.readyReplicas or 0
    if ready < want then
      return false, string.format("%d/%d pods ready", ready, want)
    end
    if st.updateRevision and st.currentRevision ~= st.updateRevision then
      return false, "waiting for the partitioned roll out to finish"
    end
    return true, string.format("%d/%d pods ready at the new revision",
      ready, want)
  end
  error("kube.rollout: " .. tostring(obj.kind)
    .. " is not a Deployment, DaemonSet or StatefulSet", 0)
end
M.rolled_out = rolled_out

--- The kinds kube.rollout waits for (apps/v1; rolled_out's rules).
M.ROLLOUT_KINDS = { Deployment = true, DaemonSet = true, StatefulSet = true }

local function wait_timeout(run, opts, fname)
  local t = opts.timeout or 300
  if type(t) ~= "number" or t < 0 then
    argerr(4, fname, "timeout must be a non-negative number")
  end
  return math.min(t, run:remaining())
end

---kube.rollout: wait, renewing the Lease, until rolled out.
---@param run uphook.Run
---@param kind string
---@param name string
---@param namespace string|nil
---@param opts table|nil {timeout=}
---@return true
function H.kube_rollout(run, kind, name, namespace, opts)
  check_ref(kind, name, namespace, "rollout")
  opts = checkopts(opts, { timeout = true }, 4, "rollout")
  local timeout = wait_timeout(run, opts, "rollout")
  if run.plan then
    plan.wait(run, string.format("rollout of %s %s", kind,
      kinds.joinname(name, namespace)), timeout)
    return true
  end
  local status = "not observed"
  local what = string.format("the rollout of %s %s", kind,
    kinds.joinname(name, namespace))
  local ok, last = wait.run(run, what, timeout, function(w)
    return run.backend:watch(kind, name, namespace, function(obj)
      local done
      done, status = rolled_out(obj)
      w:see(status)
      if obj and run.report.progress then
        run.report:progress(string.format("%s %s: %s", kind, name, status))
      end
      return done
    end, timeout, w.fn)
  end)
  if not ok then
    hookerror.raise("Timeout", string.format("timeout after %gs waiting for "
      .. "the rollout of %s %s: %s", timeout, kind,
      kinds.joinname(name, namespace), last and status or "it does not exist"))
  end
  return true
end

---kube.wait: wait until opts.condition is True.
---@param run uphook.Run
---@param kind string
---@param name string
---@param namespace string|nil
---@param opts table {condition=, timeout=}
---@return true
function H.kube_wait(run, kind, name, namespace, opts)
  check_ref(kind, name, namespace, "wait")
  opts = checkopts(opts, { timeout = true, condition = true }, 4, "wait")
  checktype(opts.condition, "string", 4, "wait")
  local timeout = wait_timeout(run, opts, "wait")
  if run.plan then
    plan.wait(run, string.format("%s %s to be %s", kind,
      kinds.joinname(name, namespace), opts.condition), timeout)
    return true
  end
  local seen = "absent"
  local what = string.format("%s %s to be %s", kind,
    kinds.joinname(name, namespace), opts.condition)
  local ok = wait.run(run, what, timeout, function(w)
    return run.backend:watch(kind, name, namespace, function(obj)
      if not obj then seen = "absent"; return false end
      seen = "no " .. opts.condition .. " condition"
      for _, c in ipairs((obj.status or {}).conditions or {}) do
        if c.type == opts.condition then
          seen = opts.condition .. "=" .. tostring(c.status)
          w:see(seen)
          return c.status == "True"
        end
      end
      w:see(seen)
      return false
    end, timeout, w.fn)
  end)
  if not ok then
    hookerror.raise("Timeout", string.format("timeout after %gs waiting for "
      .. "%s %s to be %s (last seen: %s)", timeout, kind,
      kinds.joinname(name, namespace), opts.condition, seen))
  end
  return true
end

return M

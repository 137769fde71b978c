--- uphook.engine.prims: the broker side of every hook primitive
--- (docs/contract.md §4).
---
--- Each handler runs in the trusted parent. Policy is here, once, for
--- every backend: argument checks, permissions, the read-only rule of
--- detect/check/verify, plan recording, journaling, labels. The backend
--- only touches the world.
local rollback = require "uphook.engine.rollback"
local batch = require "uphook.engine.batch"
local plan = require "uphook.engine.plan"
local kinds = require "uphook.core.kinds"
local names = require "uphook.core.names"
local podsecurity = require "uphook.engine.podsecurity"
local errors = require "uphook.core.errors"
local lease = require "uphook.engine.lease"
local fieldset = require "uphook.core.fieldset"
local nodes = require "uphook.engine.nodes"
local consent = require "uphook.engine.consent"
local tables = require "uphook.core.tables"
local apierror = require "uphook.core.apierror"

local M = {}

local MUTATING = {
  ["kube.apply"] = true, ["kube.delete"] = true, ["kube.prune"] = true,
  ["net.download"] = true,
  ["config.write"] = true, ["config.remove"] = true,
  ["config.install"] = true, ["config.set_args"] = true,
  ["service.restart"] = true,
}

local DATA_LOSS_KINDS = kinds.DATA_LOSS

local function argerr(n, fname, msg)
  error(string.format("bad argument #%d to '%s' (%s)", n, fname, msg), 0)
end

local function checktype(v, want, n, fname, optional)
  if v == nil and optional then return end
  if type(v) ~= want then
    argerr(n, fname, want .. " expected, got " .. type(v))
  end
end

local function checkopts(opts, allowed, n, fname)
  if opts == nil then return {} end
  checktype(opts, "table", n, fname)
  for k in pairs(opts) do
    if not allowed[k] then
      argerr(n, fname, "unknown option '" .. tostring(k) .. "'")
    end
  end
  return opts
end

local function need(run, perm, what)
  if not run.perms[perm] then
    error(string.format('permission denied: %s needs "%s" in the hook\'s '
      .. 'permissions', what, perm), 0)
  end
end

--- The host's own objects: the state ConfigMaps and Leases
--- uphook-<addon> in kube-system (docs/state.md). A hook writes none of
--- them, its own addon's included: the engine writes its state.
local HOST_NS, HOST_KINDS = "kube-system", { ConfigMap = true, Lease = true }
local function host_owned(kind, name, ns)
  return HOST_KINDS[names.short_kind(kind)] and ns == HOST_NS
    and type(name) == "string" and name:sub(1, 7) == "uphook-"
end

--- Namespaces whose names are permission words: only kube:* covers them.
local RESERVED_NS = { cluster = true, privileged = true }

--- Is the hook allowed to change this object? An object without a
--- namespace goes to `default`, as kubectl sends it, and needs
--- kube:default.
local function need_kube(run, obj, verb)
  local scope = run.backend.namespaced and
    run.backend:namespaced(obj.apiVersion, obj.kind)
  local ns = obj.metadata and obj.metadata.namespace
  local what = string.format("%s of %s %s", verb, obj.kind,
    kinds.objname(obj))
  if scope == false or (scope == nil and not ns) then
    need(run, "kube:cluster", what)
  else
    ns = ns or "default"
    if RESERVED_NS[ns] then
      -- kube:cluster and kube:privileged are not namespace permissions
      need(run, "kube:*", what)
    end
    if host_owned(obj.kind, obj.metadata.name, ns) then
      error(string.format("%s refused: %s %s/%s belongs to uphook (the "
        .. "state and lock of an addon); hooks do not write it",
        verb, obj.kind, ns, obj.metadata.name), 0)
    end
    if not run.perms["kube:*"] then need(run, "kube:" .. ns, what) end
  end
end

--- Reads of kinds whose contents are credentials need the namespace's
--- permission, where Kubernetes' own `view` role stops: Secrets (service
--- account tokens are Secrets, or TokenRequests no primitive can make).
--- Other objects are readable as far as the kubeconfig allows.
local CREDENTIAL_KINDS = { Secret = true }
local function need_read(run, kind, ns, what)
  if not CREDENTIAL_KINDS[names.short_kind(kind)] or run.perms["kube:*"]
  then return end
  if ns == nil then
    need(run, "kube:*", what .. " of every namespace")
  end
  need(run, "kube:" .. ns, what)
end

--- Under plan nothing changes, so a delete followed by an apply of the
--- same object (how immutable fields are migrated) must be simulated:
--- run.planned[key] = false (would be deleted) or the object (would be
--- recreated).
local function pkey(kind, name, namespace)
  return names.short_kind(kind) .. "/" .. (namespace or "") .. "/" .. name
end

--- Pods and pod templates outside the Pod Security Standards baseline,
--- and RBAC that hands out everything, need kube:privileged as well as
--- their namespace's permission; the plan names them and why.
local function need_privileged(run, obj, pending)
  local why = podsecurity.reasons(obj, function(kind, name, ns)
    -- a role applied before in the same batch, not sent yet
    local p = pending and pending[pkey(kind, name, ns)]
    if p then return p end
    if run.plan and run.planned[pkey(kind, name, ns)] ~= nil then
      return run.planned[pkey(kind, name, ns)] or nil
    end
    return run.backend:get(kind, name, ns)
  end)
  if #why == 0 then return end
  local what = string.format("%s %s: %s", obj.kind, kinds.objname(obj),
    table.concat(why, "; "))
  need(run, podsecurity.PERMISSION, "kube.apply of " .. what)
  plan.note(run, "privileged", what)
end

--- kind, name, namespace arguments of kube.*: checked as the API server
--- checks them, before any request is built from them.
local function check_ref(kind, name, namespace, fname)
  checktype(kind, "string", 1, fname)
  names.check_kind(kind, "kube." .. fname)
  if name ~= nil or fname ~= "list" then
    checktype(name, "string", 2, fname)
    names.check_name(kind, name, "kube." .. fname)
  end
  if namespace ~= nil then
    checktype(namespace, "string", 3, fname)
    names.check_namespace(namespace, "kube." .. fname)
  end
end

M.MAX_OBJECTS = 4096   -- objects in one kube.apply

--- Object list from a YAML string, one object, or a list of objects.
local function objects_of(run, objs)
  if type(objs) == "string" then
    objs = run.yaml.decode_all(objs)
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

local function stamp(run, obj, namespace)
  local md = obj.metadata
  if md.namespace == nil then
    -- as kubectl does: a namespaced object without one goes to default
    local scoped = run.backend.namespaced and
      run.backend:namespaced(obj.apiVersion, obj.kind)
    if scoped or (scoped == nil and namespace) then
      md.namespace = namespace or "default"
    end
  end
  md.labels = md.labels ~= run.null and md.labels or {}
  md.labels["addon.microk8s.io/name"] = run.addon
  md.annotations = md.annotations ~= run.null and md.annotations or {}
  md.annotations["addon.microk8s.io/version"] = run.to
  -- an object read back carries the server's record of ownership, which
  -- an apply may not send (the API server answers 400)
  md.managedFields = nil
end

--- The client-side apply upgrade (docs/internals.md, "Field ownership"):
--- on uphook's first apply to an object `kubectl apply` made client side
--- (`microk8s enable` does), the fields of its managers move to uphook,
--- as `kubectl apply --server-side` does with client-go's csaupgrade, so
--- that the fields a new version no longer sets go. The new managedFields,
--- or nil when there is nothing to move.
local function csa_upgrade(prior)
  local mf = prior and prior.metadata and prior.metadata.managedFields
  if type(mf) ~= "table" then return nil end
  local csa = fieldset.csa_managers(mf)
  if next(csa) == nil then return nil end
  return fieldset.upgrade(mf, csa, kinds.FIELD_MANAGER)
end

local function ref(obj)
  return { apiVersion = obj.apiVersion, kind = obj.kind,
           name = obj.metadata.name, namespace = obj.metadata.namespace }
end

local H = {}   -- handlers by primitive name


-- One object of a kube.apply batch, stamped and checked, with its prior.
local function apply_item(run, obj, opts, reader, pending)
  stamp(run, obj, opts.namespace)
  need_kube(run, obj, "kube.apply")
  need_privileged(run, obj, pending)
  local key = ref(obj)
  local pk = pkey(obj.kind, key.name, key.namespace)
  pending[pk] = obj
  local it = { obj = obj, key = key, pk = pk }
  if run.plan and run.planned[pk] ~= nil then
    it.planned = true
  else
    it.prior = reader:get(obj)
    it.upgraded = csa_upgrade(it.prior)
  end
  return it
end

-- The client-side apply upgrades of `up` (items with it.upgraded), each
-- a JSON patch of managedFields under the resourceVersion it was read
-- at. One refused as stale (a controller wrote the object since) is read
-- again, its upgrade made anew from what it is now, and sent again, as
-- kubectl's migrateToSSAIfNecessary does, at most apierror.CONFLICT_TRIES
-- times in all. Each item's it.current becomes what the server stores.
local function csa_upgrades(run, up)
  for try = 1, apierror.CONFLICT_TRIES do
    local reqs = {}
    for i, it in ipairs(up) do
      reqs[i] = { kind = kinds.gvk(it.obj), name = it.key.name,
        namespace = it.key.namespace, managed_fields = it.upgraded,
        resource_version = it.current.metadata.resourceVersion }
    end
    local done, again = batch.set_managed_fields(run.backend, reqs), {}
    for i, it in ipairs(up) do
      local r = done[i]
      if r and r.ok then
        it.current = r.stored
      elseif r and not (apierror.is_conflict(r.error)
                        and try < apierror.CONFLICT_TRIES) then
        error(r.error, 0)
      else   -- stale, or never sent (one by one, after a stale one)
        if r then
          it.current = run.backend:get(reqs[i].kind, it.key.name,
            it.key.namespace)
          it.upgraded = csa_upgrade(it.current)
        end
        if it.upgraded then again[#again + 1] = it end
      end
    end
    if #again == 0 then return end
    up = again
  end
end

-- The request of each item: a server dry run under plan; else, after the
-- batch's priors are journaled, the client-side apply upgrade first.
local function apply_requests(run, items)
  local send = {}
  if not run.plan then
    local recs = {}
    for _, it in ipairs(items) do
      recs[#recs + 1] = { op = "kube", ref = it.key, prior = it.prior,
        applied = it.obj }
    end
    rollback.record_all(run, recs)
  end
  local up = {}
  for _, it in ipairs(items) do
    it.current = it.prior
    if not run.plan and it.upgraded then up[#up + 1] = it end
  end
  if #up > 0 then csa_upgrades(run, up) end
  for _, it in ipairs(items) do
    if run.plan and not it.planned then
      it.opts = { dry_run = true, prior = it.prior or false,
        managed_fields = it.upgraded }
    elseif not run.plan then
      it.opts = { prior = it.current or false }
    end
    if it.opts then send[#send + 1] = it end
  end
  return send
end

-- A batch of kube.apply: checked, its priors read and journaled (one
-- fdatasync), sent together, then what the server stored journaled (one
-- fdatasync) before each counts as changed, in order. The first failure
-- is raised once every object of the batch that changed is journaled
-- (sent in parallel, objects after it may have changed too).
local function apply_batch(run, objs, opts, reader, results)
  local items, pending = {}, {}
  for i, obj in ipairs(objs) do
    items[i] = apply_item(run, obj, opts, reader, pending)
  end
  local send = apply_requests(run, items)
  local answers = #send > 0 and batch.send(run.backend, send) or {}
  for i, it in ipairs(send) do it.answer = answers[i] end
  local made, failed = {}, nil
  for _, it in ipairs(items) do
    local prior, stored, action = it.prior, nil, nil
    if it.planned then
      prior, stored, action = nil, it.obj, "created"
      run.planned[it.pk] = it.obj
    elseif it.answer == nil then
      -- never sent: a failure before it stopped the batch
    elseif it.answer.ok then
      stored, action = it.answer.stored, it.answer.action
      if not run.plan then
        if it.upgraded and action == "unchanged" then action = "configured" end
        made[#made + 1] = rollback.made_record(it.key, stored, it.obj)
      end
    else
      failed = failed or it.answer.error
    end
    if action then
      run.applied[pkey(it.obj.kind, it.key.name, stored and stored.metadata
        and stored.metadata.namespace or it.key.namespace)] = true
      -- a re-created object shows what changed since it was deleted
      local before = prior or (action == "created" and run.deleted[it.pk])
      plan.kube(run, action, it.key, before or nil, stored)
      if not failed then
        results[#results + 1] = { kind = it.obj.kind, name = it.key.name,
          namespace = it.key.namespace, action = action }
      end
    end
  end
  rollback.record_all(run, made)
  for _ = 1, #made do rollback.changed(run) end
  if failed then error(failed, 0) end
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
  for _, objs_b in ipairs(batch.split(list)) do
    apply_batch(run, objs_b, opts, reader, results)
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
  if run.plan then
    local planned = run.planned[pkey(kind, name, namespace)]
    if planned ~= nil then return planned or nil end
  end
  return run.backend:get(kind, name, namespace)
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
  return run.backend:list(kind, opts)
end

---kube.delete: refuses the data-loss kinds unless allowed.
---@param run uphook.Run
---@param kind string
---@param name string
---@param namespace string|nil
---@param opts table|nil {allow_data_loss=}
---@return boolean deleted false when it was already absent
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
      local yes, why = run.confirm(lines, what)
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
  local ok, last = run.backend:watch(kind, name, namespace, function(obj)
    local done
    lease.renew(run)
    done, status = rolled_out(obj)
    if obj and run.report.progress then
      run.report:progress(string.format("%s %s: %s", kind, name, status))
    end
    return done
  end, timeout)
  if not ok then
    errors.raise("Timeout", string.format("timeout after %gs waiting for "
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
  local ok = run.backend:watch(kind, name, namespace, function(obj)
    lease.renew(run)
    if not obj then seen = "absent"; return false end
    seen = "no " .. opts.condition .. " condition"
    for _, c in ipairs((obj.status or {}).conditions or {}) do
      if c.type == opts.condition then
        seen = opts.condition .. "=" .. tostring(c.status)
        return c.status == "True"
      end
    end
    return false
  end, timeout)
  if not ok then
    errors.raise("Timeout", string.format("timeout after %gs waiting for "
      .. "%s %s to be %s (last seen: %s)", timeout, kind,
      kinds.joinname(name, namespace), opts.condition, seen))
  end
  return true
end

--- nodes ---------------------------------------------------------------

local function node_entry(n)
  local st, md = n.status or {}, n.metadata or {}
  local labels = md.labels or {}
  local e = { name = md.name, labels = labels, roles = {},
    arch = labels["kubernetes.io/arch"], os = labels["kubernetes.io/os"],
    kubelet_version = (st.nodeInfo or {}).kubeletVersion,
    unschedulable = (n.spec or {}).unschedulable == true,
    ready = false, addresses = {} }
  for k in pairs(labels) do
    local role = k:match("^node%-role%.kubernetes%.io/(.+)$")
    if role then e.roles[#e.roles + 1] = role end
  end
  table.sort(e.roles)
  for _, c in ipairs(st.conditions or {}) do
    if c.type == "Ready" then e.ready = c.status == "True" end
  end
  for _, a in ipairs(st.addresses or {}) do
    e.addresses[#e.addresses + 1] = { type = a.type, address = a.address }
  end
  return e
end

---nodes.list.
---@param run uphook.Run
---@return table[] nodes in the shape of docs/contract.md §4
function H.nodes_list(run)
  local out = {}
  for _, n in ipairs(run.backend:list("v1/Node", {})) do
    out[#out + 1] = node_entry(n)
  end
  return out
end

---nodes.this: the node named (or labelled) as this host.
---@param run uphook.Run
---@return table node
function H.nodes_this(run)
  local host = run.hostname
  local nodes = run.backend:list("v1/Node", {})
  for _, n in ipairs(nodes) do
    local labels = n.metadata.labels or {}
    if n.metadata.name == host or labels["kubernetes.io/hostname"] == host
    then return node_entry(n) end
  end
  error(string.format("nodes.this: no node is named %q or labelled "
    .. "kubernetes.io/hostname=%s (%d nodes)", tostring(host),
    tostring(host), #nodes), 0)
end

---nodes.kubelet_config: a node's running kubelet configuration (configz).
---@param run uphook.Run
---@param name string the node's name
---@return table kubeletconfig
function H.nodes_kubelet_config(run, name)
  checktype(name, "string", 1, "kubelet_config")
  local kc, err = run.backend:kubelet_config(name)
  if type(kc) ~= "table" then
    error(string.format("nodes.kubelet_config(%s): %s", name,
      type(err) == "table" and tostring(err.message) or tostring(err)), 0)
  end
  return kc
end

---nodes.resolv_conf: this node's resolv.conf with upstream nameservers.
---@param run uphook.Run
---@return string|nil path
function H.nodes_resolv_conf(run)
  return nodes.resolv_conf(run)
end

--- Which nodes a change goes to: "all" (the default), "this", and for a
--- restart "changed" (the nodes whose args this run changed).
local function scope(opts, n, fname, allowed)
  local v = opts.nodes
  if v == nil then return "all" end
  if not allowed[v] then
    local list = {}
    for k in pairs(allowed) do list[#list + 1] = '"' .. k .. '"' end
    table.sort(list)
    argerr(n, fname, "nodes must be " .. table.concat(list, " or ")
      .. ", got " .. tostring(v))
  end
  return v
end

local function renew(run)
  return function() lease.renew(run) end
end

--- Restart on another node: journaled, then the agent's restart, then
--- the node must be Ready again with its kubelet answering.
local function restart_remote(run, name, n)
  plan.restart(run, name, n.name, n.address)
  if run.plan then return end
  local rec = { op = "node_restart", node = n.name, address = n.address,
    service = name }
  rollback.record(run, rec)
  local req = nodes.restart_request(run, n.name, n.address, name)
  local r = nodes.send(run, { req })[1]
  if not r.ok then
    rec.unsent = nodes.undelivered(r)
    error(string.format("service.restart(%s): %s", name,
      nodes.failure(req, r)), 0)
  end
  rollback.changed(run)
  nodes.wait_ready(run, n.name, run:remaining(), renew(run))
end

---service.restart: on every node (opts.nodes), one node at a time, this
---node last; journaled, so a rollback restarts it again.
---@param run uphook.Run
---@param name string kubelite or microk8s.daemon-<name>
---@param opts table|nil {nodes = "all"|"this"|"changed"}
function H.service_restart(run, name, opts)
  checktype(name, "string", 1, "restart")
  if name ~= "kubelite" and (#name > 128
     or not name:find("^microk8s%.daemon%-[%w%-]+$")) then
    argerr(1, "restart", "kubelite or a microk8s.daemon-* service expected")
  end
  opts = checkopts(opts, { nodes = true }, 2, "restart")
  local where = scope(opts, 2, "restart", { all = true, this = true,
    changed = true })
  need(run, "restart:" .. name, "service.restart(" .. name .. ")")
  local others = where ~= "this" and nodes.others(run) or {}
  -- one node at a time, this node last: restarting every control plane
  -- at once would take the cluster down
  for _, n in ipairs(others) do
    if where ~= "changed" or run.changed_nodes[n.name] then
      restart_remote(run, name, n)
    end
  end
  if where == "changed" and not run.changed_here then return end
  local this = #others > 0 and run.topology.this or {}
  plan.restart(run, name, this.name, this.address)
  if run.plan then return end
  rollback.record(run, { op = "restart", service = name })
  run.backend:restart(name)
  rollback.changed(run)
  if name == "kubelite" then
    nodes.after_local_restart(run, run:remaining(), renew(run))
  end
end

--- files -----------------------------------------------------------------

local ROOTS = { args = true, bin = true, addon = true, state = true }

--- Split "root:rel" and check it; returns root name, root dir, rel.
M.MAX_PATH = 4096

local function split_path(run, path, n, fname)
  checktype(path, "string", n, fname)
  if #path > M.MAX_PATH then
    argerr(n, fname, string.format("path longer than %d bytes (%d)",
      M.MAX_PATH, #path))
  end
  local root, rel = path:match("^(%a+):(.*)$")
  if not root or not ROOTS[root] then
    argerr(n, fname, "path must be args:, bin:, addon: or state:, got "
      .. names.quote(path))
  end
  if rel == "" or rel:sub(1, 1) == "/" or rel:find("\0", 1, true) then
    error(string.format("%s: path leaves its root: %s", fname, path), 0)
  end
  for part in rel:gmatch("[^/]+") do
    if part == ".." then
      error(string.format("%s: path leaves its root: %s", fname, path), 0)
    end
  end
  return root, run.roots[root], rel
end

--- A failed operation on a file: an error value naming it (`root:rel`).
local function fs_ok(path, v, err, ...)
  if v == nil and err then errors.raise("IOError", err, { path = path }) end
  return v, err, ...
end

--- A failed transfer: an error value with the URL and, when the server
--- answered, its HTTP status.
local function net_ok(url, v, err, reason, status)
  if v == nil and err then
    errors.raise(reason or "NetworkError", err, { url = url,
      code = math.tointeger(status) })
  end
  return v
end

--- The permission to change a file: args:<service> or bin:<file>.
local function need_write(run, root, rel, fname)
  if root == "state" then return end
  if root == "addon" then
    error(fname .. ": addon: files are read-only", 0)
  end
  local top = rel:match("^[^/]+")
  need(run, root .. ":" .. top, fname .. "(" .. root .. ":" .. rel .. ")")
end

--- On a cluster of several nodes an args: file is changed on every node
--- with config.set_args; a write of this node's copy alone would make the
--- nodes disagree.
local function refuse_args_write(run, root, rel, fname)
  if root ~= "args" or fname == "config.set_args" then return end
  local others = nodes.others(run)
  if #others > 0 then
    error(string.format("%s(args:%s) is refused on a cluster of %d nodes: "
      .. "it would change this node only; use config.set_args, which "
      .. "changes every node", fname, rel, #others + 1), 0)
  end
end

--- This node's name when the cluster has other nodes: the plan says
--- that an args: or bin: change is made on this node (a bin: change only
--- ever is).
local function node_label(run, root)
  if root ~= "args" and root ~= "bin" then return nil end
  local top = run.topology or nodes.topology(run)
  return #top.others > 0 and top.this and top.this.name or nil
end

---config.read.
---@param run uphook.Run
---@param path string root:relative
---@return string|nil content nil when absent
function H.config_read(run, path)
  local _, dir, rel = split_path(run, path, 1, "read")
  return fs_ok(path, run.fs.read(dir, rel))
end

--- Journal, then write (or only record under plan).
--- The mode a write leaves: the hook's, else the existing file's (which
--- also keeps its owner and group: host/fs.c), else 0644. A mode the hook
--- gives may not let other users write: never world-writable, and
--- group-writable only when the file's group is the snap's (the
--- cluster-agent writes args files 0660, group microk8s).
local SNAP_GROUPS = { microk8s = true, snap_microk8s = true }
local function file_mode(path, st, mode, fname)
  if mode == nil then return st and st.mode or "0644" end
  local m = tonumber(mode, 8)
  if m & 2 ~= 0 then
    error(string.format("%s(%s): mode %s is world-writable", fname, path,
      mode), 0)
  end
  if m & 16 ~= 0 and not (st and SNAP_GROUPS[st.group]) then
    error(string.format("%s(%s): mode %s is group-writable, and the file's "
      .. "group is %s, not the snap's (microk8s or snap_microk8s)", fname,
      path, mode, st and tostring(st.group or st.gid) or "root (a new file)"),
      0)
  end
  return string.format("%04o", m)
end
M.file_mode = file_mode

--- What the addon's state: files may take (--state-quota, default 16 MiB),
--- each file and folder charged at least one 4 KiB block, checked before
--- the write and under plan alike: a hook with no permissions cannot fill
--- the node's disk.
M.STATE_QUOTA = 16 << 20
local function blocks(n)
  if n == nil then return 0 end
  return math.max(4096, (n + 4095) // 4096 * 4096)
end

local function charge_state(run, dir, rel, old, new, fname)
  local quota = run.state_quota or M.STATE_QUOTA
  if not run.state_used then
    run.state_used = fs_ok("state:", run.fs.usage(dir, quota))
  end
  -- a new file may create a folder for each component of its path
  local folders = old == nil and new ~= nil and select(2, rel:gsub("/", ""))
    or 0
  local used = run.state_used - blocks(old) + blocks(new) + folders * 4096
  if new ~= nil and used > quota then
    errors.raise("QuotaExceeded", string.format("%s(state:%s): the addon's "
      .. "state: files would take %d bytes, more than --state-quota (%d "
      .. "bytes)", fname, rel, used, quota), { path = "state:" .. rel })
  end
  run.state_used = used
end

local function change_file(run, root, dir, rel, new, mode, fname)
  local path = root .. ":" .. rel
  local prior = fs_ok(path, run.fs.read(dir, rel))
  local st = prior and run.fs.stat(dir, rel)
  mode = new ~= nil and file_mode(path, st, mode, fname) or nil
  local node = node_label(run, root)
  if prior == new and (st and st.mode) == mode then
    plan.file(run, path, prior, new, mode, node)
    return false
  end
  if root == "state" then
    charge_state(run, dir, rel, prior and #prior, new and #new, fname)
  end
  if not run.plan then
    rollback.record(run, { op = "file", root = root, path = rel,
      prior = prior, mode = st and st.mode })
    if new == nil then
      fs_ok(path, run.fs.remove(dir, rel))
    else
      fs_ok(path, run.fs.write(dir, rel, new, mode))
    end
    rollback.changed(run)
  end
  plan.file(run, path, prior, new, mode, node)
  return true
end

---config.write: journaled, atomic.
---@param run uphook.Run
---@param path string root:relative
---@param content string
---@param opts table|nil {mode=}
function H.config_write(run, path, content, opts)
  local root, dir, rel = split_path(run, path, 1, "write")
  checktype(content, "string", 2, "write")
  opts = checkopts(opts, { mode = true }, 3, "write")
  if opts.mode ~= nil and (type(opts.mode) ~= "string"
     or not opts.mode:match("^0?[0-7][0-7][0-7]$")) then
    argerr(3, "write", "mode must be an octal string like \"0644\"")
  end
  need_write(run, root, rel, "config.write")
  refuse_args_write(run, root, rel, "config.write")
  change_file(run, root, dir, rel, content, opts.mode, "config.write")
end

---config.remove.
---@param run uphook.Run
---@param path string root:relative
---@return boolean removed false when absent
function H.config_remove(run, path)
  local root, dir, rel = split_path(run, path, 1, "remove")
  need_write(run, root, rel, "config.remove")
  refuse_args_write(run, root, rel, "config.remove")
  if fs_ok(path, run.fs.read(dir, rel)) == nil then return false end
  change_file(run, root, dir, rel, nil, nil, "config.remove")
  return true
end

---config.args: the flags of an args file, this node's or, as well as
---uphook can know them, another node's.
---@param run uphook.Run
---@param service string
---@param node string|nil a node's name (default: this node)
---@return table<string, string|true> values
---@return table<string, "read"|"assumed"> how
function H.config_args(run, service, node)
  checktype(service, "string", 1, "args")
  checktype(node, "string", 2, "args", true)
  local _, dir, rel = split_path(run, "args:" .. service, 1, "args")
  local here = run.argsfile.parse(fs_ok("args:" .. service,
    run.fs.read(dir, rel)) or "")
  local top = nodes.topology(run)
  if node == nil or (top.this and top.this.name == node)
     or (not top.this and node == run.hostname) then
    local how = {}
    for k in pairs(here) do how[k] = "read" end
    return here, how
  end
  if not top.names[node] then
    error(string.format("config.args(%s, %s): no node is named %s",
      service, node, node), 0)
  end
  return nodes.view(run, service, node, here)
end

--- This node's share of a set_args on several nodes, as a node entry
--- (the file's own diff is in the plan too).
local function this_node_entry(run, service, old, new)
  local a, b = run.argsfile.parse(old), run.argsfile.parse(new)
  local e = { node = run.topology.this.name,
    address = run.topology.this.address, service = service, changes = {},
    this = true }
  local flags = {}
  for k in pairs(a) do flags[k] = true end
  for k in pairs(b) do flags[k] = true end
  for _, flag in ipairs(nodes.sorted_keys(flags)) do
    if nodes.differ(a[flag], b[flag]) then
      e.changes[#e.changes + 1] = { flag = flag, prior = a[flag] or false,
        how = "read", new = b[flag] or false }
    end
  end
  plan.node_args(run, e)
end

--- Journal every node's change, then send them all at once (the live
--- backend in parallel); a failure names each node it happened on.
local function send_remote(run, list)
  local reqs, recs = {}, {}
  for i, e in ipairs(list) do
    recs[i] = { op = "node_args", node = e.node, address = e.address,
      service = e.service, prior = e.prior, how = e.how, new = e.new }
    reqs[i] = nodes.args_request(run, e.node, e.address, e.service, e.new)
  end
  rollback.record_all(run, recs)
  local bad = {}
  for i, r in ipairs(nodes.send(run, reqs)) do
    if r.ok then
      run.changed_nodes[list[i].node] = true
      rollback.changed(run)
    else
      recs[i].unsent = nodes.undelivered(r)
      bad[#bad + 1] = nodes.failure(reqs[i], r)
    end
  end
  if #bad > 0 then
    error("config.set_args(" .. list[1].service .. "): "
      .. table.concat(bad, "; "), 0)
  end
end

---config.set_args: edit an args file on every node (opts.nodes), keeping
---this node's other lines; other nodes through their cluster-agent.
---@param run uphook.Run
---@param service string
---@param changes table<string, string|boolean>
---@param opts table|nil {nodes = "all"|"this", assume = boolean}
---@return boolean changed any node's file
function H.config_set_args(run, service, changes, opts)
  checktype(service, "string", 1, "set_args")
  checktype(changes, "table", 2, "set_args")
  for k, v in pairs(changes) do
    if type(k) ~= "string" or not k:match("^%-%-[%w][%w%-_.]*$") then
      argerr(2, "set_args", "keys must be flags like \"--cluster-dns\", got "
        .. tostring(k))
    end
    if type(v) ~= "string" and type(v) ~= "boolean" then
      argerr(2, "set_args", "value of " .. k
        .. " must be a string, true or false")
    end
  end
  opts = checkopts(opts, { nodes = true, assume = true }, 3, "set_args")
  checktype(opts.assume, "boolean", 3, "set_args", true)
  local where = scope(opts, 3, "set_args", { all = true, this = true })
  local root, dir, rel = split_path(run, "args:" .. service, 1, "set_args")
  need_write(run, root, rel, "config.set_args")
  local old = fs_ok("args:" .. service, run.fs.read(dir, rel)) or ""
  local new, changed = run.argsfile.edit(old, changes)
  local others = where == "all" and nodes.others(run) or {}
  if changed then
    change_file(run, root, dir, rel, new, nil, "config.set_args")
    run.changed_here = true
    if #others > 0 then this_node_entry(run, service, old, new) end
  end
  if #others == 0 then return changed end
  local list = nodes.plan_args(run, others, service, changes,
    run.argsfile.parse(old), opts.assume)
  for _, e in ipairs(list) do
    plan.node_args(run, e)
    if run.plan then run.changed_nodes[e.node] = true end
  end
  if not run.plan and #list > 0 then send_remote(run, list) end
  return changed or #list > 0
end

--- downloads -----------------------------------------------------------

--- The hosts the hook declared. Entries are "host" (any port) or
--- "host:port"; "net:http://host" also allows plain http.
local function allowed_hosts(run)
  local https, http = {}, {}
  for p in pairs(run.perms) do
    local h = p:match("^net:http://(.+)$")
    if h then http[#http + 1] = h:lower()
    else
      h = p:match("^net:(.+)$")
      if h then https[#https + 1] = h:lower() end
    end
  end
  return https, http
end

--- May the hook reach url? The rule has one home, host/http_allow.c,
--- which host/http.c applies again to every redirect target.
local function need_net(run, url, fname)
  checktype(url, "string", 1, fname)
  local https, http = allowed_hosts(run)
  local ok, why, perm = run.http.allowed(url, { hosts = https,
    http_hosts = http })
  if ok then return end
  if perm then need(run, perm, fname .. "(" .. url .. ")") end
  error(string.format("%s(%s): %s", fname, url, why), 0)
end

--- Under plan a fetch is a read, and is made: the plan shows each one
--- (recorded before the request leaves), so that no request goes
--- anywhere the plan does not show.
local function shown(run, url)
  if run.plan then plan.note(run, "fetch", url) end
end

local function check_max(opts, fname)
  local m = opts.max_bytes
  if m ~= nil and (math.type(m) ~= "integer" or m <= 0) then
    argerr(2, fname, "max_bytes must be a positive integer")
  end
end

local function transfer_opts(run, url, opts, max)
  local https, http = allowed_hosts(run)
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
  shown(run, sums_url)
  local text = net_ok(sums_url, run.net:fetch(transfer_opts(run, sums_url, {},
    1 << 20)))
  -- the file name: after the last "/", before any query (linear patterns)
  local file = (url:gsub("[?#].*$", "")):match("^.*/([^/]+)$") or ""
  local sum, err = run.http.checksum_for(text, file)
  if not sum then
    error(string.format("net.download(%s): %s %s", url, err, sums_url), 0)
  end
  return sum
end

--- Under `plan --plan-fetch`: does the URL answer a HEAD?
local function probe(run, url, entry)
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

---hash.file of a root:path or a download's token.
---@param run uphook.Run
---@param path string
---@return string hex
function H.hash_file(run, path)
  checktype(path, "string", 1, "file")
  local abs, sum = cache_file(run, path)
  if abs then
    if run.plan then return sum end
    return fs_ok(path, run.hash.file(abs))
  end
  local _, dir, rel = split_path(run, path, 1, "file")
  return fs_ok(path, run.fs.hash(dir, rel))
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
  opts = checkopts(opts, { mode = true }, 3, "install")
  if opts.mode ~= nil and (type(opts.mode) ~= "string"
     or not opts.mode:match("^0?[0-7][0-7][0-7]$")) then
    argerr(3, "install", "mode must be an octal string like \"0755\"")
  end
  need_write(run, root, rel, "config.install")
  refuse_args_write(run, root, rel, "config.install")
  local path = root .. ":" .. rel
  local st = run.fs.stat(dir, rel)
  local mode = file_mode(path, st, opts.mode, "config.install")
  if root == "state" then
    local size = run.plan and 0 or (run.fs.stat(src:match("^(.*)/[^/]+$"),
      src:match("([^/]+)$")) or {}).size
    charge_state(run, dir, rel, st and st.size, size or 0, "config.install")
  end
  plan.install(run, downloaded, path, mode, node_label(run, root))
  if run.plan then return end
  rollback.record_backup(run, root, dir, rel)
  -- the copy is verified against the token's sum (the cache is checked
  -- again here, whoever could write it: docs/security.md)
  fs_ok(root .. ":" .. rel, run.fs.install(src, dir, rel, mode,
    downloaded:match("^cache:(%x+)$"):lower()))
  rollback.changed(run)
end

--- addon, log, internal ----------------------------------------------------

---addon.read.
---@param run uphook.Run
---@param rel string a path in the addon folder
---@return string
function H.addon_read(run, rel)
  checktype(rel, "string", 1, "read")
  local _, dir, r = split_path(run, "addon:" .. rel, 1, "addon.read")
  local s = fs_ok("addon:" .. rel, run.fs.read(dir, r))
  if s == nil then
    error(string.format("addon.read: %s has no file %s", run.addon, rel), 0)
  end
  return s
end

--- What a hook may log in one run: every message is cut at LOG_LINE
--- bytes, and past LOG_LINES messages or LOG_BYTES in all the rest is
--- dropped (one warning says so), so neither the report, the plan's
--- steps nor the terminal grow with what the hook sends.
M.LOG_LINE, M.LOG_LINES, M.LOG_BYTES = 4096, 20000, 4 << 20

local function log_budget(run, msg)
  msg = tostring(msg)
  if #msg > M.LOG_LINE then
    msg = msg:sub(1, M.LOG_LINE) .. string.format(" ... (%d bytes)", #msg)
  end
  local used = run.logged or { lines = 0, bytes = 0 }
  run.logged = used
  if used.dropped then return nil end
  used.lines, used.bytes = used.lines + 1, used.bytes + #msg
  if used.lines > M.LOG_LINES or used.bytes > M.LOG_BYTES then
    used.dropped = true
    run.report:log("warn", string.format("the hook logged more than %d "
      .. "lines or %d MiB; the rest of its log is dropped", M.LOG_LINES,
      M.LOG_BYTES >> 20))
    return nil
  end
  return msg
end

for _, level in ipairs { "info", "warn", "step" } do
  H["log_" .. level] = function(run, msg)
    msg = log_budget(run, msg)
    if not msg then return end
    run.report:log(level, msg)
    if level == "step" then plan.step(run, msg)
    else plan.log(run, level, msg) end
  end
end

---The child's sleep: on the backend's clock, within the deadline.
---@param run uphook.Run
---@param seconds number
function H.__uphook_sleep(run, seconds)
  checktype(seconds, "number", 1, "sleep")
  run.backend:sleep(math.max(0, math.min(seconds, run:remaining())))
end

--- Module names: dotted identifiers (linear checks, at most 256 bytes).
---@param run uphook.Run
---@param name string
---@return string|nil source
---@return string|nil chunkname
function H.__uphook_require(run, name)
  checktype(name, "string", 1, "require")
  if #name > 256 or not name:find("^[%w_][%w_.]*$")
     or name:find("..", 1, true) then
    return nil
  end
  local rel = name:gsub("%.", "/") .. ".lua"
  local src = run.fs.read(run.roots.addon, rel)
  if not src then return nil end
  return src, "@" .. run.roots.addon .. "/" .. rel
end

--- Only `uphook test` records the calls (env:calls), and only so much:
--- CALLS_MAX calls, and their arguments while they total under
--- CALLS_BYTES (tables.weight; past it a call is kept with args = {}).
M.CALLS_MAX, M.CALLS_BYTES = 10000, 16 << 20

---Record one call for env:calls (bounded).
---@param run uphook.Run
---@param name string the primitive
---@param args table its arguments
function M.record_call(run, name, args)
  local calls = run.calls
  if #calls >= M.CALLS_MAX then return end
  local left = M.CALLS_BYTES - (calls.bytes or 0)
  local w = left > 0 and tables.weight(args, left) or left + 1
  if w > left then args = {} else calls.bytes = (calls.bytes or 0) + w end
  calls[#calls + 1] = { name = name, args = args }
end

---Is `name` a primitive a hook can call (`kube.apply`, ...)?
---@param name string
---@return boolean
function M.is_primitive(name)
  return type(name) == "string" and H[name:gsub("%.", "_")] ~= nil
end

--- Dispatch one call from the hook: policy first, then the handler.
---@param run uphook.Run
---@param name string the primitive, e.g. "kube.apply"
---@param args table its arguments, nils as null
---@return any ... the primitive's results
function M.dispatch(run, name, args)
  local h = H[name:gsub("%.", "_")]
  if not h or type(args) ~= "table" then
    error("unknown primitive " .. tostring(name), 0)
  end
  if MUTATING[name] and run.phase ~= "upgrade" then
    error(string.format("%s is not allowed in %s: only upgrade may change "
      .. "anything", name, run.phase), 0)
  end
  local n = #args
  for i = 1, n do
    if args[i] == run.null then args[i] = nil end
  end
  if run.calls then M.record_call(run, name, args) end
  return h(run, table.unpack(args, 1, n))
end

return M

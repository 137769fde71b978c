--- uphook.backend.live: the live backend, a Kubernetes API server over
--- uphook.c.kube (libcurl, one keep-alive connection).
---
--- Implements the Backend of docs/internals.md ("The backend
--- interface"), mirroring uphook.backend.mock.cluster: the same arguments, the
--- same results, the same error tables ({code, reason, message} taken
--- from the server's Status). No policy lives here: permissions, plans,
--- journaling, rollout rules and the Lease are the engine's.
---
--- * Kinds are found through discovery (/api and /apis, aggregated
---   discovery with the legacy per-group fallback), once per run and
---   again whenever a kind is missing, so a CRD applied earlier in the
---   same run becomes usable.
--- * apply is a server-side apply PATCH (fieldManager=uphook, force);
---   the action is derived from a GET before and the response.
--- * watch lists, then watches from the list's resourceVersion, and
---   relists on 410 Gone or when the stream ends.
--- * Everything returned is a fresh table decoded from JSON.
--- * The other nodes of the cluster are reached through their MicroK8s
---   cluster agent (uphook.c.agent: verified TLS, the callback token in C,
---   requests in parallel); their kubelet configuration through the API
---   server's node proxy (configz).
local kubeerror = require "uphook.core.kubeerror"
local fieldset = require "uphook.core.fieldset"
local kinds = require "uphook.core.kinds"
local tables = require "uphook.core.tables"
local R = require "uphook.core.run"

local M = {}

M.AGGREGATED = "application/json;g=apidiscovery.k8s.io;v=v2;" ..
  "as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;" ..
  "v=v2beta1;as=APIGroupDiscoveryList,application/json"
M.REQUEST_TIMEOUT = 30      -- seconds, one request with its retries
M.APPLY_TYPE = "application/apply-patch+yaml"

local Error = kubeerror.Error
M.Error = Error
local api_error = kubeerror.new

local function raise(e) error(e, 0) end

---@class LiveBackend: Backend
---@class uphook.LiveBackend: uphook.Backend
local Live = {}
Live.__index = Live
M.Live = Live   -- the class, for tests/lua/backend_interface_test.lua

---Connect to the cluster of the kubeconfig docs/contract.md §1 names.
---@param o table options of lua/cmd/cli.lua (kubeconfig, snap_data, timeout)
---@param c table the C families (c.json; c.kube when registered)
---@param report? table
---@return LiveBackend|nil backend, string|nil err
function M.connect(o, c, report)
  local kube = c.kube or require "uphook.c.kube"
  local sys = c.sys or require "uphook.c.sys"
  local client, err = kube.connect { kubeconfig = o.kubeconfig,
    snap_data = o.snap_data, home = o.home,
    kubeconfig_env = o.kubeconfig_env }
  if not client then return nil, err end
  -- the callback token is read now, before the hook child is forked
  local agent_lib = c.agent or require "uphook.c.agent"
  local agent = o.snap_data and agent_lib.open { snap_data = o.snap_data }
  local self = setmetatable({ name = "live", kube = kube, sys = sys,
    client = client, agent = agent,
    json = c.json, null = c.json.null, report = report,
    request_timeout = o.request_timeout or M.REQUEST_TIMEOUT,
    deadline = sys.now() + (o.timeout or R.DEFAULT_TIMEOUT),
    snapctl = o.snapctl or os.getenv("UPHOOK_SNAPCTL") or "snapctl",
    discoveries = 0 }, Live)
  return self
end

--- Requests ----------------------------------------------------------------

function Live:_timeout()
  local left = self.deadline - self.sys.now()
  return math.max(1, math.min(self.request_timeout, left))
end

---Bound every request by this monotonic time as well as by its own
---timeout; nil: by its own timeout only (the rollback after --timeout,
---and recover, whose requests each get request_timeout).
---@param t number|nil
function Live:set_deadline(t)
  self.deadline = t or math.huge
end

-- One request; connection errors raise their message (it names the
-- server and the path).
function Live:_call(method, path, body, ctype, accept)
  local st, text, ct = self.client:request(method, path, body, ctype,
    self:_timeout(), accept)
  if st == nil then raise(text) end
  return st, text, ct
end

function Live:_decode(text, method, path)
  local ok, v = pcall(self.json.decode, text)
  if not ok or type(v) ~= "table" then
    raise(string.format("%s %s%s: the API server answered with something "
      .. "that is not a JSON object", method, self.client:server(), path))
  end
  return v
end

-- The error table for a failed request: the server's Status when it
-- sent one, else the HTTP status with the URL.
function Live:_status_error(st, text, method, path)
  local ok, s = pcall(self.json.decode, text)
  if ok and type(s) == "table" and s.kind == "Status"
      and type(s.message) == "string" then
    return api_error(math.tointeger(s.code) or st, s.reason or "Unknown",
      s.message, type(s.details) == "table" and s.details or nil)
  end
  local snippet = tostring(text):sub(1, 200):gsub("%s+$", "")
  return api_error(st, "Unknown", string.format("%s %s%s: HTTP %d%s",
    method, self.client:server(), path, st,
    snippet ~= "" and (": " .. snippet) or ""))
end

-- A request whose answer must be one of the `want` statuses: the
-- decoded body, or nil for a status in `absent` (404 usually).
function Live:_json(method, path, body, ctype, want, absent, accept)
  local st, text = self:_call(method, path, body, ctype, accept)
  if absent and st == absent then return nil, st end
  if not want[st] then raise(self:_status_error(st, text, method, path)) end
  return self:_decode(text, method, path), st
end

local OK = { [200] = true }
local WRITTEN = { [200] = true, [201] = true }
local DELETED = { [200] = true, [202] = true }

--- Discovery ---------------------------------------------------------------

-- Record one resource. `preferred`: in the group's preferred version.
local function add_kind(k, group, version, kind, resource, namespaced,
                        preferred)
  local av = group == "" and version or (group .. "/" .. version)
  local info = { group = group, version = version, kind = kind,
    resource = resource, namespaced = namespaced, apiVersion = av }
  local key = av .. "/" .. kind
  if k.gvk[key] then return end
  k.gvk[key] = info
  if preferred and not k.kind[kind] then k.kind[kind] = info end
  if not k.any[kind] then k.any[kind] = info end
end

function Live:_discover_aggregated(k)
  for _, root in ipairs { "/api", "/apis" } do
    local st, text = self:_call("GET", root, nil, nil, M.AGGREGATED)
    if st ~= 200 then raise(self:_status_error(st, text, "GET", root)) end
    local doc = self:_decode(text, "GET", root)
    if doc.kind ~= "APIGroupDiscoveryList" then return false end
    for _, g in ipairs(doc.items or {}) do
      local group = type(g.metadata) == "table" and g.metadata.name or ""
      for vi, v in ipairs(g.versions or {}) do
        for _, r in ipairs(v.resources or {}) do
          local rk = type(r.responseKind) == "table" and r.responseKind.kind
          if type(rk) == "string" and rk ~= "" then
            add_kind(k, group, v.version, rk, r.resource,
              r.scope == "Namespaced", vi == 1)
          end
        end
      end
    end
  end
  return true
end

function Live:_discover_version(k, group, version, preferred)
  local path = group == "" and ("/api/" .. version)
    or ("/apis/" .. group .. "/" .. version)
  local list = self:_json("GET", path, nil, nil, OK, 404)
  for _, r in ipairs(list and list.resources or {}) do
    if type(r.name) == "string" and not r.name:find("/", 1, true) then
      add_kind(k, group, version, r.kind, r.name, r.namespaced == true,
        preferred)
    end
  end
end

function Live:_discover_legacy(k)
  local core = self:_json("GET", "/api", nil, nil, OK)
  for i, v in ipairs(core.versions or {}) do
    self:_discover_version(k, "", v, i == 1)
  end
  local groups = self:_json("GET", "/apis", nil, nil, OK)
  for _, g in ipairs(groups.groups or {}) do
    local pref = type(g.preferredVersion) == "table"
      and g.preferredVersion.version
    for _, v in ipairs(g.versions or {}) do
      self:_discover_version(k, g.name, v.version, v.version == pref)
    end
  end
end

---Map every served kind to its resource (again).
function Live:discover()
  local k = { gvk = {}, kind = {}, any = {} }
  if not self:_discover_aggregated(k) then
    k = { gvk = {}, kind = {}, any = {} }
    self:_discover_legacy(k)
  end
  self.kinds = k
  self.discoveries = self.discoveries + 1
end

function Live:_find(av, kind)
  local k = self.kinds
  if av then return k.gvk[av .. "/" .. kind] end
  return k.kind[kind] or k.any[kind]
end

function Live:_resolve(arg, level)
  if type(arg) ~= "string" or arg == "" then
    error("kind must be a non-empty string", (level or 2) + 1)
  end
  local av, kind = kinds.split(arg)
  if not self.kinds then self:discover() end
  local info = self:_find(av, kind)
  if not info then
    self:discover()       -- a CRD created since may serve it now
    info = self:_find(av, kind)
  end
  if info then return info end
  raise(av and kubeerror.no_match(kind, av) or kubeerror.unknown_kind(kind))
end

--- Paths -------------------------------------------------------------------

local function esc(s)
  return (tostring(s):gsub("[^%w%-%._~]", function(ch)
    return string.format("%%%02X", ch:byte())
  end))
end
M.escape = esc

local function norm_ns(info, ns)
  if not info.namespaced then return nil end
  if ns == nil or ns == "" then return "default" end
  return ns
end

local function path_of(info, ns, name)
  local p = info.group == "" and ("/api/" .. info.version)
    or ("/apis/" .. info.group .. "/" .. info.version)
  if ns then p = p .. "/namespaces/" .. esc(ns) end
  p = p .. "/" .. info.resource
  if name then p = p .. "/" .. esc(name) end
  return p
end

-- List items come without apiVersion and kind: put them back.
local function fill(obj, info)
  if type(obj) == "table" then
    if obj.kind == nil then obj.kind = info.kind end
    if obj.apiVersion == nil then obj.apiVersion = info.apiVersion end
  end
  return obj
end

-- Check a request body and resolve its kind (as the mock does).
-- The kinds whose writes change what discovery serves.
local SERVES = { CustomResourceDefinition = true, APIService = true }

function Live:_body(obj, what)
  local info, md = kubeerror.check_body(obj, what, 3, function(arg)
    return self:_resolve(arg, 5)
  end)
  if SERVES[info.kind] then self.served_changed = true end
  return info, md, norm_ns(info, md.namespace)
end

function Live:_encode(obj)
  local ok, text = pcall(self.json.encode, obj)
  if not ok then error("cannot encode the object: " .. tostring(text), 0) end
  return text
end

--- Reads -------------------------------------------------------------------

---Read one object, or nil when absent.
---@param kind string Kind or group/version/Kind
---@param name string
---@param namespace string|nil
---@return table|nil
function Live:get(kind, name, namespace)
  local info = self:_resolve(kind)
  assert(type(name) == "string", "get: name must be a string")
  local obj = self:_json("GET", path_of(info, norm_ns(info, namespace),
    name), nil, nil, OK, 404)
  return obj and fill(obj, info)
end

local function selector(labels)
  local keys = {}
  for k in pairs(labels) do keys[#keys + 1] = k end
  table.sort(keys)
  for i, k in ipairs(keys) do keys[i] = k .. "=" .. tostring(labels[k]) end
  return table.concat(keys, ",")
end

M.MAX_PAGES = 10000   -- pages of one chunked LIST

-- A metadata-only LIST (client-go's metadata client, k8s.io/client-go
-- metadata/metadata.go; kube-rs kube-core request.rs): the server answers
-- a PartialObjectMetadataList; one that does not serve it answers the
-- whole list (the second media type).
M.METADATA_LIST = "application/json;as=PartialObjectMetadataList;"
  .. "g=meta.k8s.io;v=v1,application/json"
-- The same for one object, and for what a write answers (the API server
-- transforms the answer of a PATCH as of a GET: k8s.io/apiserver
-- pkg/endpoints/handlers/patch.go, transformResponseObject).
M.METADATA_ONE = "application/json;as=PartialObjectMetadata;"
  .. "g=meta.k8s.io;v=v1,application/json"

---List objects of a kind (all namespaces unless opts.namespace). With
---opts.limit, the server sends them in pages of at most that many (a
---LIST's `limit` and `continue`, as kubectl's chunking), so that one
---answer and its decoding stay small; the result is every object still.
---With opts.metadata, each item is only {apiVersion, kind, metadata}: the
---server's PartialObjectMetadata, or the metadata of the whole object
---from a server that does not serve those.
---@param kind string
---@param opts table|nil {namespace=, labels=, limit=, metadata=}
---@return table[]
function Live:list(kind, opts)
  local info = self:_resolve(kind)
  opts = opts or {}
  local ns = info.namespaced and opts.namespace or nil
  local path = path_of(info, ns ~= "" and ns or nil)
  local sep = "?"
  if opts.labels and next(opts.labels) then
    path, sep = path .. "?labelSelector=" .. esc(selector(opts.labels)), "&"
  end
  if opts.limit then
    path, sep = path .. sep .. "limit=" .. math.tointeger(opts.limit), "&"
  end
  local accept = opts.metadata and M.METADATA_LIST or nil
  local items, token, pages = nil, nil, 0
  repeat
    local l = self:_json("GET", token and (path .. sep .. "continue="
      .. esc(token)) or path, nil, nil, OK, nil, accept)
    local page = type(l.items) == "table" and l.items
      or self.json.array({})
    if items == nil then items = page
    else table.move(page, 1, #page, #items + 1, items) end
    token = type(l.metadata) == "table" and l.metadata.continue
    token = opts.limit and type(token) == "string" and token ~= "" and token
    pages = pages + 1
    if token and (#page == 0 or pages >= M.MAX_PAGES) then
      raise(string.format("GET %s%s: the API server's pages do not end",
        self.client:server(), path))
    end
  until not token
  for i, o in ipairs(items) do
    if opts.metadata and type(o) == "table" then
      items[i] = { apiVersion = info.apiVersion, kind = info.kind,
        metadata = o.metadata }
    end
    fill(items[i], info)
  end
  return items
end

---What the server serves, as discovery says it (Helm's own
---.Capabilities.APIVersions, helm/helm pkg/action GetVersionSet): each
---"group/version" and "group/version/Kind" ("v1", "v1/Pod" for the core
---group), sorted. Discovered again when a CRD or an APIService was
---written since.
---@return string[]
function Live:api_versions()
  if not self.kinds or self.served_changed then
    self.served_changed = false
    self:discover()
  end
  local set, out = {}, {}
  for key, info in pairs(self.kinds.gvk) do
    set[key], set[info.apiVersion] = true, true
  end
  for k in pairs(set) do out[#out + 1] = k end
  table.sort(out)
  return out
end

---Is the kind namespaced? nil when the server does not serve it.
---@param apiVersion string
---@param kind string
---@return boolean|nil
function Live:namespaced(apiVersion, kind)
  local arg = apiVersion and (apiVersion .. "/" .. kind) or kind
  local ok, info = pcall(self._resolve, self, arg)
  if ok then return info.namespaced end
  if getmetatable(info) == Error and info.code == 404 then return nil end
  error(info, 0)
end

--- Writes ------------------------------------------------------------------

-- Would storing `new` over `old` change anything? (a dry run keeps the
-- resourceVersion, so compare the content without the server's fields)
local function unchanged(old, new, dry)
  local om, nm = old.metadata or {}, new.metadata or {}
  if not dry then return om.resourceVersion == nm.resourceVersion end
  local a, b = kinds.clean(old), kinds.clean(new)
  a.status, b.status = old.status, new.status
  return tables.equal(a, b)
end

-- The plan of an apply after the client-side apply upgrade: the server
-- answered the dry run with the object's managedFields as they are; the
-- fields the upgrade gives uphook and uphook no longer applies would go
-- (fieldset.prune_unowned, docs/internals.md "Field ownership").
function Live:_predict_upgrade(stored, upgraded, manager)
  local mine, owned = nil, fieldset.new()
  local keep = {}
  for _, e in ipairs(upgraded) do keep[fieldset.manager_id(e)] = true end
  local id = fieldset.manager_id { manager = manager or kinds.FIELD_MANAGER,
                                   operation = "Apply" }
  for _, e in ipairs(upgraded) do
    if fieldset.manager_id(e) == id then
      mine = fieldset.from_fields(e.fieldsV1)
    end
  end
  local mf = {}
  for _, e in ipairs(stored.metadata.managedFields or {}) do
    local eid = fieldset.manager_id(e)
    if keep[eid] then
      mf[#mf + 1] = e
      owned = fieldset.union(owned, fieldset.from_fields(e.fieldsV1))
    end
  end
  if mine then
    fieldset.prune_unowned(stored, mine, owned, self.json.decode,
      function(t) return tables.is_list(t, getmetatable(self.json.array {}))
      end)
  end
  stored.metadata.managedFields = self.json.array(mf)
  return stored
end

-- The PATCH of a server-side apply: its path (with the query) and body.
function Live:_apply_request(obj, opts)
  local info, md, ns = self:_body(obj, "apply")
  local q = "?fieldManager=" .. (opts and opts.manager or kinds.FIELD_MANAGER)
    .. "&force=true"
    .. (opts and opts.dry_run and "&dryRun=All" or "")
  return info, path_of(info, ns, md.name), q, self:_encode(obj)
end

-- What an apply's answer means: the stored object and the action.
function Live:_apply_result(info, stored, prior, opts)
  local dry = opts and opts.dry_run
  stored = fill(stored, info)
  if dry and prior and opts.managed_fields then
    stored = self:_predict_upgrade(stored, opts.managed_fields, opts.manager)
  end
  if not prior then return stored, "created" end
  if unchanged(prior, stored, dry) then
    return stored, "unchanged"
  end
  return stored, "configured"
end

---Server-side apply. Returns the stored object and created, configured
---or unchanged (under dry_run: what the server would store; with
---managed_fields, what it would store after set_managed_fields).
---@param obj table
---@param opts table|nil {dry_run=, prior=, managed_fields=, manager=} (manager: the field manager, default uphook)
---@return table stored
---@return string action
function Live:apply(obj, opts)
  local info, path, q, body = self:_apply_request(obj, opts)
  -- the engine has just read the object: no second GET for the action
  local prior = opts and opts.prior
  if prior == nil then prior = self:_json("GET", path, nil, nil, OK, 404) end
  if prior == false then prior = nil end
  local stored = self:_json("PATCH", path .. q, body, M.APPLY_TYPE, WRITTEN)
  return self:_apply_result(info, stored, prior, opts)
end

M.PARALLEL_MAX = 256   -- requests in one _many (client:request_many)
M.PARALLEL = 4         -- requests in flight at once

-- PATCHes at once; each entry {path=, body=, ctype=, want=, done=fn,
-- accept=} or {error=} (not sent). The results in order: {ok=true,
-- stored=, action=} (done(decoded) returns stored, action) or {ok=false,
-- error=}.
function Live:_many(entries)
  assert(#entries >= 1 and #entries <= M.PARALLEL_MAX,
    "1 to " .. M.PARALLEL_MAX .. " requests at once")
  local reqs, at, out = {}, {}, {}
  for i, e in ipairs(entries) do
    if not e.error then
      reqs[#reqs + 1] = { "PATCH", e.path, e.body, e.ctype, e.accept }
      at[i] = #reqs
    end
  end
  local answers = #reqs > 0
    and self.client:request_many(reqs, self:_timeout(), M.PARALLEL) or {}
  for i, e in ipairs(entries) do
    if e.error then
      out[i] = { ok = false, error = e.error }
    else
      local ok, stored, action = pcall(function()
        local a = answers[at[i]]
        if a.error then raise(a.error) end
        if not e.want[a.status] then
          raise(self:_status_error(a.status, a.body, "PATCH", e.path))
        end
        return e.done(self:_decode(a.body, "PATCH", e.path))
      end)
      out[i] = ok and { ok = true, stored = stored, action = action }
        or { ok = false, error = stored }
    end
  end
  return out
end

---Several server-side applies at once (at most M.PARALLEL in flight,
---over kept connections), each as `apply` with its opts (whose prior is
---given: the object, or false when absent). The results in the items'
---order: {ok=true, stored=, action=} or {ok=false, error=} (what apply
---raises); every item is tried.
---@param items {obj: table, opts: table}[]
---@return table[]
function Live:apply_many(items)
  local entries = {}
  for i, it in ipairs(items) do
    local ok, info, path, q, body = pcall(self._apply_request, self, it.obj,
      it.opts)
    if ok then
      local prior = it.opts and it.opts.prior or nil
      entries[i] = { path = path .. q, body = body, ctype = M.APPLY_TYPE,
        want = WRITTEN, done = function(stored)
          return self:_apply_result(info, stored, prior, it.opts)
        end }
    else
      entries[i] = { error = info }
    end
  end
  return self:_many(entries)
end

local MANAGED = "?fieldManager=" .. kinds.FIELD_MANAGER

---POST: create; 409 AlreadyExists when present.
---@param obj table
---@return table stored
function Live:create(obj)
  local info, _, ns = self:_body(obj, "create")
  return fill(self:_json("POST", path_of(info, ns) .. MANAGED,
    self:_encode(obj), "application/json", WRITTEN), info)
end

---PUT: replace; metadata.resourceVersion, when set, is a precondition.
---@param obj table
---@return table stored
function Live:replace(obj)
  local info, md, ns = self:_body(obj, "replace")
  return fill(self:_json("PUT", path_of(info, ns, md.name) .. MANAGED,
    self:_encode(obj), "application/json", WRITTEN), info)
end

function Live:_smf_request(kind, name, namespace, managed_fields,
                            resource_version)
  local info = self:_resolve(kind)
  assert(type(name) == "string", "set_managed_fields: name must be a string")
  local ops = { { op = "add", path = "/metadata/managedFields",
                  value = self.json.array(managed_fields) } }
  if resource_version then
    ops[2] = { op = "replace", path = "/metadata/resourceVersion",
               value = resource_version }
  end
  return info, path_of(info, norm_ns(info, namespace), name) .. MANAGED,
    self:_encode(self.json.array(ops))
end

-- The answer of set_managed_fields as {apiVersion, kind, metadata}: the
-- server's PartialObjectMetadata (M.METADATA_ONE), or the metadata of the
-- whole object from a server that does not serve those.
local function metadata_of(obj, info)
  return { apiVersion = info.apiVersion, kind = info.kind,
    metadata = type(obj) == "table" and obj.metadata or nil }
end

---Set metadata.managedFields alone, as a JSON patch (what client-go's
---csaupgrade sends): no field changes, so no manager takes any and the
---entries are stored as given. `resource_version` is a precondition
---(a "replace" of it, which the server checks as a 409 Conflict). The
---answer is the stored object's {apiVersion, kind, metadata} only: a
---CRD's whole body is not sent back for the resourceVersion.
function Live:set_managed_fields(kind, name, namespace, managed_fields,
                                 resource_version)
  local info, path, body = self:_smf_request(kind, name, namespace,
    managed_fields, resource_version)
  return metadata_of(self:_json("PATCH", path, body,
    "application/json-patch+json", OK, nil, M.METADATA_ONE), info)
end

---set_managed_fields of several objects at once, as apply_many: items
---{kind=, name=, namespace=, managed_fields=, resource_version=}; the
---results in order, {ok=true, stored=} or {ok=false, error=}.
---@param items table[]
---@return table[]
function Live:set_managed_fields_many(items)
  local entries = {}
  for i, it in ipairs(items) do
    local ok, info, path, body = pcall(self._smf_request, self, it.kind,
      it.name, it.namespace, it.managed_fields, it.resource_version)
    entries[i] = ok and { path = path, body = body,
      ctype = "application/json-patch+json", want = OK,
      accept = M.METADATA_ONE,
      done = function(stored) return metadata_of(stored, info) end }
      or { error = info }
  end
  return self:_many(entries)
end

---DELETE: true when deleted, false when it was absent.
---@param kind string
---@param name string
---@param namespace string|nil
---@return boolean
function Live:delete(kind, name, namespace)
  local info = self:_resolve(kind)
  if SERVES[info.kind] then self.served_changed = true end
  assert(type(name) == "string", "delete: name must be a string")
  local r = self:_json("DELETE", path_of(info, norm_ns(info, namespace),
    name) .. "?propagationPolicy=Background", nil, nil, DELETED, 404)
  return r ~= nil
end

--- Watch -------------------------------------------------------------------

-- One watch stream from `rv`; returns "done", "relist" or "timeout".
function Live:_stream(info, base, sel, rv, left, offer, tick)
  local outcome, err = "relist", nil
  local path = string.format("%s?watch=1&%s&resourceVersion=%s"
    .. "&allowWatchBookmarks=true&timeoutSeconds=%d", base, sel, esc(rv),
    math.max(1, math.ceil(left)))
  local ok, st, text = self.client:watch(path, left, function(line)
    local okj, ev = pcall(self.json.decode, line)
    if not okj or type(ev) ~= "table" or type(ev.object) ~= "table" then
      return false
    end
    local o = ev.object
    if ev.type == "ERROR" then
      if o.code ~= 410 then
        err = api_error(math.tointeger(o.code) or 500, o.reason or "Unknown",
          o.message or "watch error")
      end
      return true
    end
    if ev.type == "DELETED" then o = nil else fill(o, info) end
    if offer(o) then outcome = "done"; return true end
    return false
  end, tick)
  if err then raise(err) end
  if ok == nil then
    if tick then tick() end
    self.sys.sleep(math.min(0.2, math.max(0, left)))   -- relist
  elseif ok == false and st ~= 200 and st ~= 410 then
    raise(self:_status_error(st, text, "GET", path))
  end
  return outcome
end

---uphook.Backend's watch (lua/core/backend.lua), over the API's watch:
---the current object, then every change, relisting where the server
---ends the stream; `tick` is called at least every 0.2 s (what it
---raises ends the watch).
function Live:watch(kind, name, namespace, fn, timeout, tick)
  assert(type(fn) == "function", "watch: fn must be a function")
  local info = self:_resolve(kind)
  local deadline = self:now() + (timeout or 300)
  local base = path_of(info, norm_ns(info, namespace))
  local sel = "fieldSelector=" .. esc("metadata.name=" .. name)
  local obj, seen, first = nil, nil, true
  local function offer(o)
    local rv = o and o.metadata and o.metadata.resourceVersion or false
    if not first and rv == seen then return false end
    first, seen, obj = false, rv, o
    return fn(o) and true or false
  end
  while true do
    local l = self:_json("GET", base .. "?" .. sel, nil, nil, OK)
    local cur = type(l.items) == "table" and l.items[1] or nil
    if offer(cur and fill(cur, info)) then return true, obj end
    local left = deadline - self:now()
    if left <= 0 then return false, obj end
    local rv = type(l.metadata) == "table" and l.metadata.resourceVersion
    if tick then tick() end
    if self:_stream(info, base, sel, rv or "0", left, offer, tick) == "done"
    then
      return true, obj
    end
    if deadline - self:now() <= 0 then return false, obj end
  end
end

--- Clock and services --------------------------------------------------------

---Monotonic seconds.
function Live:now() return self.sys.now() end

---Sleep (really).
---@param seconds number
function Live:sleep(seconds) self.sys.sleep(math.max(0, seconds)) end

---snapctl restart microk8s.daemon-<...>; $UPHOOK_SNAPCTL may name a
---stand-in command.
---@param service string kubelite or microk8s.daemon-<name>
---@return true
function Live:restart(service)
  assert(type(service) == "string", "restart: service must be a string")
  local unit = service == "kubelite" and "microk8s.daemon-kubelite"
    or service
  local code, err = self.sys.run { self.snapctl, "restart", unit }
  if code == nil then
    error(string.format("cannot restart %s: cannot run %s: %s", unit,
      self.snapctl, tostring(err)), 0)
  elseif code == 127 then
    -- the status of a command that could not be run, by the shell's
    -- convention (and posix_spawn's, where it forks: under valgrind)
    error(string.format("cannot restart %s: cannot run %s: exit status 127"
      .. " (not found or not executable)", unit, self.snapctl), 0)
  elseif code ~= 0 then
    error(string.format("cannot restart %s: %s restart %s exited with "
      .. "status %d", unit, self.snapctl, unit, code), 0)
  end
  return true
end

--- Other nodes ---------------------------------------------------------------

M.CONFIGZ_TIMEOUT = 5       -- seconds, one configz read with its retries
M.AGENT_TIMEOUT = 120       -- seconds, one configure call (a restart in it)

-- JSON arrays where the agent expects lists, even when they are empty
-- (an empty Lua table would encode as {}).
local function agent_body(json, body)
  local services = {}
  for i, s in ipairs(body.service or {}) do
    local t = {}
    for k, v in pairs(s) do t[k] = v end
    if t.arguments_update then t.arguments_update = json.array(t.arguments_update) end
    if t.arguments_remove then t.arguments_remove = json.array(t.arguments_remove) end
    services[i] = t
  end
  return { service = json.array(services) }
end

---Send cluster-agent configure requests to other nodes, all at once.
---The callback token is added in C; `body` never carries it.
---@param reqs {node:string, address:string, body:{service:table[]}}[]
---@param opts? {timeout?: number} seconds for the whole call (at most
---  M.AGENT_TIMEOUT and what is left of --timeout)
---@return ({ok:true}|{ok:false, error:{code:integer, reason:string, message:string, node:string, address:string}})[]
function Live:agent_configure(reqs, opts)
  local out = {}
  for i, r in ipairs(reqs) do
    out[i] = { node = r.node, address = r.address,
      body = agent_body(self.json, r.body or {}) }
  end
  if not self.agent then
    local res = {}
    for i, r in ipairs(reqs) do
      res[i] = { ok = false, error = { code = 0, reason = "NoToken",
        node = r.node, address = r.address, message = string.format(
        "node %s (%s): no $SNAP_DATA, so no callback token", r.node,
        r.address) } }
    end
    return res
  end
  local left = math.max(1, self.deadline - self.sys.now())
  local timeout = math.min(opts and opts.timeout or M.AGENT_TIMEOUT,
    M.AGENT_TIMEOUT, left)
  return self.agent:configure(out, math.max(timeout, 0.1))
end

---The running kubelet configuration of a node (its "kubeletconfig"),
---read through the API server: GET /api/v1/nodes/<name>/proxy/configz.
---@param name string
---@return table|nil kubeletconfig, LiveError|nil err
function Live:kubelet_config(name)
  assert(type(name) == "string", "kubelet_config: name must be a string")
  local path = "/api/v1/nodes/" .. esc(name) .. "/proxy/configz"
  local st, text = self.client:request("GET", path, nil, nil,
    math.min(self:_timeout(), M.CONFIGZ_TIMEOUT))
  if st == nil then
    return nil, api_error(0, "Unreachable", "node " .. name .. ": " .. text)
  end
  if st ~= 200 then
    local e = self:_status_error(st, text, "GET", path)
    e.message = "node " .. name .. ": " .. e.message
    return nil, e
  end
  local ok, v = pcall(self.json.decode, text)
  if not ok or type(v) ~= "table" or type(v.kubeletconfig) ~= "table" then
    return nil, api_error(st, "BadAnswer", string.format("node %s: GET "
      .. "%s%s answered without a kubeletconfig object", name,
      self.client:server(), path))
  end
  return v.kubeletconfig
end

---Wait until the API server answers GET /readyz with 200 (after this
---node's kubelite restarted it), at most `timeout` seconds; `tick` is
---called at least every 0.2 s. A server that answers /readyz with 404
---is no kube-apiserver starting: /version answers for it, or the wait
---fails at once saying so (docs/microk8s.md, the table of changes).
---@param timeout number
---@param tick? fun()
---@return boolean ok, string|nil err
function Live:api_ready(timeout, tick)
  local sys = self.sys
  local deadline = sys.now() + timeout
  local last
  while true do
    local left = deadline - sys.now()
    local st, text = self.client:request("GET", "/readyz", nil, nil,
      math.max(0.1, math.min(left, self.request_timeout)), "text/plain", tick)
    if st == 200 then return true end
    if st == 404 then
      local vs = self.client:request("GET", "/version", nil, nil,
        math.max(0.1, math.min(left, self.request_timeout)), nil, tick)
      if vs == 200 then return true end
      return false, string.format("the server %s answers /readyz with HTTP "
        .. "404 and /version with %s: it is not a kube-apiserver that is "
        .. "starting", self.client:server(), vs and ("HTTP " .. vs)
        or "no answer")
    end
    last = st and string.format("HTTP %d %s", st,
      tostring(text):sub(1, 120):gsub("%s+$", "")) or tostring(text)
    left = deadline - sys.now()
    if left <= 0 then break end
    if tick then tick() end
    sys.sleep(math.min(0.2, left))
  end
  return false, string.format("the API server %s is not ready %g s after "
    .. "the restart: %s", self.client:server(), timeout, last)
end

---The API server's URL.
function Live:server() return self.client:server() end

function Live:close()
  if self.agent then self.agent:close() end
  self.client:close()
end

return M

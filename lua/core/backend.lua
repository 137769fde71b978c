--- uphook.core.backend: the Backend, the one seam between the engine and a
--- world (docs/internals.md "The backend interface"). lua/backend/live.lua
--- (the REST API and the cluster agents) and lua/backend/mock/cluster.lua
--- (the mock, with its nodes from lua/backend/mock/agent.lua) implement it;
--- the engine (lua/engine) owns every policy, a backend only touches the
--- world. `kind` is a Kind (`Deployment`) or `group/version/Kind`
--- (`apps/v1/Deployment`); cluster-scoped objects take namespace nil. API
--- errors are raised as `{code=, reason=, message=, details=}`, exactly
--- what the API server's Status says (lua/core/kubeerror.lua).

---@class uphook.ApplyOptions
---@field dry_run? boolean a server dry run: nothing is stored
---@field prior? table|false the object the caller just read (false: absent)
---@field managed_fields? table[] under dry_run: the result as if the
---  object's managedFields were these (the plan of the client-side apply
---  upgrade, docs/internals.md "Field ownership")
---@field manager? string the field manager (default uphook; helm.upgrade
---  applies a release's objects as Helm's, `helm`)

---@class uphook.Backend
---@field name string "mock" | "live"
---Server-side apply (field manager uphook unless opts.manager, conflicts
---forced); the stored
---object and "created" | "configured" | "unchanged".
---@field apply fun(self: uphook.Backend, obj: table, opts?: uphook.ApplyOptions): table, string
---Optional (live): several applies at once, at most 4 requests in flight
---over kept connections, each tried, the results in order; without it the
---engine applies one by one (lua/engine/batch.lua send).
---@field apply_many? fun(self: uphook.Backend, items: {obj: table, opts: uphook.ApplyOptions}[]): {ok: boolean, stored?: table, action?: string, error?: table}[]
---A JSON patch of /metadata/managedFields alone, resourceVersion `rv` a
---precondition (409 Conflict when stale): the entries are stored as
---given, no field changes. Returns the stored object's {apiVersion, kind,
---metadata} only (the API server's PartialObjectMetadata).
---@field set_managed_fields fun(self: uphook.Backend, kind: string, name: string, namespace: string|nil, managed_fields: table[], rv: string): table
---Optional (live): set_managed_fields of several objects at once, in order.
---@field set_managed_fields_many? fun(self: uphook.Backend, items: {kind: string, name: string, namespace?: string, managed_fields: table[], resource_version: string}[]): {ok: boolean, stored?: table, error?: table}[]
---The object, or nil when it is absent.
---@field get fun(self: uphook.Backend, kind: string, name: string, namespace?: string): table|nil
---The objects of a kind, in a namespace (nil: every one), by labels;
---limit: the most objects one answer may carry (the live backend reads
---the rest page by page; the result is every object still); with
---`metadata`, each only {apiVersion, kind, metadata} (the API server's
---PartialObjectMetadataList).
---@field list fun(self: uphook.Backend, kind: string, opts?: {namespace?: string, labels?: table<string, string>, limit?: integer, metadata?: boolean}): table[]
---POST: 409 AlreadyExists when it exists.
---@field create fun(self: uphook.Backend, obj: table): table
---PUT: metadata.resourceVersion, when set, is a precondition (409 Conflict).
---@field replace fun(self: uphook.Backend, obj: table): table
---true, or false when it was already absent.
---@field delete fun(self: uphook.Backend, kind: string, name: string, namespace?: string): boolean
---fn(obj_or_nil) on the current object and on every change, until fn
---returns true (true, obj) or `timeout` seconds pass (false, last_obj).
---`tick` is called at least every 0.2 s of the wait (the mock: between
---its events); what it raises ends the watch (lua/engine/wait.lua).
---@field watch fun(self: uphook.Backend, kind: string, name: string, namespace: string|nil, fn: fun(obj: table|nil): boolean, timeout?: number, tick?: fun()): boolean, table|nil
---Seconds (the mock: its clock).
---@field now fun(self: uphook.Backend): number
---Wait (the mock: advances its clock).
---@field sleep fun(self: uphook.Backend, seconds: number)
---Restart a service on this node (snapctl restart).
---@field restart fun(self: uphook.Backend, service: string)
---Is the kind namespaced? nil for a kind the cluster does not serve.
---@field namespaced fun(self: uphook.Backend, apiVersion: string, kind: string): boolean|nil
---What the cluster serves as discovery says it, sorted: each
---"group/version" and "group/version/Kind" ("v1", "v1/Pod" for the core
---group), as Helm's .Capabilities.APIVersions.
---@field api_versions fun(self: uphook.Backend): string[]
---The other nodes (docs/microk8s.md): each request to its node's cluster
---agent at once; results[i] = {ok=true} or {ok=false, error={code=,
---reason=, message="node <n> (<address>): ...", node=, address=}}. An
---empty service list proves TLS and the token and changes nothing. The
---policy (which nodes, priors, records, rolling restarts) is
---lua/engine/nodes.lua's; the token is added by the C side, never Lua.
---@field agent_configure fun(self: uphook.Backend, reqs: {node: string, address: string, body: table}[], opts?: {timeout?: number}): table[]
---A node's running kubelet configuration (its configz), or nil, err.
---@field kubelet_config fun(self: uphook.Backend, node: string): table|nil, table|string|nil
---After this node's kubelite restart: true once the API server answers;
---`tick` as watch's.
---@field api_ready fun(self: uphook.Backend, timeout?: number, tick?: fun()): boolean, string|nil
---Optional (live): bound every request by monotonic time t too; nil: each
---by its own timeout (rollback, recover).
---@field set_deadline? fun(self: uphook.Backend, t: number|nil)

local M = {}

--- What every backend has, and what the engine uses only where it is.
M.REQUIRED = { "apply", "set_managed_fields", "get", "list", "create",
  "replace", "delete", "watch", "now", "sleep", "restart", "namespaced",
  "api_versions" }
M.NODES = { "agent_configure", "kubelet_config", "api_ready" }
M.OPTIONAL = { "apply_many", "set_managed_fields_many", "set_deadline" }

---The methods of the interface that `b` lacks (empty: none). A mock
---without nodes (list and doctor without a state dir) lacks M.NODES:
---pass with_nodes = false to leave them out.
---@param b table a backend
---@param with_nodes? boolean check M.NODES too (default true)
---@return string[] missing
function M.missing(b, with_nodes)
  local out = {}
  local lists = with_nodes == false and { M.REQUIRED }
    or { M.REQUIRED, M.NODES }
  for _, list in ipairs(lists) do
    for _, m in ipairs(list) do
      if type(b[m]) ~= "function" then out[#out + 1] = m end
    end
  end
  return out
end

return M

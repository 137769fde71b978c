--- uphook.engine.helm.render: a chart rendered by Helm itself (`helm
--- template`, in the render child of uphook.c.helm: docs/security.md "The
--- render child"), its output cut into the objects, CRDs and chart hooks
--- of a release, and the values the chart generates found by rendering
--- twice (docs/guide.md "Helm addons").
local tables = require "uphook.core.tables"
local kinds = require "uphook.core.kinds"

local M = {}

M.TIMEOUT = 120            -- seconds one render may take
M.MAX_OUTPUT = 64 << 20    -- bytes of rendered output
M.MEMORY = 2 << 30         -- the render child's address space

-- Helm's InstallOrder (helm/helm pkg/release/v1/util/kind_sorter.go, the
-- same in v3.17.2): the kinds in the order an install creates them;
-- other kinds after, in the order rendered.
M.INSTALL_ORDER = { "PriorityClass", "Namespace", "NetworkPolicy",
  "ResourceQuota", "LimitRange", "PodSecurityPolicy", "PodDisruptionBudget",
  "ServiceAccount", "Secret", "SecretList", "ConfigMap", "StorageClass",
  "PersistentVolume", "PersistentVolumeClaim", "CustomResourceDefinition",
  "ClusterRole", "ClusterRoleList", "ClusterRoleBinding",
  "ClusterRoleBindingList", "Role", "RoleList", "RoleBinding",
  "RoleBindingList", "Service", "DaemonSet", "Pod", "ReplicationController",
  "ReplicaSet", "Deployment", "HorizontalPodAutoscaler", "StatefulSet",
  "Job", "CronJob", "IngressClass", "Ingress", "APIService" }
local RANK = {}
for i, k in ipairs(M.INSTALL_ORDER) do RANK[k] = i end

---Where Helm is: `--helm PATH` (run.helm_path), else `$SNAP/bin/helm`,
---else `helm` on PATH. Raises naming every place looked at.
---@param run uphook.Run
---@return string path
function M.locate(run)
  local function exists(p)
    local f = p and io.open(p, "rb")
    if f then f:close() return true end
  end
  if run.helm_path then
    if exists(run.helm_path) then return run.helm_path end
    error("Helm not found at " .. run.helm_path .. " (--helm)", 0)
  end
  local getenv = run.c.sys and run.c.sys.getenv or os.getenv
  local looked = {}
  local snap = getenv("SNAP")
  if snap and snap ~= "" then
    looked[#looked + 1] = snap .. "/bin/helm"
    if exists(looked[#looked]) then return looked[#looked] end
  end
  for dir in (getenv("PATH") or ""):gmatch("[^:]+") do
    if dir:sub(1, 1) == "/" and exists(dir .. "/helm") then
      return dir .. "/helm"
    end
  end
  looked[#looked + 1] = "helm on PATH"
  error("Helm not found: looked at " .. table.concat(looked, ", ")
    .. "; give --helm PATH", 0)
end

---The argv of `helm template` after the binary (docs/security.md, "The
---render child"): never install or upgrade, never the cluster.
---@param t {release: string, namespace: string, chart: string, install?: boolean, kube_version?: string, api_versions?: string[]}
---@return string[]
function M.argv(t)
  local a = { "template", t.release, t.chart, "--namespace", t.namespace,
    "--include-crds" }
  if not t.install then a[#a + 1] = "--is-upgrade" end
  if t.kube_version then
    a[#a + 1] = "--kube-version"
    a[#a + 1] = t.kube_version
  end
  if t.api_versions and #t.api_versions > 0 then   -- a list flag: a,b,c
    a[#a + 1] = "--api-versions"
    a[#a + 1] = table.concat(t.api_versions, ",")
  end
  return a
end

local function add_crd(set, crd)
  local spec = type(crd) == "table" and crd.kind == "CustomResourceDefinition"
    and type(crd.spec) == "table" and crd.spec
  if not spec or type(spec.group) ~= "string" then return end
  local kind = type(spec.names) == "table" and spec.names.kind
  for _, v in ipairs(type(spec.versions) == "table" and spec.versions or {}) do
    if type(v) == "table" and v.served ~= false and type(v.name) == "string"
    then
      set[spec.group .. "/" .. v.name] = true
      if type(kind) == "string" then
        set[spec.group .. "/" .. v.name .. "/" .. kind] = true
      end
    end
  end
end

local function list_or_empty(run, kind)
  local ok, l = pcall(run.backend.list, run.backend, kind)
  return ok and type(l) == "table" and l or {}
end

---What the chart's templates see as `.Capabilities` (helm template's
---`--kube-version` and `--api-versions`, which Helm adds to its built-in
---API versions): the cluster's Kubernetes version (its nodes' kubelet,
---MicroK8s's one binary), and what the server serves as discovery says
---it (the versions its CRDs and APIServices add among them: Helm's own
---set, helm/helm pkg/action GetVersionSet), with the CRDs the chart
---itself brings in crds/ (a `helm install` installs those before it
---renders the templates).
---@param run uphook.Run
---@param crds table[] CRD objects of the chart's crds/ folders
---@return string|nil kube_version, string[] api_versions
function M.capabilities(run, crds)
  local set = {}
  for _, v in ipairs(run.backend:api_versions()) do set[v] = true end
  for _, crd in ipairs(crds) do add_crd(set, crd) end
  local apis = {}
  for k in pairs(set) do apis[#apis + 1] = k end
  table.sort(apis)
  local kube
  for _, n in ipairs(list_or_empty(run, "v1/Node")) do
    local v = ((n.status or {}).nodeInfo or {}).kubeletVersion
    local mm = type(v) == "string" and v:match("^v?(%d+%.%d+%.%d+)")
    if mm then kube = "v" .. mm break end
  end
  return kube, apis
end

---Run `helm template` once, or `copies` times at once with the same
---inputs (uphook.c.helm's render: each Helm in its own confined child);
---its standard output, or the list of the copies' outputs.
---@param run uphook.Run
---@param t table M.argv's table, with values (a YAML text)
---@param copies? integer 1 to 4: the outputs as a list
---@return string|string[]
function M.template(run, t, copies)
  if not (run.c.helm and run.c.helm.render) then
    error("this uphook was built without Helm rendering (uphook.c.helm)", 0)
  end
  local out, err, note = run.c.helm.render { helm = t.helm,
    args = M.argv(t), values = t.values, timeout = t.timeout or M.TIMEOUT,
    max_output = M.MAX_OUTPUT, memory_limit = M.MEMORY, copies = copies }
  if not out then
    error(string.format("helm template of %s failed: %s", t.chart_name
      or t.chart, tostring(err)), 0)
  end
  if note and not run.helm_network_noted then
    -- the kernel refused Helm a network namespace (docs/security.md "The
    -- render child"): said once per run, in the plan and the upgrade
    run.helm_network_noted = true
    run.report:log("warn", note)
  end
  return out
end

---Whether a chunk of Helm's output is a file of a chart's crds/ folder
---(the chart's own or a subchart's): Helm prints those as they are,
---never through the template engine.
---@param source string the chunk's `# Source:` path
---@return boolean
function M.crd_source(source)
  return (source:match("^[^/]+/crds/") or source:match("/charts/[^/]+/crds/"))
    ~= nil
end

---Helm's output cut at its `---\n# Source: <path>\n` headers (helm/helm
---pkg/cmd/template.go prints each manifest so): chunks {source=, text=,
---objs=} in order, objs the chunk's documents decoded (nulls dropped).
---With `no_crds`, the chunks of crds/ folders are left undecoded (objs
---empty): a second render's, which are the first's byte for byte.
---@param run uphook.Run
---@param out string
---@param no_crds? boolean
---@return table[]
function M.parse(run, out, no_crds)
  local chunks, pos = {}, 1
  out = "\n" .. out
  while true do
    local s, e, src = out:find("\n%-%-%-\n# Source: ([^\n]*)\n", pos)
    if not s then break end
    local nxt = out:find("\n%-%-%-\n# Source: ", e) or #out + 1
    local text = out:sub(e + 1, nxt - 1)
    local ok, docs = true, {}
    if not (no_crds and M.crd_source(src)) then
      ok, docs = pcall(run.c.yaml.decode_all, text)
    end
    if not ok then
      error(string.format("helm template printed YAML that does not parse "
        .. "in %s: %s", src, tostring(docs)), 0)
    end
    local objs = {}
    for _, d in ipairs(docs) do
      if type(d) == "table" and d.kind then objs[#objs + 1] = d end
    end
    chunks[#chunks + 1] = { source = src, text = text, objs = objs }
    pos = nxt
  end
  return chunks
end

local function annotations(obj)
  local md = type(obj.metadata) == "table" and obj.metadata or {}
  return type(md.annotations) == "table" and md.annotations or {}
end

local function split_list(s)
  local out = {}
  for w in tostring(s or ""):gmatch("[^,%s]+") do out[#out + 1] = w end
  return out
end

---The chunks split as a release keeps them: `crds` (objects from a
---chart's crds/ folders: applied, never in the manifest), `hooks` (Helm
---hooks: {obj=, source=, events=, weight=, delete=}), `objects` (the
---rest, each {obj=, source=}) and `manifest` (the text Helm stores).
---@param chunks table[] M.parse's
---@return {crds: table[], hooks: table[], objects: table[], manifest: string}
function M.split(chunks)
  local r = { crds = {}, hooks = {}, objects = {}, manifest = {} }
  for _, ch in ipairs(chunks) do
    local crd_dir = M.crd_source(ch.source)
    local hook = false
    for _, o in ipairs(ch.objs) do
      local a = annotations(o)
      if crd_dir then
        r.crds[#r.crds + 1] = { obj = o, source = ch.source }
      elseif a["helm.sh/hook"] then
        hook = true
        r.hooks[#r.hooks + 1] = { obj = o, source = ch.source,
          events = split_list(a["helm.sh/hook"]),
          weight = math.tointeger(tonumber(a["helm.sh/hook-weight"] or "0")
            or 0) or 0,
          delete = split_list(a["helm.sh/hook-delete-policy"]) }
      else
        r.objects[#r.objects + 1] = { obj = o, source = ch.source }
      end
    end
    if not crd_dir and not hook and #ch.objs > 0 then
      r.manifest[#r.manifest + 1] = "---\n# Source: " .. ch.source .. "\n"
        .. ch.text
    end
  end
  r.manifest = table.concat(r.manifest, "\n")
  return r
end

---Objects in Helm's install order (stable: the rendered order within a
---kind; kinds Helm does not list after, in rendered order).
---@param list table[] items {obj=}
---@return table[]
function M.sort_install(list)
  local idx = {}
  for i, it in ipairs(list) do idx[it] = i end
  local out = { table.unpack(list) }
  table.sort(out, function(a, b)
    local ra = RANK[a.obj.kind] or #M.INSTALL_ORDER + 1
    local rb = RANK[b.obj.kind] or #M.INSTALL_ORDER + 1
    if ra ~= rb then return ra < rb end
    return idx[a] < idx[b]
  end)
  return out
end

---The hooks of one event in the order Helm runs them: weight, then kind
---(install order), then name (helm/helm pkg/action/hooks.go).
---@param hooks table[] M.split's hooks
---@param event string "pre-upgrade", "post-install", ...
---@return table[]
function M.hooks_for(hooks, event)
  local out = {}
  for _, h in ipairs(hooks) do
    for _, e in ipairs(h.events) do
      if e == event then out[#out + 1] = h break end
    end
  end
  table.sort(out, function(a, b)
    if a.weight ~= b.weight then return a.weight < b.weight end
    local ra = RANK[a.obj.kind] or #M.INSTALL_ORDER + 1
    local rb = RANK[b.obj.kind] or #M.INSTALL_ORDER + 1
    if ra ~= rb then return ra < rb end
    return tostring(a.obj.metadata.name) < tostring(b.obj.metadata.name)
  end)
  return out
end

local function id(obj, ns)
  local md = obj.metadata or {}
  return table.concat({ tostring(obj.apiVersion), tostring(obj.kind),
    tostring(md.namespace or ns or ""), tostring(md.name) }, "/")
end
M.id = id

-- the leaf paths where a and b differ (lists compared whole)
local function diff_paths(a, b, path, out)
  if type(a) == "table" and type(b) == "table" and a[1] == nil
     and b[1] == nil then
    local keys = {}
    for k in pairs(a) do keys[k] = true end
    for k in pairs(b) do keys[k] = true end
    for k in pairs(keys) do
      local p = { table.unpack(path) }
      p[#p + 1] = k
      diff_paths(a[k], b[k], p, out)
    end
  elseif not tables.equal(a, b) then
    out[#out + 1] = path
  end
  return out
end

---The fields a chart generates (`rand*`, `genCA`, `lookup`...): those
---that differ between two renders of the same inputs, by object id.
---@param a table[] the first render's items {obj=}
---@param b table[] the second's
---@param ns string the release namespace (objects that name none)
---@return table<string, string[][]> paths by M.id
function M.generated(a, b, ns)
  local other, out = {}, {}
  for _, it in ipairs(b) do other[id(it.obj, ns)] = it.obj end
  for _, it in ipairs(a) do
    local k = id(it.obj, ns)
    local paths = other[k] and diff_paths(it.obj, other[k], {}, {}) or {}
    if #paths > 0 then out[k] = paths end
  end
  return out
end

local function at(t, path)
  for _, k in ipairs(path) do
    if type(t) ~= "table" then return nil end
    t = t[k]
  end
  return t
end

---Give `obj` the live object's value at each generated path that the
---live object has: what a chart generates stays as it was generated the
---first time. The paths kept, as "a.b.c" strings.
---@param obj table the rendered object (changed in place)
---@param paths string[][]
---@param live table|nil
---@return string[] kept
function M.keep_live(obj, paths, live)
  local kept = {}
  if not live then return kept end
  for _, p in ipairs(paths) do
    local v = at(live, p)
    if v ~= nil then
      local t = obj
      for i = 1, #p - 1 do
        if type(t[p[i]]) ~= "table" then t[p[i]] = {} end
        t = t[p[i]]
      end
      t[p[#p]] = tables.copy(v)
      kept[#kept + 1] = table.concat(p, ".")
    end
  end
  table.sort(kept)
  return kept
end

---The object's name for messages: `Kind ns/name`.
---@param obj table
---@return string
function M.name(obj)
  return obj.kind .. " " .. kinds.objname(obj)
end

return M

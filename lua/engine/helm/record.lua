--- uphook.engine.helm.record: a Helm release record in Helm's own Secret
--- storage (docs/reference.md "helm"; docs/guide.md "Helm addons"), read
--- and written so that Helm 3 and Helm 4 keep managing the release.
---
--- Helm's Secret driver (helm/helm pkg/storage/driver/secrets.go and
--- util.go, the same in v3.17.2 and v4): one Secret per revision, named
--- `sh.helm.release.v1.<release>.v<revision>`, of type
--- `helm.sh/release.v1`, labelled name=<release>, owner=helm,
--- status=<status>, version=<revision> (and createdAt/modifiedAt, Unix
--- seconds), whose `data.release` is base64 of gzip of the release as
--- JSON (pkg/release/v1/release.go): name, namespace, version, info
--- {first_deployed, last_deployed, description, status, notes}, chart
--- {metadata, lock, templates, values, schema, files} (file data as
--- base64, Go's []byte), config (the user's values), manifest, hooks.
--- The Secret's own data is base64 again on the wire (`kubectl get -o
--- yaml` shows base64 of base64). Helm 4 adds `apply_method` ("ssa"
--- after a server-side apply); Helm 3 ignores fields it does not know.
local M = {}

M.PREFIX = "sh.helm.release.v1."
M.TYPE = "helm.sh/release.v1"
M.MAX_REVISIONS = 10           -- Helm's default --history-max
M.MAX_SECRET = 1 << 20         -- the API server's limit on a Secret
M.MAX_JSON = 64 << 20          -- what a record may inflate to

-- the statuses of a revision still under way (or stopped there)
M.PENDING = { ["pending-install"] = true, ["pending-upgrade"] = true,
  ["pending-rollback"] = true, failed = true }

---The Secret name of one revision.
---@param name string the release
---@param revision integer
---@return string
function M.secret_name(name, revision)
  return M.PREFIX .. name .. ".v" .. revision
end

---A release name as Helm takes it (helm/helm pkg/chartutil ValidateReleaseName:
---a DNS-1123 label of at most 53 characters).
---@param name any
---@return boolean
function M.valid_name(name)
  return type(name) == "string" and #name >= 1 and #name <= 53
    and name:match("^[a-z0-9][-a-z0-9]*$") ~= nil
    and name:sub(-1) ~= "-"
end

---The release in a Secret's data.release: on the wire base64 of the
---record text, which is Helm's base64 of gzip of JSON (an old record
---without gzip is read too, as Helm does), and that JSON text.
---@param c table the C families (c.helm, c.json)
---@param data string the Secret's `data.release` as the API serves it
---@return table|nil rel, string|nil err, string|nil json
function M.decode(c, data)
  if type(data) ~= "string" then return nil, "no data.release" end
  local text, err = c.helm.b64decode(data)     -- the Secret's base64
  if not text then return nil, err end
  local raw
  raw, err = c.helm.b64decode(text)            -- Helm's own base64
  if not raw then return nil, err end
  if raw:sub(1, 3) == "\31\139\8" then
    raw, err = c.helm.gunzip(raw, M.MAX_JSON)
    if not raw then return nil, err end
  end
  local ok, rel = pcall(c.json.decode, raw)
  if not ok or type(rel) ~= "table" then
    return nil, "not a release record: " .. tostring(rel)
  end
  return rel, nil, raw
end

---How many bytes a Secret's data.release (as the API takes it, base64)
---holds: what the API server counts against a Secret's 1 MiB
---(ValidateSecret sums the decoded values), here Helm's base64 text.
---@param data string
---@return integer
function M.data_size(data)
  -- the padding read at the end, not matched: a pattern scan of the
  -- ~0.8 MB took ~12 ms
  local pad = data:sub(-2) == "==" and 2 or data:sub(-1) == "=" and 1 or 0
  return #data // 4 * 3 - pad
end

-- zlib level 3: on the Traefik chart's record (2.6 MB of JSON) 2.3 times
-- as fast as level 6 for a 17% bigger record, which still fits a Secret
-- (docs/bench.md "The Helm upgrade"); one that would not fit is
-- compressed at the best level, Helm's own.
M.GZIP_LEVEL = 3

---The Secret's data.release of a release (as the API takes it: base64 of
---Helm's base64 of gzip of JSON), at M.GZIP_LEVEL, or at the best level
---when that would not fit a Secret (Helm reads either).
---@param c table
---@param rel table
---@param json? string rel as JSON already (M.restatus)
---@return string
function M.encode(c, rel, json)
  json = json or c.json.encode(rel)
  local text = c.helm.b64encode(c.helm.gzip(json, M.GZIP_LEVEL))
  if #text > M.MAX_SECRET then
    text = c.helm.b64encode(c.helm.gzip(json, 9))
  end
  return c.helm.b64encode(text)
end

---The Secret that holds revision `rel.version` of a release.
---@param c table
---@param rel table the release record
---@param now integer Unix seconds (createdAt)
---@param json? string rel as JSON already (M.restatus)
---@return table secret
function M.secret(c, rel, now, json)
  return { apiVersion = "v1", kind = "Secret", type = M.TYPE,
    metadata = { name = M.secret_name(rel.name, rel.version),
      namespace = rel.namespace,
      labels = { name = rel.name, owner = "helm",
        status = rel.info.status, version = tostring(rel.version),
        createdAt = tostring(math.floor(now)) } },
    data = { release = M.encode(c, rel, json) } }
end

---The JSON text of a record with its info.status changed, made from the
---text the record was read from (M.load's cache) rather than by encoding
---the record again (on the Traefik chart's 2.6 MB record the encode took
---~45 ms). Inside a JSON string every quote is escaped, so the text
---`"status":"<from>"` only occurs as an object's key and value: when it
---occurs once, that is info.status (the record says from), and it is
---replaced; otherwise (a values key of the same name and value, or a
---writer that spaces its JSON) nil, and the caller encodes the record.
---@param json string the record's JSON text
---@param from string its info.status
---@param to string
---@return string|nil
function M.restatus(json, from, to)
  if not (from:match("^[%w-]+$") and to:match("^[%w-]+$")) then
    return nil
  end
  local field = '"status":"' .. from .. '"'
  local i, j = json:find(field, 1, true)
  if not i or json:find(field, j + 1, true) then return nil end
  return json:sub(1, i - 1) .. '"status":"' .. to .. '"' .. json:sub(j + 1)
end

local function revision_of(s)
  local v = tonumber(((s.metadata or {}).labels or {}).version or "")
  if not v then
    v = tonumber((s.metadata.name or ""):match("%.v(%d+)$") or "")
  end
  return v
end

---Every revision of a release: {revision=, status=, meta=} sorted by
---revision, from one metadata-only LIST of the labels Helm queries
---(owner=helm, name=<name>): name, labels and resourceVersion say the
---revision and its status; a record is read only where needed (M.load).
---@param backend table
---@param name string
---@param namespace string
---@return table[]
function M.revisions(backend, name, namespace)
  local out = {}
  for _, s in ipairs(backend:list("v1/Secret", { namespace = namespace,
      labels = { owner = "helm", name = name }, metadata = true })) do
    local v = revision_of(s)
    if v and (s.type == nil or s.type == M.TYPE) then
      out[#out + 1] = { revision = v, meta = s,
        status = s.metadata.labels.status }
    end
  end
  table.sort(out, function(a, b) return a.revision < b.revision end)
  return out
end

---Does the release exist in Helm's ConfigMap driver (HELM_DRIVER=configmap)?
---@param backend table
---@param name string
---@param namespace string
---@return boolean
function M.in_configmaps(backend, name, namespace)
  local ok, l = pcall(backend.list, backend, "v1/ConfigMap",
    { namespace = namespace, labels = { owner = "helm", name = name } })
  return ok and #l > 0
end

---The record of one revision (of M.revisions) and its whole Secret,
---read once per run: `cache` (the run's) keeps both, and the record's
---JSON text, by the Secret's uid and resourceVersion, so a later read
---whose metadata LIST shows the same resourceVersion costs no GET (a
---hook's helm.release in detect and upgrade and the helm.upgrade after
---them read the record once, and helm.upgrade supersedes it without
---reading or encoding it again, M.restatus). Callers must not change what
---it returns (copy first).
---@param c table
---@param backend table
---@param r table a revision of M.revisions
---@param cache? table
---@return table|nil rec, table|nil secret, string|nil err, string|nil json
function M.load(c, backend, r, cache)
  local md = r.meta.metadata
  local key = md.uid and md.resourceVersion
    and (md.uid .. "@" .. md.resourceVersion)
  local hit = key and cache and cache[key]
  if hit then return hit.rec, hit.secret, nil, hit.json end
  local s = backend:get("v1/Secret", md.name, md.namespace)
  if not s then return nil, nil, "deleted since it was listed" end
  if s.type ~= M.TYPE then
    return nil, nil, "its Secret is of type " .. tostring(s.type)
      .. ", not " .. M.TYPE
  end
  local rec, err, json = M.decode(c, type(s.data) == "table"
    and s.data.release)
  if not rec then return nil, nil, err end
  local smd = s.metadata
  if cache and smd.uid and smd.resourceVersion then
    cache[smd.uid .. "@" .. smd.resourceVersion] = { rec = rec, secret = s,
      json = json }
  end
  return rec, s, nil, json
end

---The record of one revision (M.load), or an error naming the release
---and the revision.
---@param c table
---@param backend table
---@param r table
---@param name string
---@param cache? table
---@return table rec, table secret
function M.must_load(c, backend, r, name, cache)
  local rec, s, err = M.load(c, backend, r, cache)
  if not rec then
    error(string.format("helm release %s: revision %d cannot be read: %s",
      name, r.revision, err), 0)
  end
  return rec, s
end

---The release as a hook sees it: the highest deployed revision, and the
---newest one above it that is pending or failed. nil when there is none.
---`current`: the decoded record of that revision; `pending_rec` its
---pending one's.
---@param c table the C families
---@param backend table
---@param revs table[] M.revisions'
---@param name string
---@param cache? table records read this run (M.load)
---@return table|nil release, table|nil current, table|nil pending
function M.find(c, backend, revs, name, cache)
  local deployed, pending
  for _, r in ipairs(revs) do
    if r.status == "deployed" then deployed = r end
  end
  for _, r in ipairs(revs) do
    if M.PENDING[r.status] and (not deployed or r.revision >
        deployed.revision) then
      pending = r
    end
  end
  local base = deployed or pending
  if not base then return nil end
  local rec = M.must_load(c, backend, base, name, cache)
  local md = (rec.chart or {}).metadata or {}
  local out = { name = rec.name or name, namespace = rec.namespace,
    revision = base.revision, status = base.status,
    chart = { name = md.name, version = md.version,
      app_version = md.appVersion } }
  if pending and pending ~= base then
    out.pending = { revision = pending.revision, status = pending.status }
  end
  return out, rec, pending
end

return M

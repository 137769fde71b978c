--- uphook.engine.helm.chart: a packaged chart (.tgz) as a Helm release
--- record keeps it (helm/helm pkg/chart/v2/chart.go: metadata, lock,
--- templates, values, schema, files; file data as base64, Go's []byte).
--- The archive is read by uphook.c.helm's chart (libarchive, bounded);
--- subcharts (charts/) are not kept, as Helm keeps only the top chart.
local M = {}

-- files Helm keeps in fields of their own, not in `files`
local OWN = { ["Chart.yaml"] = true, ["values.yaml"] = true,
  ["values.schema.json"] = true, ["Chart.lock"] = true,
  ["requirements.yaml"] = true, ["requirements.lock"] = true }

---The chart at `path` (absolute): {metadata=, record=} where record is
---the chart as the release JSON holds it.
---@param run uphook.Run
---@param path string absolute path of the .tgz
---@param shown string the chart as the hook named it, for messages
---@return {metadata: table, record: table, crds: table[]} crds: the CRDs of its crds/ folder
function M.read(run, path, shown)
  local c = run.c
  if not (c.helm and c.helm.chart) then
    error("this uphook was built without Helm support (uphook.c.helm)", 0)
  end
  local ch, err = c.helm.chart(path)
  if not ch then
    error(string.format("helm chart %s cannot be read: %s", shown,
      tostring(err)), 0)
  end
  local files = ch.files or {}
  local function yaml_of(name)
    if not files[name] then return nil end
    local ok, v = pcall(run.c.yaml.decode, files[name])
    if not ok then
      error(string.format("helm chart %s: %s does not parse: %s", shown,
        name, tostring(v)), 0)
    end
    return v ~= run.null and v or nil
  end
  local md = yaml_of("Chart.yaml")
  if type(md) ~= "table" or type(md.name) ~= "string"
     or md.version == nil then
    error(string.format("helm chart %s has no Chart.yaml with a name and a "
      .. "version", shown), 0)
  end
  md.version = tostring(md.version)
  if md.appVersion ~= nil then md.appVersion = tostring(md.appVersion) end
  local names = {}
  for n in pairs(files) do names[#names + 1] = n end
  table.sort(names)
  local arr = c.json.array or function(t) return t end
  local templates, other = arr {}, arr {}
  for _, n in ipairs(names) do
    local f = { name = n, data = c.helm.b64encode(files[n]) }
    if n:sub(1, 10) == "templates/" then
      templates[#templates + 1] = f
    elseif not OWN[n] and n:sub(1, 7) ~= "charts/" then
      other[#other + 1] = f
    end
  end
  local crds = {}
  for _, n in ipairs(names) do
    if n:match("^crds/.*%.ya?ml$") then
      local ok, docs = pcall(run.c.yaml.decode_all, files[n])
      for _, d in ipairs(ok and docs or {}) do crds[#crds + 1] = d end
    end
  end
  local record = { metadata = md, lock = yaml_of("Chart.lock") or c.json.null,
    templates = templates, values = yaml_of("values.yaml") or {},
    schema = files["values.schema.json"]
      and c.helm.b64encode(files["values.schema.json"]) or c.json.null,
    files = other }
  return { metadata = md, record = record, crds = crds }
end

return M

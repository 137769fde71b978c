--- uphook.core.redact: Secret values never reach a plan, an upgrade's output
--- or a JSON event (docs/security.md, "What the user sees").
---
--- The `data` and `stringData` values of a Secret are replaced, in every
--- recorded change, by
---
---     { redacted = true, bytes = N, hmac = "<12 hex>" }
---
--- `bytes` is the length of the secret itself (a `data` value decoded
--- from base64); `hmac` is the first 12 hex digits of HMAC-SHA256 of the
--- value under a key drawn for this run (OpenSSL, host/hash.c), so two
--- redacted values of one run can be compared, and a short password
--- cannot be guessed from a plain hash. Text shows `(redacted, N bytes)`.
local M = {}

---Is this object a Secret (core v1)?
---@param obj table|nil
---@return boolean
function M.is_secret(obj)
  return type(obj) == "table" and obj.kind == "Secret"
    and (obj.apiVersion == "v1" or obj.apiVersion == nil)
end

---The redaction of one value of a Secret's `field` ("data" or
---"stringData"), under the run's key (drawn on first use).
---@param run table the run record (holds the key; run.c.hash is c.hash)
---@param field string
---@param v any
---@return table|nil
function M.value(run, field, v)
  if v == nil or type(v) ~= "string" then
    return v ~= nil and { redacted = true } or nil
  end
  if not run.redact_key then run.redact_key = run.c.hash.random_key() end
  local n = field == "data" and run.c.hash.b64_size(v) or #v
  return { redacted = true, bytes = n,
    hmac = run.c.hash.hmac_sha256(run.redact_key, v):sub(1, 12) }
end

---Is v a redaction made here?
---@param v any
---@return boolean
function M.is(v)
  return type(v) == "table" and v.redacted == true
end

---Its text: `(redacted, N bytes)`.
---@param v table
---@return string
function M.text(v)
  if not v.bytes then return "(redacted)" end
  return string.format("(redacted, %d byte%s)", v.bytes,
    v.bytes == 1 and "" or "s")
end

return M

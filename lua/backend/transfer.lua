--- uphook.backend.transfer: the transfer backends (`run.net`, separate
--- from the cluster backend; docs/downloads.md): libcurl in the broker
--- for live runs and `--offline`, and a table of answers for `uphook
--- test`. Each has fetch(t), download(t) and head(t), t the option table
--- of uphook.c.http; both verify and cache through the same C code.
local M = {}

-- The answer of downloads (url -> {body=, file=, root=, status=}) to the
-- transfer t: the body, or nil, the error, its reason and HTTP status.
local function mock_answer(c, downloads, t)
  local d = downloads[t.url]
  if d == nil then
    return nil, "no mock download for " .. t.url
      .. " (add it to t.env{downloads = ...})"
  end
  if d.status and d.status >= 400 then
    return nil, string.format("%s: HTTP %d", t.url, d.status), "HTTPError",
      d.status
  end
  local body = d.body
  if body == nil and d.file then
    -- beneath d.root when given (uphook test: the test file's folder)
    local ok, err
    if d.root then ok, body, err = pcall(c.fs.read, d.root, d.file)
    else ok, body, err = true, c.sys.read(d.file) end
    if not ok then body, err = nil, body end
    if not body then return nil, tostring(err or ("no file " .. d.file)) end
  end
  if body == nil then
    return nil, t.url .. ": the mock download has no body or file"
  end
  if t.max_bytes and #body > t.max_bytes then
    return nil, string.format("%s: body exceeds max_bytes (%d)", t.url,
      t.max_bytes), "TooLarge"
  end
  return body
end

---Transfers answered from a table: url -> {body=, file=, status=}.
---The verify-and-cache step is the live one (http.store), and, as with
---the live one, a file already in the cache is not transferred again:
---`calls` lists only the URLs really transferred, `heads` the HEADs.
---@param c table the C families
---@param downloads table<string, table> url -> {body=, file=, root=, status=}
---@return table net a transfer backend with calls and heads
function M.mock(c, downloads)
  local function answer(t) return mock_answer(c, downloads, t) end
  return {
    calls = {}, heads = {},
    fetch = function(self, t)
      self.calls[#self.calls + 1] = t.url
      local body, err, reason, status = answer(t)
      if not body then return nil, err, reason, status end
      if t.sha256 and c.hash.sha256(body) ~= t.sha256:lower() then
        return nil, string.format("sha256 mismatch for %s: expected %s, "
          .. "got %s", t.url, t.sha256, c.hash.sha256(body)),
          "ChecksumMismatch"
      end
      return body
    end,
    download = function(self, t)
      -- like the live one: a cached file is used once it is hashed again
      local cached = c.http.cached(t.cache_dir, t.sha256)
      if cached then
        return { path = cached, sha256 = t.sha256, cached = true }
      end
      self.calls[#self.calls + 1] = t.url
      local body, err, reason, status = answer(t)
      if not body then return nil, err, reason, status end
      return c.http.store { body = body, sha256 = t.sha256,
        cache_dir = t.cache_dir, url = t.url, max_bytes = t.max_bytes }
    end,
    head = function(self, t)
      self.heads[#self.heads + 1] = t.url
      local d = downloads[t.url]
      if d == nil then return nil, "no mock download for " .. t.url end
      return d.status or 200
    end,
  }
end

---The live transfer backend: libcurl in this (the broker) process.
---@param c table the C families
---@return table net
function M.live(c)
  return {
    fetch = function(_, t) return c.http.fetch(t) end,
    download = function(_, t) return c.http.download(t) end,
    head = function(_, t)
      return c.http.head { url = t.url, hosts = t.hosts,
        http_hosts = t.http_hosts, ca_file = t.ca_file,
        deadline = t.deadline }
    end,
  }
end

return M

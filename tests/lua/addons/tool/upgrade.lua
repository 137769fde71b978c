-- Test addon for net.download, net.fetch, hash.file and config.install
-- (tests/lua/net_test.lua). What it does is chosen by its parameters.
local function opt(v) if v ~= "" then return v end end
local function int(v) if v ~= "" then return math.tointeger(tonumber(v)) end end

return {
  version = "2.0.0", from = ">=1.0.0 <2.0.0",
  description = "downloads a tool and installs it in bin:",
  permissions = { "kube:default", "net:example.com", "net:http://plain.example",
    "net:mirror.example:8443", "bin:tool", "bin:tool2" },
  params = {
    url = { default = "https://example.com/v2/tool" },
    sha256 = { default = "" },
    sums = { default = "" },          -- opts.sha256_url
    max = { default = "" },           -- opts.max_bytes
    dest = { default = "bin:tool" },  -- "" installs nothing
    mode = { default = "0755" },
    before = { default = "" },        -- "apply": a change before the download
    extra = { default = "" },         -- a second download, into bin:tool2
    ["extra-sha256"] = { default = "" },
    fetch = { default = "" },         -- net.fetch this URL instead
    check = { default = "" },         -- "download" / "fetch" during check
  },
  detect = function() return "1.0.0" end,
  check = function(ctx)
    local p = ctx.params
    if p.check == "download" then net.download(p.url, { sha256 = p.sha256 })
    elseif p.check == "fetch" then net.fetch(p.url) end
  end,
  upgrade = function(ctx)
    local p = ctx.params
    local function record(data)
      kube.apply { apiVersion = "v1", kind = "ConfigMap",
        metadata = { name = "tool", namespace = "default" }, data = data }
    end
    if p.before == "apply" then record { stage = "before" } end
    if p.fetch ~= "" then
      local body = net.fetch(p.fetch, { sha256 = opt(p.sha256),
        max_bytes = int(p.max) })
      record { fetched = hash.sha256(body), size = tostring(#body) }
      return
    end
    local f = net.download(p.url, { sha256 = opt(p.sha256),
      sha256_url = opt(p.sums), max_bytes = int(p.max) })
    local data = { downloaded = hash.file(f), token = f }
    if p.dest ~= "" then
      config.install(f, p.dest, { mode = opt(p.mode) })
      if not ctx.plan then data.installed = hash.file(p.dest) end
    end
    if p.extra ~= "" then
      local g = net.download(p.extra, { sha256 = p["extra-sha256"] })
      config.install(g, "bin:tool2", { mode = "0755" })
    end
    record(data)
  end,
}

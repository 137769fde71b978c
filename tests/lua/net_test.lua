-- net.download, net.fetch, hash.file and config.install through the
-- engine, against the mock transfers of t.env{downloads = ...} (which
-- verify and cache with the live code, host/http.c's store).
local t = require "uphook.test"
local C = require("uphook.core.cfamilies").load()

local URL = "https://example.com/v2/tool"
local BODY = "#!/bin/sh\necho tool 2.0\n"
local SUM = C.hash.sha256(BODY)
local OTHER = C.hash.sha256("something else")
local SUMS = "https://example.com/v2/SHA256SUMS"

local function env(extra)
  local o = { addon = "addons/tool", downloads = { [URL] = { body = BODY } } }
  for k, v in pairs(extra or {}) do o[k] = v end
  return t.env(o)
end

local function mode_of(e, path)
  local root, rel = path:match("^(%a+):(.+)$")
  local st = C.fs.stat(e.roots[root], rel)
  return st and st.mode
end

local function cached(e, sum)
  return C.sys.kind(e.cache_dir .. "/sha256/" .. sum) == "file"
end

-- nothing but verified files in the cache, nothing left in its temp folder
local function cache_clean(e)
  local left = C.sys.listdir(e.cache_dir .. "/tmp") or {}
  return #left == 0
end

t.case("download with sha256, install into bin: with mode 0755", function()
  local e = env()
  local r = e:upgrade { "--sha256=" .. SUM }
  t.eq(r.code, 0, r.error)
  t.eq(e:file("bin:tool"), BODY)
  t.eq(mode_of(e, "bin:tool"), "0755")
  t.ok(cached(e, SUM), "the verified file is in the cache")
  local cm = e:get("ConfigMap", "tool", "default")
  t.eq(cm.data.downloaded, SUM, "hash.file of the downloaded file")
  t.eq(cm.data.installed, SUM, "hash.file of bin:tool")
  t.eq(cm.data.token, "cache:" .. SUM)
  t.eq(e.net.calls, { URL })
  t.eq(#e:calls("net.download"), 1)
  t.eq(e:state().version, "2.0.0")
end)

t.case("an upper-case sha256 is accepted", function()
  local r = env():upgrade { "--sha256=" .. SUM:upper() }
  t.eq(r.code, 0, r.error)
end)

t.case("the default mode is 0644; a mode is an octal string", function()
  local e = env()
  t.eq(e:upgrade({ "--sha256=" .. SUM, "--mode=" }).code, 0)
  t.eq(mode_of(e, "bin:tool"), "0644")
  local r = env():upgrade { "--sha256=" .. SUM, "--mode=755x" }
  t.eq(r.code, 4)
  t.match(r.error, "mode must be an octal string")
end)

t.case("a downloads entry may name a fixture file", function()
  local body = assert(C.sys.read("tests/lua/fixtures_tool.bin"))
  local e = env { downloads = { [URL] = "fixtures_tool.bin" } }
  local r = e:upgrade { "--sha256=" .. C.hash.sha256(body) }
  t.eq(r.code, 0, r.error)
  t.eq(e:file("bin:tool"), body)
end)

t.case("sha256_url: a GNU checksum file, matched by file name", function()
  local sums = OTHER .. "  other\n" .. SUM .. " *tool\n"
  local e = env { downloads = { [URL] = { body = BODY },
    [SUMS] = { body = sums } } }
  local r = e:upgrade { "--sums=" .. SUMS }
  t.eq(r.code, 0, r.error)
  t.eq(e:file("bin:tool"), BODY)
  t.eq(e.net.calls, { SUMS, URL })
  t.eq(r.plan[1].sha256, SUM)
end)

t.case("sha256_url: a BSD checksum file", function()
  local sums = "SHA256 (other) = " .. OTHER .. "\nSHA256 (tool) = "
    .. SUM:upper() .. "\n"
  local e = env { downloads = { [URL .. "?arch=amd64"] = { body = BODY },
    [SUMS] = { body = sums } } }
  local r = e:upgrade { "--url=" .. URL .. "?arch=amd64", "--sums=" .. SUMS }
  t.eq(r.code, 0, r.error)
  t.eq(e:file("bin:tool"), BODY)
end)

t.case("sha256_url without an entry for the file names it and the URL", function()
  local e = env { downloads = { [URL] = { body = BODY },
    [SUMS] = { body = OTHER .. "  other\n" } } }
  local r = e:upgrade { "--sums=" .. SUMS }
  t.eq(r.code, 4)
  t.match(r.error, "no sha256 for tool in the checksum file")
  t.match(r.error, SUMS:gsub("%p", "%%%0"))
  t.eq(e:file("bin:tool"), nil)
  t.eq(e.net.calls, { SUMS })
end)

t.case("a download without a checksum is refused before any transfer", function()
  local e = env()
  local r = e:upgrade {}
  t.eq(r.code, 4)
  t.match(r.error, "a checksum is required")
  t.eq(e.net.calls, {})
  local r2 = env():upgrade { "--sha256=abc" }
  t.match(r2.error, "a checksum is required")
end)

t.case("the cache: a second run downloads nothing", function()
  local e = env()
  t.eq(e:upgrade({ "--sha256=" .. SUM }).code, 0)
  e:seed_state { version = "1.0.0" }
  C.fs.remove(e.roots.bin, "tool")
  local r = e:upgrade { "--sha256=" .. SUM }
  t.eq(r.code, 0, r.error)
  t.eq(#e:calls("net.download"), 2, "the hook asked twice")
  t.eq(e.net.calls, { URL }, "one transfer")
  t.eq(e:file("bin:tool"), BODY)
end)

t.case("a mismatch shows both sums and the URL, installs and caches nothing", function()
  local e = env()
  local before = e:snapshot()
  local r = e:upgrade { "--sha256=" .. OTHER }
  t.eq(r.code, 4)
  t.match(r.error, "sha256 mismatch for " .. URL:gsub("%p", "%%%0"))
  t.match(r.error, "expected " .. OTHER)
  t.match(r.error, "got " .. SUM)
  t.eq(e:file("bin:tool"), nil)
  t.ok(not cached(e, OTHER) and not cached(e, SUM), "nothing cached")
  t.ok(cache_clean(e), "no temp file left")
  t.eq(e:snapshot(), before)
  t.eq(e:state(), nil)
  t.eq(C.sys.kind(e.journal_path), nil, "no journal left")
end)

t.case("a mismatch after changes rolls them back", function()
  local e = env { files = { ["bin:tool"] = "old tool\n" },
    downloads = { [URL] = { body = BODY },
      ["https://example.com/v2/tool2"] = { body = "tool2" } } }
  local before = e:snapshot()
  local old_mode = mode_of(e, "bin:tool")
  local r = e:upgrade { "--sha256=" .. SUM, "--before=apply",
    "--extra=https://example.com/v2/tool2", "--extra-sha256=" .. OTHER }
  t.eq(r.code, 1)
  t.match(r.error, "sha256 mismatch for https://example.com/v2/tool2")
  t.eq(e:snapshot(), before)
  t.eq(e:file("bin:tool"), "old tool\n", "the previous binary is back")
  t.eq(mode_of(e, "bin:tool"), old_mode)
  t.eq(e:file("bin:tool2"), nil)
  t.eq(C.sys.kind(e.journal_path), nil, "no journal left")
  t.eq(C.sys.listdir(e.journal_path:match("^(.*)/")), {}, "no backup left")
end)

t.case("rollback of an install restores the previous binary", function()
  local e = env { files = { ["bin:tool"] = "old tool\n" } }
  local before, old_mode = e:snapshot(), mode_of(e, "bin:tool")
  e:fail { on = "kube.apply", kind = "ConfigMap", error = "boom" }
  local r = e:upgrade { "--sha256=" .. SUM }
  t.eq(r.code, 1)
  t.match(r.error, "boom")
  t.eq(e:file("bin:tool"), "old tool\n")
  t.eq(mode_of(e, "bin:tool"), old_mode)
  t.eq(e:snapshot(), before)
  t.eq(e:state(), nil)
  t.eq(C.sys.listdir(e.journal_path:match("^(.*)/")), {}, "no journal or backup left")
end)

t.case("rollback of an install removes a new binary", function()
  local e = env()
  e:fail { on = "kube.apply", kind = "ConfigMap", error = "boom" }
  local r = e:upgrade { "--sha256=" .. SUM }
  t.eq(r.code, 1)
  t.eq(e:file("bin:tool"), nil)
  t.eq(C.sys.listdir(e.roots.bin), {})
end)

t.case("a failed install changes nothing and leaves no journal", function()
  local e = env { files = { ["bin:tool"] = "old tool\n" } }
  e:fail { on = "config.install", path = "bin:tool", error = "disk full" }
  local r = e:upgrade { "--sha256=" .. SUM }
  t.eq(r.code, 4)
  t.match(r.error, "disk full")
  t.eq(e:file("bin:tool"), "old tool\n")
  t.eq(C.sys.listdir(e.journal_path:match("^(.*)/")), {})
end)

t.case("a failed second install rolls back the first", function()
  local e = env { downloads = { [URL] = { body = BODY },
    ["https://example.com/v2/tool2"] = { body = "tool2" } } }
  e:fail { on = "config.install", path = "bin:tool2", error = "disk full" }
  local r = e:upgrade { "--sha256=" .. SUM,
    "--extra=https://example.com/v2/tool2",
    "--extra-sha256=" .. C.hash.sha256("tool2") }
  t.eq(r.code, 1)
  t.match(r.error, "disk full")
  t.eq(e:file("bin:tool"), nil)
  t.eq(e:file("bin:tool2"), nil)
end)

t.case("plan lists the download (URL, sha256, destination), performs nothing", function()
  local e = env { files = { ["bin:tool"] = "old tool\n" } }
  local r = e:plan { "--sha256=" .. SUM }
  t.eq(r.code, 0, r.error)
  local d = r.plan[1]
  t.eq(d.type, "download")
  t.eq(d.url, URL)
  t.eq(d.sha256, SUM)
  t.eq(d.dest, "bin:tool (mode 0755)")
  t.eq(d.status, nil, "no HEAD without --plan-fetch")
  t.eq(e.net.calls, {})
  t.eq(e.net.heads, {})
  t.eq(e:file("bin:tool"), "old tool\n")
  t.ok(not cached(e, SUM))
  t.match(require("uphook.engine.plantext").render(r.plan),
    "download https://example.com/v2/tool\n      sha256 " .. SUM
    .. "\n      %-> bin:tool %(mode 0755%)")
  t.match(require("uphook.engine.plan").summary_line(r.plan),
    "1 file changed, 1 download")
end)

-- what a yes granted before (docs/security.md, "Consent"): a plan reaches
-- only the hosts the state records
local GRANTED = { version = "1.0.0", permissions = { "kube:default",
  "net:example.com", "net:http://plain.example", "net:mirror.example:8443",
  "bin:tool", "bin:tool2" } }

t.case("plan with sha256_url fetches only the checksum file", function()
  local e = env { state = GRANTED, downloads = { [URL] = { body = BODY },
    [SUMS] = { body = SUM .. "  tool\n" } } }
  local r = e:plan { "--sums=" .. SUMS }
  t.eq(r.code, 0, r.error)
  -- the fetch that plan makes is in the plan, before it leaves
  -- (docs/security.md "Unchecked reads")
  t.eq(r.plan[1].type, "fetch")
  t.eq(r.plan[1].text, SUMS)
  t.eq(r.plan[2].sha256, SUM)
  t.eq(e.net.calls, { SUMS })
  t.match(require("uphook.engine.plantext").render(r.plan), "^  fetch "
    .. SUMS:gsub("%p", "%%%0") .. "\n")
end)

t.case("plan --plan-fetch reports the HEAD status of each download", function()
  local e = env { plan_fetch = true, state = GRANTED,
    downloads = { [URL] = { body = BODY },
    ["https://example.com/gone"] = { status = 404 } } }
  local r = e:plan { "--sha256=" .. SUM }
  t.eq(r.code, 0, r.error)
  t.eq(r.plan[1].status, 200)
  t.eq(r.plan[1].answers, true)
  t.eq(e.net.heads, { URL })
  t.eq(e.net.calls, {})
  local r2 = e:plan { "--sha256=" .. SUM, "--url=https://example.com/gone" }
  t.eq(r2.code, 0, r2.error)
  t.eq(r2.plan[1].status, 404)
  t.eq(r2.plan[1].answers, false)
  t.match(require("uphook.engine.plantext").render(r2.plan),
    "HEAD: 404 %(does not answer%)")
end)

t.case("before the yes, a plan sends no request to a host not granted: "
  .. "the checksum file and the probe wait for the yes", function()
  local e = env { plan_fetch = true, downloads = { [URL] = { body = BODY },
    [SUMS] = { body = SUM .. "  tool\n" } } }
  local r = e:plan { "--sums=" .. SUMS }
  t.eq(r.code, 4)
  t.match(r.error, "net%.download%(" .. SUMS:gsub("%p", "%%%0")
    .. "%): withheld until your yes")
  t.eq(r.plan[#r.plan].type, "after_yes")
  t.eq(r.plan[#r.plan].text, "net.download " .. SUMS)
  local r2 = e:plan { "--sha256=" .. SUM }
  t.eq(r2.code, 0, r2.error)
  t.eq(r2.plan[1].type, "download")
  t.eq(r2.plan[1].status, "after your yes")
  t.match(require("uphook.engine.plantext").render(r2.plan),
    "after your yes: probe " .. URL:gsub("%p", "%%%0"))
  t.eq(e.net.calls, {})
  t.eq(e.net.heads, {})
end)

t.case("before the yes, check's net.fetch is refused; after it, upgrade's "
  .. "goes", function()
  local e = env { state = { version = "1.0.0", permissions = { "kube:default" } } }
  local r = e:plan { "--check=fetch", "--sha256=" .. SUM }
  t.eq(r.code, 4)
  t.match(r.error, "check failed: .*net%.fetch%(" .. URL:gsub("%p", "%%%0")
    .. "%): withheld until your yes")
  t.eq(e.net.calls, {})
  -- an upgrade: the yes (t.env answers it) comes before check
  local r2 = e:upgrade { "--check=fetch", "--sha256=" .. SUM }
  t.eq(r2.code, 0, r2.error)
  t.eq(e.net.calls, { URL, URL })
end)

t.case("permissions: net:<host>, https only unless net:http://host", function()
  local function denied(args, perm)
    local e = env { downloads = {} }
    local r = e:upgrade(args)
    t.eq(r.code, 4, table.concat(args, " "))
    t.match(r.error, 'needs "' .. perm:gsub("%p", "%%%0") .. '"')
    t.eq(e.net.calls, {})
  end
  denied({ "--sha256=" .. SUM, "--url=https://other.example/tool" },
    "net:other.example")
  denied({ "--sha256=" .. SUM, "--url=http://example.com/tool" },
    "net:http://example.com")
  denied({ "--sha256=" .. SUM, "--url=https://mirror.example/tool" },
    "net:mirror.example")
  denied({ "--sha256=" .. SUM, "--url=https://mirror.example:9443/tool" },
    "net:mirror.example")
  denied({ "--sums=https://sums.example/SUMS" },
    "net:sums.example")
  denied({ "--fetch=https://other.example/x" }, "net:other.example")
  local r = env():upgrade { "--sha256=" .. SUM, "--url=ftp://example.com/x" }
  t.match(r.error, "scheme ftp is not allowed: only https URLs")
end)

t.case("permissions: declared http host and host:port are allowed", function()
  for _, u in ipairs { "http://plain.example/tool",
                       "https://plain.example/tool",
                       "https://mirror.example:8443/tool",
                       "https://EXAMPLE.com/v2/tool" } do
    local e = env { downloads = { [u] = { body = BODY } } }
    local r = e:upgrade { "--sha256=" .. SUM, "--url=" .. u }
    t.eq(r.code, 0, u .. ": " .. tostring(r.error))
    t.eq(e:file("bin:tool"), BODY)
  end
end)

t.case("permissions: bin:<file> to install; addon: is read-only", function()
  local e = env()
  local r = e:upgrade { "--sha256=" .. SUM, "--dest=bin:other" }
  t.eq(r.code, 4)
  t.match(r.error, 'needs "bin:other"')
  t.eq(C.sys.listdir(e.roots.bin), {})
  r = env():upgrade { "--sha256=" .. SUM, "--dest=args:kubelet" }
  t.match(r.error, 'needs "args:kubelet"')
  r = env():upgrade { "--sha256=" .. SUM, "--dest=addon:x" }
  t.match(r.error, "addon: files are read%-only")
  r = env():upgrade { "--sha256=" .. SUM, "--dest=bin:../x" }
  t.match(r.error, "path leaves its root")
end)

t.case("a port in a net: permission passes lint", function()
  local hook = assert(C.sys.read("tests/lua/addons/tool/upgrade.lua"))
  t.ok(hook:find('"net:mirror.example:8443"', 1, true))
  t.eq(env():upgrade({ "--sha256=" .. SUM }).code, 0)
end)

t.case("downloads entry {status = 404}: the error names the URL", function()
  local e = env { downloads = { [URL] = { status = 404 } } }
  local r = e:upgrade { "--sha256=" .. SUM }
  t.eq(r.code, 4)
  t.match(r.error, URL:gsub("%p", "%%%0") .. ": HTTP 404")
  t.eq(e:file("bin:tool"), nil)
end)

t.case("an unknown URL is an error naming it", function()
  local r = env():upgrade { "--sha256=" .. SUM,
    "--url=https://example.com/missing" }
  t.eq(r.code, 4)
  t.match(r.error, "no mock download for https://example.com/missing")
end)

t.case("max_bytes holds for downloads", function()
  local e = env()
  local r = e:upgrade { "--sha256=" .. SUM, "--max=10" }
  t.eq(r.code, 4)
  t.match(r.error, "exceeds max_bytes %(10%)")
  t.eq(e:file("bin:tool"), nil)
  r = env():upgrade { "--sha256=" .. SUM, "--max=0" }
  t.match(r.error, "max_bytes must be a positive integer")
end)

t.case("net.fetch without and with sha256", function()
  local F = "https://example.com/index.json"
  local e = env { downloads = { [F] = { body = '{"v": 2}' } } }
  local r = e:upgrade { "--fetch=" .. F }
  t.eq(r.code, 0, r.error)
  t.eq(e:get("ConfigMap", "tool", "default").data.fetched,
    C.hash.sha256('{"v": 2}'))
  e = env { downloads = { [F] = { body = '{"v": 2}' } } }
  r = e:upgrade { "--fetch=" .. F, "--sha256=" .. C.hash.sha256('{"v": 2}') }
  t.eq(r.code, 0, r.error)
  e = env { downloads = { [F] = { body = '{"v": 2}' } } }
  r = e:upgrade { "--fetch=" .. F, "--sha256=" .. OTHER }
  t.eq(r.code, 4)
  t.match(r.error, "sha256 mismatch for " .. F:gsub("%p", "%%%0")
    .. ": expected " .. OTHER .. ", got " .. C.hash.sha256('{"v": 2}'))
end)

t.case("net.fetch: 16 MiB by default, opts.max_bytes otherwise", function()
  local F = "https://example.com/big"
  local big = string.rep("x", 16 << 20)
  local e = env { downloads = { [F] = { body = big } } }
  t.eq(e:upgrade({ "--fetch=" .. F }).code, 0)
  t.eq(e:get("ConfigMap", "tool", "default").data.size, tostring(16 << 20))
  e = env { downloads = { [F] = { body = big .. "x" } } }
  local r = e:upgrade { "--fetch=" .. F }
  t.eq(r.code, 4)
  t.match(r.error, "exceeds max_bytes %(16777216%)")
  e = env { downloads = { [F] = { body = big .. "x" } } }
  r = e:upgrade { "--fetch=" .. F, "--max=" .. ((16 << 20) + 1) }
  t.eq(r.code, 0, r.error)
  e = env { downloads = { [F] = { body = "12345" } } }
  r = e:upgrade { "--fetch=" .. F, "--max=4" }
  t.match(r.error, "exceeds max_bytes %(4%)")
end)

t.case("net.fetch {status = 500}: an error naming the URL", function()
  local F = "https://example.com/index.json"
  local r = env({ downloads = { [F] = { status = 500 } } }):upgrade {
    "--fetch=" .. F }
  t.eq(r.code, 4)
  t.match(r.error, "index.json: HTTP 500")
end)

t.case("check may fetch but not download", function()
  local e = env()
  local r = e:upgrade { "--sha256=" .. SUM, "--check=download" }
  t.eq(r.code, 4)
  t.match(r.error, "net.download is not allowed in check")
  t.eq(e.net.calls, {})
  e = env()
  r = e:upgrade { "--sha256=" .. SUM, "--check=fetch" }
  t.eq(r.code, 0, r.error)
  t.eq(e.net.calls, { URL, URL })
end)

-- The URL rule has one home (host/http_allow.c): the engine's check of a
-- hook's URL and host/http.c's check of each redirect are the same
-- function. Each case goes through both, the engine (net.fetch in a hook
-- declaring net:example.com, net:http://plain.example and
-- net:mirror.example:8443) and C's http.allowed with the lists the engine
-- derives, and both must give the expected verdict.
t.case("one URL rule: the engine and http.allowed agree", function()
  local hosts = { "example.com", "mirror.example:8443" }
  local http = { "plain.example" }
  local cases = {
    { "https://example.com/v2/tool", true },
    { "https://EXAMPLE.com:443/x", true },
    { "https://user@example.com/x", true },
    { "http://plain.example/x", true },
    { "https://plain.example/x", true },
    { "https://mirror.example:8443/x", true },
    { "https://mirror.example/x", 'needs "net:mirror.example"' },
    { "https://mirror.example:9443/x", 'needs "net:mirror.example"' },
    { "https://example.com@evil.example/x", 'needs "net:evil.example"' },
    { "https://example.com./x", 'needs "net:example.com."' },
    { "https://[::1]/x", 'needs "net:%[::1%]"' },
    { "http://example.com/x", 'needs "net:http://example.com"' },
    { "ftp://example.com/x", "scheme ftp is not allowed" },
    { "example.com/x", "not an absolute URL" },
  }
  for _, c in ipairs(cases) do
    local url, want = c[1], c[2]
    local e = env { downloads = { [url] = { body = "x" } } }
    local r = e:upgrade { "--fetch=" .. url }
    local ok, why = C.http.allowed(url, { hosts = hosts, http_hosts = http })
    if want == true then
      t.eq(r.code, 0, url .. ": " .. tostring(r.error))
      t.eq(e.net.calls, { url })
      t.eq(ok, true, url .. ": " .. tostring(why))
    else
      t.eq(r.code, 4, url)
      t.match(r.error, want)
      t.eq(e.net.calls, {}, url)
      t.eq(ok, false, url)
      t.match(why, (want:gsub('^needs "net:(.-)"$', "%1")))
    end
  end
  -- a NUL byte would end the URL early for C and libcurl (a hook's
  -- net.fetch gets its string whole; a command line cannot carry one)
  local ok, why = C.http.allowed("https://example.com\0.evil.example/x",
    { hosts = hosts, http_hosts = http })
  t.eq(ok, false)
  t.eq(why, "the URL has a NUL byte")
end)

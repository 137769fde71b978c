-- Modes of the files a hook writes (docs/security.md "Writable files",
-- lua/engine/prims/files.lua file_mode): an existing file keeps its mode,
-- owner and group unless the hook gives a mode; a mode is never
-- world-writable, and group-writable only for the snap's group; the plan
-- shows the mode.
local t = require "uphook.test"
local C = require("uphook.core.cfamilies").load()
local prims = require "uphook.engine.prims"

local TOOL = "#!/bin/sh\necho tool\n"
local URL = "https://example.com/tool"

local function env()
  return t.env { addon = "addons/files",
    downloads = { [URL] = { body = TOOL } } }
end

local function stat(e, root, rel) return C.fs.stat(e.roots[root], rel) end

-- put a file in place as the cluster-agent would: mode and group of its own
local function existing(e, root, rel, mode, gid)
  assert(C.fs.write(e.roots[root], rel, "old\n", mode))
  local path = e.roots[root] .. "/" .. rel
  assert(C.sys.run { "chown", ":" .. gid, path } == 0)
end

t.case("an existing file keeps its mode and group; the plan shows the mode",
function()
  local e = env()
  existing(e, "args", "kubelet", "0640", 4242)
  local r = e:plan {}
  t.eq(r.code, 0, r.error)
  t.match(require("uphook.engine.plantext").render(r.plan),
    "~ file args:kubelet %(changed, mode 0640%)")
  r = e:upgrade {}
  t.eq(r.code, 0, r.error)
  local st = stat(e, "args", "kubelet")
  t.eq(st.mode, "0640")
  t.eq(st.gid, 4242)
  t.eq(e:file("args:kubelet"), "--v=2\n")
end)

t.case("a mode the hook gives replaces the old one, the group stays", function()
  local e = env()
  existing(e, "args", "kubelet", "0640", 4242)
  t.eq(e:upgrade({ "--mode=0600" }).code, 0)
  t.eq(stat(e, "args", "kubelet").mode, "0600")
  t.eq(stat(e, "args", "kubelet").gid, 4242)
end)

t.case("config.install keeps an existing file's mode (it used 0644)", function()
  local e = env()
  existing(e, "bin", "tool", "0750", 4242)
  local r = e:upgrade { "--path=bin:tool", "--install=" .. URL,
    "--content=" .. TOOL }
  t.eq(r.code, 0, r.error)
  t.eq(e:file("bin:tool"), TOOL)
  t.eq(stat(e, "bin", "tool").mode, "0750")
  t.eq(stat(e, "bin", "tool").gid, 4242)
end)

t.case("world-writable modes are refused, before any change", function()
  for _, m in ipairs { "0666", "0777", "0602", "0757" } do
    local e = env()
    existing(e, "args", "kubelet", "0644", 0)
    local r = e:upgrade { "--mode=" .. m }
    t.eq(r.code, 4, m)
    t.match(r.error, "mode " .. m .. " is world%-writable")
    t.eq(e:file("args:kubelet"), "old\n")
    r = e:upgrade { "--path=bin:tool", "--install=" .. URL,
      "--content=" .. TOOL, "--mode=" .. m }
    t.eq(r.code, 4, "install " .. m)
  end
end)

t.case("group-writable only when the group is the snap's", function()
  local e = env()
  existing(e, "args", "kubelet", "0644", 4242)
  local r = e:upgrade { "--mode=0660" }
  t.eq(r.code, 4)
  t.match(r.error, "mode 0660 is group%-writable, and the file's group is "
    .. "4242, not the snap's")
  -- the rule itself, for the groups a test machine does not have
  for _, g in ipairs { "microk8s", "snap_microk8s" } do
    t.eq(prims.file_mode("args:kubelet", { mode = "0644", group = g },
      "0660", "config.write"), "0660")
  end
  t.eq(prims.file_mode("args:kubelet", { mode = "0640", group = "g" }, nil,
    "config.write"), "0640")
  t.eq(prims.file_mode("args:kubelet", nil, nil, "config.write"), "0644")
  t.ok(not pcall(prims.file_mode, "args:kubelet", { group = "root" }, "0670",
    "config.write"))
end)

-- docs/security.md "Trusted cache": config.install hashes the copy it is
-- about to put in place; a cache file changed after its download is not
-- installed
t.case("config.install verifies what it copies from the cache", function()
  local e = env()
  local dir = assert(C.sys.mkdtemp())
  assert(C.fs.write(dir, "src", "not the download", "0644"))
  existing(e, "bin", "tool", "0755", 0)
  local ok, err = C.fs.install(dir .. "/src", e.roots.bin, "tool", "0755",
    C.hash.sha256(TOOL))
  t.eq(ok, nil)
  t.match(err, "sha256 of the copy differs")
  t.eq(e:file("bin:tool"), "old\n")
  t.eq(#C.sys.listdir(e.roots.bin), 1, "a temporary file was left")
  t.eq(C.fs.install(dir .. "/src", e.roots.bin, "tool", "0755",
    C.hash.sha256("not the download")), true)
  C.sys.rmtree(dir)
end)

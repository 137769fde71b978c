-- config.exists("certs:<name>") (docs/reference.md; docs/security.md "What
-- permissions guarantee"): existence only, no permission, every phase, a
-- file name and never a path; t.env{certs = ...} says which exist.
local t = require "uphook.test"

local function env(certs)
  return t.env { addon = "addons/certs", certs = certs }
end

local function logged(r, text)
  for _, l in ipairs(r.log) do
    if l:find(text, 1, true) then return true end
  end
  return false
end

t.case("a certificate that exists: true in every phase, no permission",
function()
  local r = env({ "front-proxy-client.crt", "ca.crt" }):upgrade {}
  t.eq(r.code, 0, r.error)
  for _, phase in ipairs { "detect", "check", "upgrade", "verify" } do
    t.ok(logged(r, phase .. ": certs:front-proxy-client.crt true"),
      phase .. " " .. t.repr(r.log))
  end
end)

t.case("a missing certificate: false, and the hook refuses before any "
  .. "change", function()
  local e = env { "ca.crt" }
  local r = e:upgrade {}
  t.eq(r.code, 4)
  t.match(r.error, "certs:front%-proxy%-client%.crt is missing")
  t.ok(logged(r, "check: certs:front-proxy-client.crt false"), t.repr(r.log))
  t.eq(e:state(), nil, "nothing recorded")
  -- no certs at all (the default)
  r = env():upgrade {}
  t.eq(r.code, 4)
  t.ok(logged(r, "detect: certs:front-proxy-client.crt false"))
end)

t.case("a name with / or .., or another root, is an error naming the "
  .. "argument", function()
  for _, bad in ipairs { "certs:../ca.key", "certs:sub/ca.crt",
      "certs:..", "certs:" } do
    local r = env({ "front-proxy-client.crt" }):upgrade { "--path=" .. bad }
    t.eq(r.code, 4, bad)
    t.match(r.error, "bad argument #1 to 'exists' %(a certificate's file "
      .. "name expected %(no / or %.%.%)", bad)
  end
  local r = env({ "front-proxy-client.crt" }):upgrade { "--path=args:kubelet" }
  t.eq(r.code, 4)
  t.match(r.error, "bad argument #1 to 'exists' %(path must be "
    .. "certs:<name>, got \"args:kubelet\"%)")
end)

t.case("certs: is for config.exists only: config.read refuses it", function()
  local r = env({ "front-proxy-client.crt" }):upgrade {
    "--read=certs:front-proxy-client.crt" }
  t.eq(r.code, 4)
  t.match(r.error, "path must be args:, bin:, plugins:, addon: or state:")
end)

t.case("t.env: certs entries must be file names", function()
  t.err(function() env { "../ca.key" } end,
    "t.env: certs%[1%] must be a file name")
end)

-- The hook API's versions (lua/engine/apiversion.lua, docs/guide.md §12)
-- and where a placeholder stands in YAML (lua/core/yamlpos.lua, the rule
-- manifest.load and lint share).
local t = require "uphook.test"
local apiversion = require "uphook.engine.apiversion"
local yamlpos = require "uphook.core.yamlpos"

local function refused(range, uphook)
  local ok, err = pcall(apiversion.check, range, uphook,
    function(msg) error(msg, 0) end)
  t.ok(not ok, "accepted " .. tostring(range))
  return err
end

t.case("the API a hook is written for: absent is 0.1, else the oldest the range admits", function()
  local function bad(msg) error(msg, 0) end
  t.eq(apiversion.check(nil, "0.2.0", bad), "0.1")
  t.eq(apiversion.check(">=0.2", "0.2.0", bad), "0.2")
  t.eq(apiversion.check("^0.2.0", "0.2.0", bad), "0.2")
  t.eq(apiversion.check(">=0.1", "0.2.0", bad), "0.1")
  t.eq(apiversion.check("0.1.x", "0.2.0", bad), "0.1")
  t.eq(apiversion.check(">=0.2", "0.2.7", bad), "0.2")
end)

t.case("a hook for a newer uphook: both versions and the fix", function()
  t.eq(refused(">=0.3", "0.2.0"), "the hook needs uphook >=0.3, and this "
    .. "is uphook 0.2.0: refresh the snap (sudo snap refresh microk8s) for "
    .. "a newer uphook")
  t.match(refused(">=0.2.1", "0.2.0"), "needs uphook >=0%.2%.1, and this is uphook 0%.2%.0")
end)

t.case("a malformed range names the field", function()
  t.match(refused("", "0.2.0"), "^field 'uphook' is not a version range "
    .. "%(such as \">=0%.2\"%): it is empty")
  t.match(refused(">=zero", "0.2.0"), "^field 'uphook' is not a version range")
  t.match(refused(("1"):rep(300), "0.2.0"), "^field 'uphook' is longer than 256 bytes")
end)

t.case("deprecated conveniences are kept for API 0.1 only", function()
  t.eq(apiversion.keeps(nil, "positional"), true)
  t.eq(apiversion.keeps("0.1", "manifest_structure"), true)
  t.eq(apiversion.keeps("0.2", "positional"), false)
  t.eq(apiversion.keeps("0.2", "manifest_structure"), false)
end)

t.case("the positional warning's line: where the hook reads ctx.positional", function()
  t.eq(apiversion.positional_line("local x = 1\n-- ctx.positional\n"
    .. "return {\n upgrade = function(ctx) f(ctx.positional[1]) end }\n"), 4)
  t.eq(apiversion.positional_line("local x\nreturn {\n version = '1' }\n"), 2)
end)

local function lines_of(text)
  local out = {}
  for _, p in ipairs(yamlpos.structure_placeholders(text)) do
    out[#out + 1] = p.line .. " " .. p.var
  end
  return out
end

t.case("placeholders where YAML structure goes: beside keys, beside items, a document", function()
  t.eq(lines_of("data:\n  a: b\n  $MORE\n"), { "3 MORE" })
  t.eq(lines_of("kind: A\n$KEYS\n"), { "2 KEYS" })
  t.eq(lines_of("args:\n- --a\n${ARGS}  # more\n"), { "3 ARGS" })
  t.eq(lines_of("spec:\n  containers:\n  - name: x\n    $FIELDS\n"), { "4 FIELDS" })
  t.eq(lines_of("$DOC\n---\n$DOC2\n"), { "1 DOC", "3 DOC2" })
end)

t.case("placeholders where a value stands are not structure", function()
  t.eq(lines_of("labels:\n  $LABELS\n"), {})       -- the value of labels
  t.eq(lines_of("- \n  $ITEM\n"), {})               -- an item's value
  t.eq(lines_of("text: a long\n  $MORE\n"), {})     -- a plain scalar goes on
  t.eq(lines_of("script: |\n  echo\n  $CMD\n"), {}) -- a block scalar
  t.eq(lines_of("a: $X\n- $Y\nb: [\n  $Z\n]\n"), {})
  t.eq(lines_of("a: b\n  $$LITERAL\n"), {})
end)

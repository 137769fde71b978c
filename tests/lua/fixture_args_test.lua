--- A fixture's NodeArgs documents (docs/guide.md, "Fixtures"): split from
--- the cluster's objects, checked, each error naming the fixture and node.
local t = require "uphook.test"
local offline = require "uphook.backend.offline"

local c = { yaml = { null = setmetatable({}, { __name = "null" }) } }
local NODE = { apiVersion = "v1", kind = "Node", metadata = { name = "n1" } }

local function args(name, files)
  return { apiVersion = "uphook/v1", kind = "NodeArgs",
    metadata = { name = name }, files = files }
end

local function err_of(docs)
  local ok, e = pcall(offline.split_fixture, c, docs, "f.yaml")
  t.ok(not ok, "expected an error")
  return tostring(e)
end

t.case("NodeArgs documents are split from the objects, null is no such file", function()
  local objs, a = offline.split_fixture(c, { NODE,
    args("n1", { kubelet = "--x=1\n", ["eventconfig.yaml"] = c.yaml.null }) },
    "f.yaml")
  t.eq(#objs, 1)
  t.eq(objs[1].kind, "Node")
  t.eq(a, { n1 = { kubelet = "--x=1\n", ["eventconfig.yaml"] = false } })
end)

t.case("a NodeArgs of a node the fixture lacks names it", function()
  t.match(err_of { NODE, args("n2", { kubelet = "" }) },
    "f.yaml: NodeArgs n2: the fixture has no Node n2")
end)

t.case("a file name with a slash, or a value that is not text, is refused", function()
  t.match(err_of { NODE, args("n1", { ["../kubelet"] = "x" }) },
    'f.yaml: NodeArgs n1: files: "../kubelet" is not a file name')
  t.match(err_of { NODE, args("n1", { kubelet = 3 }) },
    "f.yaml: NodeArgs n1: files.kubelet must be text")
  t.match(err_of { NODE, args("n1", "--x=1") },
    "f.yaml: NodeArgs n1: files must be a map")
end)

t.case("two NodeArgs for one node, or one without a name, are refused", function()
  t.match(err_of { NODE, args("n1", {}), args("n1", {}) },
    "f.yaml: two NodeArgs documents for node n1")
  t.match(err_of { NODE, { apiVersion = "uphook/v1", kind = "NodeArgs",
    files = {} } }, "f.yaml: a NodeArgs document needs metadata.name")
end)

local t = require "uphook.test"
local plan = require "uphook.plan"

t.case("field diff: changed scalars, new subtrees in one line", function()
  local d = plan.field_diff(
    { spec = { replicas = 1, template = { spec = { containers = {
      { name = "a", image = "x:1" } } } } }, metadata = { name = "n",
      resourceVersion = "1" } },
    { spec = { replicas = 2, template = { spec = { containers = {
      { name = "a", image = "x:2", env = { { name = "E", value = "v" } } },
      { name = "b", image = "y" } } } } }, metadata = { name = "n",
      resourceVersion = "9" } })
  local got = {}
  for _, x in ipairs(d) do got[#got + 1] = x.path .. ": " .. x.old .. " -> " .. x.new end
  t.eq(got, {
    'spec.replicas: 1 -> 2',
    'spec.template.spec.containers[a].env: (absent) -> [{name: "E", value: "v"}]',
    'spec.template.spec.containers[a].image: "x:1" -> "x:2"',
    'spec.template.spec.containers[b]: (absent) -> {image: "y", name: "b"}',
  })
end)

t.case("field diff ignores server-set metadata and status", function()
  t.eq(plan.field_diff({ metadata = { uid = "1", generation = 1 }, status = { a = 1 } },
                       { metadata = { uid = "2", generation = 2 }, status = { a = 2 } }), {})
end)

t.case("unified diff of a changed line with context", function()
  local u = plan.unified("a\nb\nc\nd\n", "a\nb\nC\nd\n", "args:kubelet")
  t.eq(u, "--- a/args:kubelet\n+++ b/args:kubelet\n@@ -1,4 +1,4 @@\n a\n b\n-c\n+C\n d\n")
end)

t.case("unified diff of a new file", function()
  t.eq(plan.unified(nil, "x\n", "state:f"),
    "--- a/state:f\n+++ b/state:f\n@@ -1,0 +1,1 @@\n+x\n")
end)

t.case("summary counts and the data-loss section", function()
  local entries = {
    { type = "kube", action = "created", kind = "A", name = "a" },
    { type = "kube", action = "deleted", kind = "PersistentVolumeClaim",
      name = "p", namespace = "ns", data_loss = true },
    { type = "restart", service = "kubelite" },
  }
  local text = plan.render(entries)
  t.match(text, "DATA LOSS")
  t.match(text, "%- PersistentVolumeClaim ns/p")
  t.match(text, "Summary: 1 created, 0 configured, 1 deleted, 0 unchanged, 0 files changed, 0 downloads, 1 restart")
end)

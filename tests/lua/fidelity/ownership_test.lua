-- The mock's fidelity to the API server (docs/mock.md), each case run on
-- the mock and on the fake API server (tests/lua/fidelity/worlds.lua):
-- Field ownership under server-side apply: which manager owns a field, and
-- what an apply that drops it does.
local t = require "uphook.test"
local worlds = require "worlds"

local NS, case, cm, owners, owned =
  worlds.NS, worlds.case, worlds.cm, worlds.owners, worlds.owned

-- SSA "Field management": "If you remove a field from a manifest and
-- apply that manifest, Server-Side Apply checks if there are any other
-- field managers that also own the field. If the field is not owned by
-- any other field managers, it is either deleted from the live object or
-- reset to its default value, if it has one."
case("a field the manager no longer applies is removed", function(w)
  w.apply(cm("own-1", { keep = "1", dropped = "2" }), "uphook")
  local o = w.apply(cm("own-1", { keep = "1" }), "uphook")
  t.eq(o.data, { keep = "1" })
  t.eq(owners(o), { "uphook/Apply" })
end)

-- SSA "Field management" (same passage): kept when another manager owns
-- it; an update (here a merge patch, as `kubectl edit` sends) makes the
-- fields it changes its manager's (SSA "Managers": Update operations).
case("a field another manager owns is kept", function(w)
  w.apply(cm("own-2", { keep = "1", dropped = "2" }), "uphook")
  w.patch("ConfigMap", "own-2", NS, { data = { dropped = "3" } },
          "kubectl-edit")
  local o = w.apply(cm("own-2", { keep = "1" }), "uphook")
  t.eq(o.data, { keep = "1", dropped = "3" })
  t.ok(owned(o, "kubectl-edit", "Update", { "f:data", "f:dropped" }))
  t.ok(not owned(o, "uphook", "Apply", { "f:data", "f:dropped" }))
end)

-- SSA "Conflicts": an apply that changes a field another manager owns
-- fails with a 409 naming the manager and the field, unless forced;
-- forced, the field changes owner.
case("conflicts: 409 unless forced, then the field changes owner",
  function(w)
    w.apply(cm("own-3", { a = "1" }), "other")
    local e = w.err(function()
      w.apply(cm("own-3", { a = "2" }), "uphook", false)
    end)
    t.eq(e.code, 409)
    t.eq(e.reason, "Conflict")
    t.eq(e.message, 'Apply failed with 1 conflict: conflict with "other": '
      .. ".data.a")
    local o = w.apply(cm("own-3", { a = "2" }), "uphook", true)
    t.eq(o.data.a, "2")
    t.ok(owned(o, "uphook", "Apply", { "f:data", "f:a" }))
    t.ok(not owned(o, "other", "Apply", { "f:data", "f:a" }))
  end)

-- SSA "Field management": applying the same value a manager owns makes
-- both owners (shared ownership), and no write happens when nothing
-- changes (the resourceVersion stays).
case("the same values again: no write; equal values: shared owners",
  function(w)
    local a = w.apply(cm("own-4", { a = "1" }), "uphook")
    local b = w.apply(cm("own-4", { a = "1" }), "uphook")
    t.eq(b.metadata.resourceVersion, a.metadata.resourceVersion)
    local c = w.apply(cm("own-4", { a = "1" }), "kubectl")
    t.ok(owned(c, "uphook", "Apply", { "f:data", "f:a" }))
    t.ok(owned(c, "kubectl", "Apply", { "f:data", "f:a" }))
    -- now uphook drops it: kubectl still owns it, it stays
    local d = w.apply(cm("own-4", {}), "uphook")
    t.eq(d.data, { a = "1" })
  end)

-- SSA "Managers" / fieldmanager: a replace (PUT) gives the fields it
-- changes to its manager (operation Update) and takes them from the
-- others.
case("a PUT's changed fields become its manager's", function(w)
  w.apply(cm("own-5", { a = "1", b = "1" }), "uphook")
  local cur = w.get("ConfigMap", "own-5", NS)
  cur.data.a = "2"
  cur.metadata.managedFields = nil
  local o = w.replace(cur, "kubectl-replace")
  t.ok(owned(o, "kubectl-replace", "Update", { "f:data", "f:a" }))
  t.ok(not owned(o, "uphook", "Apply", { "f:data", "f:a" }))
  t.ok(owned(o, "uphook", "Apply", { "f:data", "f:b" }))
  o = w.apply(cm("own-5", { b = "1" }), "uphook")
  t.eq(o.data, { a = "2", b = "1" }, "a is kubectl-replace's")
end)

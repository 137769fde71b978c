-- The mock's fidelity to the API server (docs/mock.md), each case run on
-- the mock and on the fake API server (tests/lua/fidelity/worlds.lua):
-- kubectl's client-side apply, as `microk8s enable` leaves objects, and
-- its upgrade to server-side apply.
local t = require "uphook.test"
local fieldset = require "uphook.core.fieldset"
local json = require "uphook.c.json"
local worlds = require "worlds"

local NS, case, cm, owners = worlds.NS, worlds.case, worlds.cm, worlds.owners

-- What `microk8s enable` leaves: `kubectl apply` (client side) creates
-- the object with manager kubectl-client-side-apply (operation Update)
-- owning every field it set, and the last-applied-configuration
-- annotation (kubectl apply.go; SSA "Upgrading from client-side apply").
local function enabled(w, name, data)
  local o = cm(name, data)
  o.metadata.annotations = { [fieldset.LAST_APPLIED] = json.encode(o) .. "\n" }
  return w.create(o, "kubectl-client-side-apply")
end

-- CSA: without the upgrade, the client-side manager keeps owning what it
-- set, so a field a new version drops stays (the issue's first finding).
case("client-side apply: its fields stay owned by it under uphook's apply",
  function(w)
    local made = enabled(w, "csa-1", { keep = "1", dropped = "2" })
    t.eq(owners(made), { "kubectl-client-side-apply/Update" })
    local o = w.apply(cm("csa-1", { keep = "1" }), "uphook")
    t.eq(o.data, { keep = "1", dropped = "2" })
  end)

-- CSA: UpgradeManagedFields moves kubectl-client-side-apply's fields to
-- the Apply manager (as `kubectl apply --server-side` does after its
-- first server-side apply, migrateToSSAIfNecessary); then the fields the
-- new version drops go, and the stale annotation with them.
case("client-side apply upgraded: dropped fields go, uphook owns the rest",
  function(w)
    local made = enabled(w, "csa-2", { keep = "1", dropped = "2" })
    local mf = made.metadata.managedFields
    local up = fieldset.upgrade(mf, fieldset.csa_managers(mf), "uphook")
    t.ok(up, "there is something to upgrade")
    local moved = w.set_managed_fields("ConfigMap", "csa-2", NS, up,
                                       made.metadata.resourceVersion)
    t.eq({ moved.apiVersion, moved.kind, moved.data }, { "v1", "ConfigMap", nil },
         "the answer is the metadata alone")
    t.ok(moved.metadata.resourceVersion ~= made.metadata.resourceVersion)
    t.eq(owners(moved), { "uphook/Apply" })
    t.eq(w.get("ConfigMap", "csa-2", NS).data, made.data,
         "the upgrade changes no field")
    local o = w.apply(cm("csa-2", { keep = "1" }), "uphook")
    t.eq(o.data, { keep = "1" })
    t.eq(o.metadata.annotations, nil)
    -- a stale resourceVersion is refused (the patch's precondition)
    local e = w.err(function()
      w.set_managed_fields("ConfigMap", "csa-2", NS, up,
                           made.metadata.resourceVersion)
    end)
    t.eq(e.code, 409)
  end)

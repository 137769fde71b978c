-- A hook that declares every kind of parameter (tests/lua/params_test.lua,
-- tests/cli/args_test.sh): short aliases, a pattern, a check run in the
-- child, and positional arguments with a rest.
return {
  version = "2.0.0", from = ">=1.0.0 <2.0.0",
  description = "opts 2.0.0, a hook with every kind of parameter",
  permissions = { "kube:default" },
  params = {
    ["reclaim-policy"] = { short = "r", default = "Delete",
      choices = { "Delete", "Retain" },
      description = "what happens to a released volume" },
    size = { short = "s", default = "20Gi", pattern = "%d+Gi",
      description = "the volume size" },
    name = { default = "x", description = "a name the check vets",
      check = function(v, ctx)
        if v == "bad" then return false, "is reserved" end
        if v == "boom" then error("the check exploded", 0) end
        if v == "self" then return v == ctx.addon end
        return true
      end },
  },
  positional = { { name = "first", description = "the first argument" },
    "rest..." },
  detect = function() return "1.0.0" end,
  upgrade = function(ctx)
    local given = {}
    for k in pairs(ctx.given) do given[#given + 1] = k end
    table.sort(given)
    kube.apply { apiVersion = "v1", kind = "ConfigMap",
      metadata = { name = "opts", namespace = "default" },
      data = { policy = ctx.params["reclaim-policy"], size = ctx.params.size,
        name = ctx.params.name, positional = table.concat(ctx.positional, "|"),
        args = table.concat(ctx.args, "|"), given = table.concat(given, ","),
        reset = tostring(ctx.reset_params), from = ctx.from } }
  end,
}

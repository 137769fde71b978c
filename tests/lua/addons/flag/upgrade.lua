-- A hook with boolean flags (tests/lua/params_test.lua, tests/cli/args_test.sh):
-- enable's bare --skip-kubebench-installation, a flag on by default with a
-- short alias, and a valued param beside them.
return {
  uphook = ">=0.2",   -- flags (type = "flag") are hook API 0.2
  version = "2.0.0", from = ">=1.0.0 <2.0.0",
  description = "flag 2.0.0, a hook with boolean flags",
  permissions = { "kube:default" },
  params = {
    ["skip-kubebench-installation"] = { type = "flag",
      description = "do not install kube-bench" },
    verify = { type = "flag", short = "v", default = "true",
      description = "check the result" },
    level = { default = "1", choices = { "1", "2" } },
  },
  positional = { "words..." },
  detect = function() return "1.0.0" end,
  upgrade = function(ctx)
    kube.apply { apiVersion = "v1", kind = "ConfigMap",
      metadata = { name = "flag", namespace = "default" },
      data = { skip = ctx.params["skip-kubebench-installation"],
        verify = ctx.params.verify, level = ctx.params.level,
        positional = table.concat(ctx.positional, "|") } }
  end,
}

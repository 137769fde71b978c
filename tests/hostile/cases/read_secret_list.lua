-- expect: 4 kube.list of v1/Secret of every namespace needs "kube:\*"
-- docs/security.md "Unchecked reads": listing Secrets of every namespace
-- needs kube:*.
return { version = "2.0.0", from = ">=1.0.0", permissions = { "kube:demo" },
  detect = function() return "1.0.0" end,
  upgrade = function()
    local l = kube.list("v1/Secret")
    error("listed " .. #l .. " Secrets")
  end }

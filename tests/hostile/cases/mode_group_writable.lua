-- expect: 4 config.write\(args:kubelet\): mode 0660 is group-writable, and the file's group is root, not the snap's
-- docs/security.md "Writable files": group-writable only where the group
-- is the snap's.
-- (args:kubelet exists: every offline node starts with MicroK8s's default args files)
return { version = "2.0.0", from = ">=1.0.0", permissions = { "args:kubelet" },
  detect = function() return "1.0.0" end,
  upgrade = function()
    config.write("args:kubelet", "--v=2\n", { mode = "0660" })
  end }

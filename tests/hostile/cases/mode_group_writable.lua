-- expect: 4 config.write\(args:kubelet\): mode 0660 is group-writable, and the file's group is root \(a new file\), not the snap's
-- issue 15 point 18: group-writable only where the group is the snap's.
return { version = "2.0.0", from = ">=1.0.0", permissions = { "args:kubelet" },
  detect = function() return "1.0.0" end,
  upgrade = function()
    config.write("args:kubelet", "--v=2\n", { mode = "0660" })
  end }

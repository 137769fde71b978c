-- expect: 4 config.write\(bin:tool\): mode 0666 is world-writable
-- docs/security.md "Writable files": a world-writable bin: file gives any
-- local user root.
return { version = "2.0.0", from = ">=1.0.0", permissions = { "bin:tool" },
  detect = function() return "1.0.0" end,
  upgrade = function()
    config.write("bin:tool", "#!/bin/sh\n", { mode = "0666" })
  end }

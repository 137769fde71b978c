-- expect: 4 needs "args:kubelet"
config.set_args("kubelet", { ["--x"] = "y" })

-- expect: 4 path must be args:
config.read("/etc/passwd")

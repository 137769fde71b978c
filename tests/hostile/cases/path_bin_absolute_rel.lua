-- expect: 4 leaves its root
config.read("bin:/etc/passwd")

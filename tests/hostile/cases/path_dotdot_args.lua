-- expect: 4 leaves its root
config.read("args:../../../etc/passwd")

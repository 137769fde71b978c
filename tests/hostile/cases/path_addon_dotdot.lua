-- expect: 4 leaves its root
addon.read("../../../../etc/passwd")

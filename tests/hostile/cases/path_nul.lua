-- expect: 4 leaves its root
config.read("state:a\0b")

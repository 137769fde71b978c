-- expect: 4 leaves its root
config.write("state:../../x", "pwned")

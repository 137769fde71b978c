-- expect: 4 line
yaml.decode("a: [b, c\nd: e: f")

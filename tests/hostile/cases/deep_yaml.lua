-- expect: 4 nest
yaml.decode(string.rep("[", 100000))

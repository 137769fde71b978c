-- expect: 4 nest|depth|deep
json.decode(string.rep("[", 100000))

-- expect: 4 undeclared global 'print'
print("hello")

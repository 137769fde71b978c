-- expect: 4 assignment to undeclared global 'x'
x = 1

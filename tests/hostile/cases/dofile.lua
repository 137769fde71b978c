-- expect: 4 undeclared global 'dofile'
dofile("/etc/passwd")

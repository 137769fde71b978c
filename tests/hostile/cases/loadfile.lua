-- expect: 4 undeclared global 'loadfile'
loadfile("/etc/passwd")

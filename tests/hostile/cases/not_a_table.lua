-- expect: 4 must return a table
return "hello"

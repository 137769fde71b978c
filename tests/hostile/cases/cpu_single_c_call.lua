-- expect: 4 timeout.*killed
-- one long C call (backtracking without deep recursion): only the
-- broker's kill can stop it
local s = string.rep("a", 5000)
string.find(s, ".-.-.-.-.-b")

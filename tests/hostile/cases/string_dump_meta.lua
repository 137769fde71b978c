-- expect: 4 attempt to call a nil value \(method 'dump'\)
local b = ("x"):dump()

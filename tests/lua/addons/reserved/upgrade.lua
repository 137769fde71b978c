-- A param named like one of uphook's own options: refused on load.
return {
  version = "2.0.0", from = ">=1.0.0 <2.0.0", permissions = {},
  params = { timeout = { default = "5" } },
  detect = function() return "1.0.0" end,
  upgrade = function() end,
}

-- expect: 4 upgrade.lua:3:
return {
  version = = "2",
}

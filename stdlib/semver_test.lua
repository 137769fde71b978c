-- Tests for semver (lua/core/semver.lua, which stdlib/semver.lua hands on).
-- Many cases come from node-semver's own
-- fixtures (range-include, range-exclude, comparisons, range-parse).
local t = require "uphook.test"
local semver = require "semver"

t.case("parse: full, v prefix, pre-release and build", function()
  t.eq(semver.parse("1.2.3"),
       { major = 1, minor = 2, patch = 3, prerelease = {} })
  t.eq(semver.parse("v1.2.3"),
       { major = 1, minor = 2, patch = 3, prerelease = {} })
  t.eq(semver.parse(" =1.2.3 "),
       { major = 1, minor = 2, patch = 3, prerelease = {} })
  t.eq(semver.parse("1.2.3-rc.1+build.5"),
       { major = 1, minor = 2, patch = 3, prerelease = { "rc", 1 },
         build = "build.5" })
  t.eq(semver.parse("1.0.0-x-y-z.--").prerelease, { "x-y-z", "--" })
  t.eq(semver.parse("1.0.0+21AF26D3----117B344092BD").build,
       "21AF26D3----117B344092BD")
  t.eq(semver.parse("0.0.0-0").prerelease, { 0 })
end)

t.case("parse: partial versions", function()
  t.eq(semver.parse("1.2"),
       { major = 1, minor = 2, patch = 0, prerelease = {} })
  t.eq(semver.parse("v1"),
       { major = 1, minor = 0, patch = 0, prerelease = {} })
  t.eq(semver.compare("1.2", "1.2.0"), 0)
end)

t.case("parse: invalid versions name the input", function()
  local bad = { "", "v", "1.2.3.4", "01.2.3", "1.02.3", "1.2.03", "1.2.3-",
    "1.2.3-a..b", "1.2.3+", "1.2.3+a..b", "a.b.c", "1.2.3-01", "1.2.3-a_b",
    "1.2.3 4", "-1.2.3", "1.2.3beta", "99999999999999999.0.0", "1.2-rc.1",
    "1..3", "1.2.", ".1.2", "x.1.2", "1.2.3-a b", string.rep("1", 300) }
  for _, v in ipairs(bad) do
    local p, err = semver.parse(v)
    t.eq(p, nil, v)
    t.match(err, "^invalid version '")
    t.ok(err:find(v:sub(1, 40), 1, true), err)
  end
  local p, err = semver.parse(nil)
  t.eq(p, nil)
  t.match(err, "expected a string, got nil")
  t.eq(semver.parse({}), nil)
end)

t.case("format and tostring round-trip", function()
  for _, v in ipairs { "1.2.3", "0.0.0-0", "1.2.3-rc.1+b.5", "10.20.30-a-b.1" } do
    t.eq(semver.format(semver.parse(v)), v)
    t.eq(tostring(semver.parse(v)), v)
  end
  t.eq(tostring(semver.parse("v1.2")), "1.2.0")
end)

-- Each pair: first > second (node-semver test/fixtures/comparisons.js).
local greater = {
  { "0.0.0", "0.0.0-foo" }, { "0.0.1", "0.0.0" }, { "1.0.0", "0.9.9" },
  { "0.10.0", "0.9.0" }, { "0.99.0", "0.10.0" }, { "2.0.0", "1.2.3" },
  { "v0.0.0", "0.0.0-foo" }, { "v0.0.1", "0.0.0" }, { "v1.0.0", "0.9.9" },
  { "1.2.3", "1.2.3-asdf" }, { "1.2.3", "1.2.3-4" }, { "1.2.3", "1.2.3-4-foo" },
  { "1.2.3-5-foo", "1.2.3-5" }, { "1.2.3-5", "1.2.3-4" },
  { "1.2.3-5-foo", "1.2.3-5-Foo" }, { "3.0.0", "2.7.2+asdf" },
  { "1.2.3-a.10", "1.2.3-a.5" }, { "1.2.3-a.b", "1.2.3-a.5" },
  { "1.2.3-a.b", "1.2.3-a" }, { "1.2.3-a.b.c.10.d.5", "1.2.3-a.b.c.5.d.100" },
  { "1.2.3-r2", "1.2.3-r100" }, { "1.2.3-r100", "1.2.3-R2" },
  { "1.10.0", "1.9.99" }, { "10.0.0", "9.99.99" },
}

t.case("compare: ordering (node-semver comparisons)", function()
  for _, p in ipairs(greater) do
    t.eq(semver.compare(p[1], p[2]), 1, p[1] .. " > " .. p[2])
    t.eq(semver.compare(p[2], p[1]), -1, p[2] .. " < " .. p[1])
    t.ok(semver.gt(p[1], p[2]) and semver.lt(p[2], p[1]))
  end
end)

t.case("compare: SemVer 2.0 §11 pre-release precedence chain", function()
  local chain = { "1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta",
    "1.0.0-beta", "1.0.0-beta.2", "1.0.0-beta.11", "1.0.0-rc.1", "1.0.0" }
  for i = 1, #chain do
    for j = 1, #chain do
      local want = i < j and -1 or i > j and 1 or 0
      t.eq(semver.compare(chain[i], chain[j]), want, chain[i] .. " vs " .. chain[j])
    end
  end
end)

t.case("compare: equality ignores v, spaces and build", function()
  local eq = { { "1.2.3", "v1.2.3" }, { "1.2.3", "=1.2.3" },
    { "1.2.3", " v1.2.3 " }, { "1.2.3-beta+build", "1.2.3-beta+otherbuild" },
    { "1.2.3+build", "1.2.3+otherbuild" }, { "1.2.3-beta.4", "v1.2.3-beta.4" } }
  for _, p in ipairs(eq) do
    t.eq(semver.compare(p[1], p[2]), 0, p[1] .. " == " .. p[2])
    t.ok(semver.eq(p[1], p[2]))
  end
  t.eq(semver.compare(semver.parse("1.2.3"), "1.2.4"), -1)
end)

t.case("compare: an invalid version raises naming it", function()
  t.err(function() semver.compare("1.2.3", "banana") end, "invalid version 'banana'")
  t.err(function() semver.compare(nil, "1.0.0") end, "expected a string, got nil")
end)

-- node-semver test/fixtures/range-include.js (strict mode cases)
local include = {
  { "1.0.0 - 2.0.0", "1.2.3" }, { "^1.2.3+build", "1.2.3" },
  { "^1.2.3+build", "1.3.0" },
  { "1.2.3-pre+asdf - 2.4.3-pre+asdf", "1.2.3" },
  { "1.2.3-pre+asdf - 2.4.3-pre+asdf", "1.2.3-pre.2" },
  { "1.2.3-pre+asdf - 2.4.3-pre+asdf", "2.4.3-alpha" },
  { "1.2.3+asdf - 2.4.3+asdf", "1.2.3" }, { "1.0.0", "1.0.0" },
  { ">=*", "0.2.4" }, { "", "1.0.0" }, { "*", "1.2.3" },
  { ">=1.0.0", "1.0.0" }, { ">=1.0.0", "1.0.1" }, { ">=1.0.0", "1.1.0" },
  { ">1.0.0", "1.0.1" }, { ">1.0.0", "1.1.0" }, { "<=2.0.0", "2.0.0" },
  { "<=2.0.0", "1.9999.9999" }, { "<=2.0.0", "0.2.9" },
  { "<2.0.0", "1.9999.9999" }, { "<2.0.0", "0.2.9" },
  { ">= 1.0.0", "1.0.0" }, { ">=  1.0.0", "1.0.1" }, { ">=   1.0.0", "1.1.0" },
  { "> 1.0.0", "1.0.1" }, { ">  1.0.0", "1.1.0" }, { "<=   2.0.0", "2.0.0" },
  { "<= 2.0.0", "1.9999.9999" }, { "<=  2.0.0", "0.2.9" },
  { "<    2.0.0", "1.9999.9999" }, { "<\t2.0.0", "0.2.9" },
  { ">=0.1.97", "v0.1.97" }, { ">=0.1.97", "0.1.97" },
  { "0.1.20 || 1.2.4", "1.2.4" }, { ">=0.2.3 || <0.0.1", "0.0.0" },
  { ">=0.2.3 || <0.0.1", "0.2.3" }, { ">=0.2.3 || <0.0.1", "0.2.4" },
  { "||", "1.3.4" }, { "2.x.x", "2.1.3" }, { "1.2.x", "1.2.3" },
  { "1.2.x || 2.x", "2.1.3" }, { "1.2.x || 2.x", "1.2.3" }, { "x", "1.2.3" },
  { "2.*.*", "2.1.3" }, { "1.2.*", "1.2.3" }, { "1.2.* || 2.*", "2.1.3" },
  { "1.2.* || 2.*", "1.2.3" }, { "2", "2.1.2" }, { "2.3", "2.3.1" },
  { "~0.0.1", "0.0.1" }, { "~0.0.1", "0.0.2" }, { "~x", "0.0.9" },
  { "~2", "2.0.9" }, { "~2.4", "2.4.0" }, { "~2.4", "2.4.5" },
  { "~>3.2.1", "3.2.2" }, { "~1", "1.2.3" }, { "~>1", "1.2.3" },
  { "~> 1", "1.2.3" }, { "~1.0", "1.0.2" }, { "~ 1.0", "1.0.2" },
  { "~ 1.0.3", "1.0.12" }, { ">=1", "1.0.0" }, { ">= 1", "1.0.0" },
  { "<1.2", "1.1.1" }, { "< 1.2", "1.1.1" }, { "~v0.5.4-pre", "0.5.5" },
  { "~v0.5.4-pre", "0.5.4" }, { "=0.7.x", "0.7.2" }, { "<=0.7.x", "0.7.2" },
  { ">=0.7.x", "0.7.2" }, { "<=0.7.x", "0.6.2" }, { "~1.2.1 >=1.2.3", "1.2.3" },
  { "~1.2.1 =1.2.3", "1.2.3" }, { "~1.2.1 1.2.3", "1.2.3" },
  { "~1.2.1 >=1.2.3 1.2.3", "1.2.3" }, { "~1.2.1 1.2.3 >=1.2.3", "1.2.3" },
  { ">=1.2.1 1.2.3", "1.2.3" }, { "1.2.3 >=1.2.1", "1.2.3" },
  { ">=1.2.3 >=1.2.1", "1.2.3" }, { ">=1.2.1 >=1.2.3", "1.2.3" },
  { ">=1.2", "1.2.8" }, { "^1.2.3", "1.8.1" }, { "^0.1.2", "0.1.2" },
  { "^0.1", "0.1.2" }, { "^0.0.1", "0.0.1" }, { "^1.2", "1.4.2" },
  { "^1.2 ^1", "1.4.2" }, { "^1.2.3-alpha", "1.2.3-pre" },
  { "^1.2.0-alpha", "1.2.0-pre" }, { "^0.0.1-alpha", "0.0.1-beta" },
  { "^0.0.1-alpha", "0.0.1" }, { "^0.1.1-alpha", "0.1.1-beta" },
  { "^x", "1.2.3" }, { "x - 1.0.0", "0.9.7" }, { "x - 1.x", "0.9.7" },
  { "1.0.0 - x", "1.9.7" }, { "1.x - x", "1.9.7" }, { "<=7.x", "7.9.9" },
  { "^0.2.3", "0.2.9" }, { "~1.2.3", "1.2.9" }, { "1.x", "1.99.0" },
  { ">=1.1.0 <1.4.2", "1.1.0" }, { ">=1.1.0 <1.4.2", "1.4.1" },
  { ">=1.1.0 <1.4.2", "v1.3.0" }, { "1.2.3 - 2.3.4", "2.3.4" },
  { "1.2 - 2.3.4", "1.2.0" }, { "1.2.3 - 2.3", "2.3.99" },
  { "1.2.3 - 2", "2.99.99" }, { ">=1.5.0-rc.0 <2", "1.5.0-rc.1" },
}

-- node-semver test/fixtures/range-exclude.js (strict mode cases)
local exclude = {
  { "1.0.0 - 2.0.0", "2.2.3" }, { "1.2.3+asdf - 2.4.3+asdf", "1.2.3-pre.2" },
  { "1.2.3+asdf - 2.4.3+asdf", "2.4.3-alpha" }, { "^1.2.3+build", "2.0.0" },
  { "^1.2.3+build", "1.2.0" }, { "^1.2.3", "1.2.3-pre" },
  { "^1.2", "1.2.0-pre" }, { ">1.2", "1.3.0-beta" }, { "<=1.2.3", "1.2.3-beta" },
  { "^1.2.3", "1.2.3-beta" }, { "=0.7.x", "0.7.0-asdf" },
  { ">=0.7.x", "0.7.0-asdf" }, { "<=0.7.x", "0.7.0-asdf" },
  { "1.0.0", "1.0.1" }, { ">=1.0.0", "0.0.0" }, { ">=1.0.0", "0.0.1" },
  { ">=1.0.0", "0.1.0" }, { ">1.0.0", "0.0.1" }, { ">1.0.0", "0.1.0" },
  { "<=2.0.0", "3.0.0" }, { "<=2.0.0", "2.9999.9999" }, { "<=2.0.0", "2.2.9" },
  { "<2.0.0", "2.9999.9999" }, { "<2.0.0", "2.2.9" },
  { ">=0.1.97", "v0.1.93" }, { ">=0.1.97", "0.1.93" },
  { "0.1.20 || 1.2.4", "1.2.3" }, { ">=0.2.3 || <0.0.1", "0.0.3" },
  { ">=0.2.3 || <0.0.1", "0.2.2" }, { "2.x.x", "1.1.3" }, { "2.x.x", "3.1.3" },
  { "1.2.x", "1.3.3" }, { "1.2.x || 2.x", "3.1.3" }, { "1.2.x || 2.x", "1.1.3" },
  { "2.*.*", "1.1.3" }, { "2.*.*", "3.1.3" }, { "1.2.*", "1.3.3" },
  { "1.2.* || 2.*", "3.1.3" }, { "1.2.* || 2.*", "1.1.3" }, { "2", "1.1.2" },
  { "2.3", "2.4.1" }, { "~0.0.1", "0.1.0-alpha" }, { "~0.0.1", "0.1.0" },
  { "~2.4", "2.5.0" }, { "~2.4", "2.3.9" }, { "~>3.2.1", "3.3.2" },
  { "~>3.2.1", "3.2.0" }, { "~1", "0.2.3" }, { "~>1", "2.2.3" },
  { "~1.0", "1.1.0" }, { "<1", "1.0.0" }, { ">=1.2", "1.1.1" },
  { "=0.7.x", "0.8.2" }, { ">=0.7.x", "0.6.2" }, { "<0.7.x", "0.7.2" },
  { "<1.2.3", "1.2.3-beta" }, { "=1.2.3", "1.2.3-beta" }, { ">1.2", "1.2.8" },
  { "^0.0.1", "0.0.2-alpha" }, { "^0.0.1", "0.0.2" }, { "^1.2.3", "2.0.0-alpha" },
  { "^1.2.3", "1.2.2" }, { "^1.2", "1.1.9" }, { "*", "v1.2.3-foo" },
  { "^1.0.0", "2.0.0-rc1" }, { "^1.0.0-0", "1.0.1-rc1" },
  { "^1.0.0-rc2", "1.0.1-rc1" }, { "^1.0.0", "1.0.1-rc1" },
  { "^1.0.0", "1.1.0-rc1" }, { "1 - 2", "2.0.0-pre" }, { "1 - 2", "1.0.0-pre" },
  { "1.0 - 2", "1.0.0-pre" }, { "1.1.x", "1.0.0-a" }, { "1.1.x", "1.1.0-a" },
  { "1.1.x", "1.2.0-a" }, { "1.x", "1.0.0-a" }, { "1.x", "1.1.0-a" },
  { "1.x", "1.2.0-a" }, { ">=1.0.0 <1.1.0", "1.1.0" },
  { ">=1.0.0 <1.1.0", "1.1.0-pre" }, { ">=1.0.0 <1.1.0-pre", "1.1.0-pre" },
  { "<*", "1.0.0" }, { ">*", "1.0.0" }, { "^0.2.3", "0.3.0" },
  { "^0.2.3", "0.2.2" }, { "~1.2.3", "1.3.0" }, { "1.x", "2.0.0" },
  { ">=1.1.0 <1.4.2", "1.4.2" }, { ">=1.1.0 <1.4.2", "1.0.9" },
  { ">=1.1.0 <1.4.2", "1.4.2-rc.1" }, { "1.2.3 - 2.3.4", "2.3.5" },
  { "1.2.3 - 2.3", "2.4.0" }, { "1.2.3 - 2", "3.0.0" },
}

t.case("satisfies: node-semver range-include", function()
  for _, c in ipairs(include) do
    t.ok(semver.satisfies(c[2], c[1]), c[2] .. " should satisfy '" .. c[1] .. "'")
  end
end)

t.case("satisfies: node-semver range-exclude", function()
  for _, c in ipairs(exclude) do
    t.ok(not semver.satisfies(c[2], c[1]),
         c[2] .. " should not satisfy '" .. c[1] .. "'")
  end
end)

t.case("satisfies: accepts a parsed version", function()
  t.ok(semver.satisfies(semver.parse("1.3.0"), "^1.2"))
end)

-- node-semver test/fixtures/range-parse.js (npm prints "" for "*").
local desugar = {
  { "1.0.0 - 2.0.0", ">=1.0.0 <=2.0.0" }, { "1 - 2", ">=1.0.0 <3.0.0-0" },
  { "1.0 - 2.0", ">=1.0.0 <2.1.0-0" }, { "1.0.0", "1.0.0" }, { ">=*", "*" },
  { "", "*" }, { "*", "*" }, { "x", "*" }, { ">=1.0.0", ">=1.0.0" },
  { ">1.0.0", ">1.0.0" }, { "<=2.0.0", "<=2.0.0" }, { "1", ">=1.0.0 <2.0.0-0" },
  { "<2.0.0", "<2.0.0" }, { ">= 1.0.0", ">=1.0.0" }, { ">=  1.0.0", ">=1.0.0" },
  { "0.1.20 || 1.2.4", "0.1.20||1.2.4" },
  { ">=0.2.3 || <0.0.1", ">=0.2.3||<0.0.1" },
  { "2.x.x", ">=2.0.0 <3.0.0-0" }, { "1.2.x", ">=1.2.0 <1.3.0-0" },
  { "1.2.x || 2.x", ">=1.2.0 <1.3.0-0||>=2.0.0 <3.0.0-0" },
  { "~1.2.3", ">=1.2.3 <1.3.0-0" }, { "~1.2", ">=1.2.0 <1.3.0-0" },
  { "~1", ">=1.0.0 <2.0.0-0" }, { "~>3.2.1", ">=3.2.1 <3.3.0-0" },
  { "~1.2.3-beta.2", ">=1.2.3-beta.2 <1.3.0-0" },
  { "^0.0.1", ">=0.0.1 <0.0.2-0" }, { "^0.1.2", ">=0.1.2 <0.2.0-0" },
  { "^1.2.3", ">=1.2.3 <2.0.0-0" }, { "^1.2", ">=1.2.0 <2.0.0-0" },
  { "^0.0", ">=0.0.0 <0.1.0-0" }, { "^0.0.x", ">=0.0.0 <0.1.0-0" },
  { "^0.x", ">=0.0.0 <1.0.0-0" }, { "^0", ">=0.0.0 <1.0.0-0" },
  { "^0.1", ">=0.1.0 <0.2.0-0" }, { "^1.x", ">=1.0.0 <2.0.0-0" },
  { "^0.0.1-beta", ">=0.0.1-beta <0.0.2-0" },
  { "^1.2.3-beta.4", ">=1.2.3-beta.4 <2.0.0-0" },
  { "<1", "<1.0.0-0" }, { "<1.2", "<1.2.0-0" }, { "<=1", "<2.0.0-0" },
  { "<=1.2", "<1.3.0-0" }, { ">1", ">=2.0.0" }, { ">1.2", ">=1.3.0" },
  { "=1.2", ">=1.2.0 <1.3.0-0" }, { "<*", "<0.0.0-0" }, { ">*", "<0.0.0-0" },
  { "1.2.3 - *", ">=1.2.3" }, { "* - 1.2.3", "<=1.2.3" },
  { "1.2.3 - 2.3", ">=1.2.3 <2.4.0-0" }, { "v1.2.3", "1.2.3" },
  { ">=v1.2.3", ">=1.2.3" }, { "1.2.3+build", "1.2.3" },
}

t.case("normalize_range: desugaring matches node-semver", function()
  for _, c in ipairs(desugar) do
    t.eq(semver.normalize_range(c[1]), c[2], "'" .. c[1] .. "'")
  end
end)

t.case("valid_range: good and bad ranges", function()
  for _, r in ipairs { ">=1.1.0 <1.4.2", "^1.2", "~1.2.3", "1.x", "*", "",
                       "1.2.3 - 2.3.4", "^0.2.3 || ^1", ">= 1.2.3 < 2" } do
    t.eq(semver.valid_range(r), true, r)
  end
  local bad = { ">=a", "1.2.3.4", "^", "~", "1.2.3 -", "=>1.2.3",
    "!=1.2.3", "1.2.3 <", ">=01.2.3", "1.x.3", "1.2.x-beta", "^1.2.3-",
    "1.2.3 - 2.3.4 - 5", "abc", "<=>1", string.rep("1", 300) }
  for _, r in ipairs(bad) do
    local ok, err = semver.valid_range(r)
    t.eq(ok, nil, r)
    t.match(err, "^invalid range '")
    t.ok(err:find(r:sub(1, 40), 1, true), err)
  end
  local ok, err = semver.valid_range(nil)
  t.eq(ok, nil)
  t.match(err, "expected a string")
end)

t.case("satisfies: a bad range or version raises naming it", function()
  t.err(function() semver.satisfies("1.2.3", ">=a") end,
        "invalid range '>=a': '>=a'")
  t.err(function() semver.satisfies("banana", "^1") end,
        "invalid version 'banana'")
end)

t.case("satisfies: the range text cache does not change results", function()
  for i = 1, 300 do
    local r = "^1." .. i
    t.ok(semver.satisfies("1." .. i .. ".5", r))
    t.ok(not semver.satisfies("1." .. (i - 1) .. ".5", r))
  end
  t.ok(semver.satisfies("1.2.5", "^1.2"))
end)

t.case("normalize_range: the largest major parses back (found by fuzzing)", function()
  local n = semver.normalize_range("999999999999999")
  t.eq(n, ">=999999999999999.0.0")
  t.ok(semver.valid_range(n))
  t.ok(semver.satisfies("999999999999999.1.2", n))
  t.eq(semver.normalize_range("^1.2"), ">=1.2.0 <2.0.0-0")
end)

t.case("normalize_range: an overflowing minor or patch is carried (found by fuzzing)", function()
  local big = "999999999999999"
  local cases = {
    { "999984." .. big, ">=999984." .. big .. ".0 <999985.0.0-0" },
    { ">999984." .. big, ">=999985.0.0" },
    { "^0.0." .. big, ">=0.0." .. big .. " <0.1.0-0" },
    { "~1." .. big, ">=1." .. big .. ".0 <2.0.0-0" },
    { ">" .. big, "<0.0.0-0" },
    { ">" .. big .. ".x || 1.x", "<0.0.0-0||>=1.0.0 <2.0.0-0" },
  }
  for _, c in ipairs(cases) do
    local n = semver.normalize_range(c[1])
    t.eq(n, c[2], c[1])
    t.ok(semver.valid_range(n), n)
    -- the normalized text matches what the range matches
    for _, v in ipairs { "999984." .. big .. ".7", "999985.0.0", "999985.0.0-rc",
                         "0.0." .. big, "0.1.0", "1." .. big .. ".3", "2.0.0",
                         "1.5.0", big .. ".0.0" } do
      t.eq(semver.satisfies(v, n), semver.satisfies(v, c[1]), c[1] .. " vs " .. v)
    end
  end
end)

-- uphook.c.sys's folder services (host/sys.c), which every test case's
-- temporary world goes through: mkdirs makes what is missing of a path,
-- write replaces a file, rmtree removes a whole tree without following
-- the links in it.
local t = require "uphook.test"
local C = require("uphook.core.cfamilies").load()
local sys = C.sys

t.case("mkdirs makes every missing folder of a path, and is idempotent",
  function()
    local dir = assert(sys.mkdtemp())
    t.eq(sys.mkdirs(dir .. "/a/b//c/d/"), true)
    t.eq(sys.kind(dir .. "/a/b/c/d"), "dir")
    t.eq(sys.mkdirs(dir .. "/a/b/c/d"), true, "an existing folder")
    t.eq(sys.mkdirs(dir .. "/a/x"), true, "one level below one there is")
    t.eq(sys.kind(dir .. "/a/x"), "dir")
    assert(sys.write(dir .. "/file", "text"))
    local ok, err = sys.mkdirs(dir .. "/file/sub/deeper")
    t.eq(ok, nil, "a file in the way")
    t.match(err, "^mkdir " .. dir:gsub("%p", "%%%0") .. "/file")
    t.match(err, "Not a directory")
    sys.rmtree(dir)
  end)

t.case("write replaces a file's content; an error names the path",
  function()
    local dir = assert(sys.mkdtemp())
    t.eq(sys.write(dir .. "/f", "a longer first content"), true)
    t.eq(sys.write(dir .. "/f", "short"), true)
    t.eq(sys.read(dir .. "/f"), "short")
    t.eq(sys.write(dir .. "/empty", ""), true)
    t.eq(sys.read(dir .. "/empty"), "")
    local ok, err = sys.write(dir .. "/no/such/f", "x")
    t.eq(ok, nil)
    t.eq(err, "open " .. dir .. "/no/such/f: No such file or directory")
    sys.rmtree(dir)
  end)

t.case("rmtree removes a tree, its links but not what they point to",
  function()
    local dir = assert(sys.mkdtemp())
    local outside = assert(sys.mkdtemp())
    assert(sys.write(outside .. "/keep", "kept"))
    assert(sys.mkdirs(dir .. "/a/b/c"))
    for i = 1, 300 do         -- more entries than one getdents64 buffer
      assert(sys.write(string.format("%s/a/b/f%03d", dir, i), "x"))
    end
    assert(sys.write(dir .. "/a/b/c/leaf", "y"))
    assert(sys.mkdirs(dir .. "/empty/inner"))  -- empty folders, nested
    assert(sys.mkdirs(dir .. "/a/b/empty"))
    t.eq(sys.run { "ln", "-s", outside, dir .. "/a/link" }, 0)
    t.eq(sys.run { "ln", "-s", outside .. "/keep", dir .. "/a/b/c/flink" }, 0)
    t.eq(sys.rmtree(dir), true)
    t.eq(sys.kind(dir), nil, "the tree is gone")
    t.eq(sys.read(outside .. "/keep"), "kept", "a link's target is kept")
    t.eq(sys.rmtree(dir), true, "an absent tree is no error")
    sys.rmtree(outside)
    t.eq(sys.kind(outside), nil)
  end)

t.case("rmtree refuses a folder that is not one of uphook's own",
  function()
    local ok, err = pcall(sys.rmtree, "/tmp/not-uphook")
    t.eq(ok, false)
    t.match(err, "only uphook%.%* temporary folders can be removed")
  end)

/* uphook.c.fs: confinement, atomic writes, modes, backup.  The Lua part
 * runs twice: with openat2 and with the O_NOFOLLOW walk fallback. */
#include "fs.h"
#include "hash.h"
#include "unit.h"

#include <dirent.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <lualib.h>
#include <lauxlib.h>

static char base[64];

/* listdir(path) -> sorted-insensitive list of names (test helper). */
static int l_listdir(lua_State *L)
{
  DIR *d = opendir(luaL_checkstring(L, 1));
  struct dirent *e;
  int i = 0;
  lua_newtable(L);
  if (!d)
    return 1;
  while ((e = readdir(d)) != NULL) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
      continue;
    lua_pushstring(L, e->d_name);
    lua_rawseti(L, -2, ++i);
  }
  closedir(d);
  return 1;
}

static lua_State *newstate(void)
{
  lua_State *L = luaL_newstate();
  luaL_openlibs(L);
  luaL_requiref(L, "uphook.c.fs", luaopen_uphook_fs, 0);
  luaL_requiref(L, "uphook.c.hash", luaopen_uphook_hash, 0);
  lua_pop(L, 2);
  lua_register(L, "listdir", l_listdir);
  lua_pushstring(L, base);
  lua_setglobal(L, "T");
  lua_pushboolean(L, uh_fs_walk_only);
  lua_setglobal(L, "WALK");
  return L;
}

/* Common Lua prelude: a fresh tree under T for each case. */
static const char *PRELUDE =
  "fs = require 'uphook.c.fs'; hash = require 'uphook.c.hash'\n"
  "R = T .. '/root'; O = T .. '/outside'\n"
  "function sh(cmd) assert(os.execute(cmd)) end\n"
  "sh('rm -rf ' .. R .. ' ' .. O .. ' ' .. T .. '/bak* && mkdir -p ' .. R .. '/sub/adir ' .. O)\n"
  "function put(p, s) local f = assert(io.open(p, 'wb')); f:write(s); f:close() end\n"
  "function get(p) local f = io.open(p, 'rb'); if not f then return nil end\n"
  "  local s = f:read('a'); f:close(); return s end\n"
  "put(O .. '/secret', 'SECRET'); put(R .. '/sub/file', 'inside')\n"
  "sh('ln -s ../outside ' .. R .. '/out')\n"          /* dir link, escapes */
  "sh('ln -s ' .. O .. '/secret ' .. R .. '/abs')\n"  /* absolute link */
  "sh('ln -s ../../outside/secret ' .. R .. '/sub/rel')\n"
  "sh('ln -s sub ' .. R .. '/in')\n"                  /* stays inside */
  "sh('ln -s file ' .. R .. '/sub/flink')\n"
  "function raises(pat, f, ...) local ok, e = pcall(f, ...)\n"
  "  assert(not ok, 'no error'); assert(tostring(e):find(pat, 1, true), e) end\n"
  "function notmp(dir) for _, n in ipairs(listdir(dir)) do\n"
  "  assert(not n:find('^%.uphook%-'), 'temp left: ' .. dir .. '/' .. n) end end\n";

static const char *CALLS =
  /* every function, on a path p; returns a list of thunks */
  "function calls(p) local src = O .. '/secret'; return {\n"
  "  function() return fs.read(R, p) end,\n"
  "  function() return fs.write(R, p, 'x') end,\n"
  "  function() return fs.remove(R, p) end,\n"
  "  function() return fs.install(src, R, p, '0755') end,\n"
  "  function() return fs.stat(R, p) end,\n"
  "  function() return fs.hash(R, p) end,\n"
  "  function() return fs.backup(R, p, T .. '/bak') end } end\n";

static void t_lexical(void)
{
  lua_State *L = newstate();
  CHECK(LUA_RUN(L, PRELUDE) && LUA_RUN(L, CALLS));
  CHECK(LUA_RUN(L,
    "for _, p in ipairs{'../x', 'a/../../x', 'sub/../file', '..', '/etc/passwd',\n"
    "                   '/', 'sub/..'} do\n"
    "  for _, f in ipairs(calls(p)) do raises('path leaves its root: ' .. p, f) end\n"
    "end\n"
    "for _, p in ipairs{'', 'a\\0b', 'sub/', '.', 'sub/.'} do\n"
    "  for _, f in ipairs(calls(p)) do raises('invalid path', f) end\n"
    "end\n"
    "raises('absolute root', fs.read, 'rel/root', 'x')\n"
    "raises('absolute file path', fs.install, 'rel', R, 'x')\n"
    "raises('absolute file path', fs.backup, R, 'sub/file', 'bak')\n"
    "assert(get(O .. '/secret') == 'SECRET')\n"));
  lua_close(L);
}

static void t_symlink_out(void)
{
  lua_State *L = newstate();
  CHECK(LUA_RUN(L, PRELUDE) && LUA_RUN(L, CALLS));
  CHECK(LUA_RUN(L,
    "for _, p in ipairs{'out/secret', 'abs', 'sub/rel', 'out/new', 'in/../out/x'} do\n"
    "  for i, f in ipairs(calls(p)) do\n"
    "    local ok, e = pcall(f)\n"
    "    assert(not ok, p .. ' call ' .. i .. ' not refused')\n"
    "    assert(e:find('path leaves its root: ' .. p, 1, true) or\n"
    "           e:find('symlink not followed: ' .. p, 1, true) or\n"
    "           (p:find('%.%.') and e:find('leaves its root')), e)\n"
    "  end\n"
    "end\n"
    "assert(get(O .. '/secret') == 'SECRET')\n"
    "assert(#listdir(O) == 1 and get(T .. '/bak') == nil)\n"));
  lua_close(L);
}

static void t_symlink_in(void)
{
  lua_State *L = newstate();
  CHECK(LUA_RUN(L, PRELUDE));
  CHECK(LUA_RUN(L,
    "if WALK then\n"
    "  raises('symlink not followed: in/file', fs.read, R, 'in/file')\n"
    "  raises('symlink not followed: sub/flink', fs.stat, R, 'sub/flink')\n"
    "  return\n"
    "end\n"
    "assert(fs.read(R, 'in/file') == 'inside')\n"
    "assert(fs.read(R, 'sub/flink') == 'inside')\n"
    "assert(fs.stat(R, 'in/file').size == 6)\n"
    "assert(fs.hash(R, 'in/file') == hash.sha256('inside'))\n"
    "assert(fs.write(R, 'in/new', 'n'))\n"
    "assert(get(R .. '/sub/new') == 'n')\n"
    "assert(fs.backup(R, 'in/file', T .. '/bak') == true)\n"
    "assert(get(T .. '/bak') == 'inside')\n"));
  lua_close(L);
}

static void t_read_stat_hash(void)
{
  lua_State *L = newstate();
  CHECK(LUA_RUN(L, PRELUDE));
  CHECK(LUA_RUN(L,
    "put(R .. '/bin', 'a\\0b\\0c')\n"
    "assert(fs.read(R, 'bin') == 'a\\0b\\0c')\n"
    "assert(fs.read(R, './sub//file') == 'inside')\n"
    "local v, e = fs.read(R, 'nope'); assert(v == nil and e == nil)\n"
    "v, e = fs.read(R, 'sub/nope/x'); assert(v == nil and e == nil)\n"
    "v, e = fs.read(R, 'sub/adir'); assert(v == nil and e:find(R .. '/sub/adir', 1, true), e)\n"
    "v, e = fs.read(T .. '/missing-root', 'x'); assert(v == nil and e:find('missing%-root'), e)\n"
    "assert(fs.stat(R, 'nope') == nil)\n"
    "local st = fs.stat(R, 'sub/adir'); assert(st.type == 'directory')\n"
    "st = fs.stat(R, 'bin'); assert(st.size == 5 and st.type == 'file', st.size)\n"
    "assert(fs.hash(R, 'bin') == hash.sha256('a\\0b\\0c'))\n"
    "v, e = fs.hash(R, 'nope'); assert(v == nil and e:find('nope'), e)\n"));
  lua_close(L);
}

static void t_write(void)
{
  lua_State *L = newstate();
  CHECK(LUA_RUN(L, PRELUDE));
  CHECK(LUA_RUN(L,
    "assert(fs.write(R, 'kubelet', '--a=1\\n') == true)\n"
    "assert(get(R .. '/kubelet') == '--a=1\\n')\n"
    "assert(fs.stat(R, 'kubelet').mode == '0644')\n"
    "assert(fs.write(R, 'kubelet', 'two', '0600'))\n"
    "assert(get(R .. '/kubelet') == 'two' and fs.stat(R, 'kubelet').mode == '0600')\n"
    "assert(fs.write(R, 'x/y/z/deep', 'd', '0755'))\n"
    "assert(get(R .. '/x/y/z/deep') == 'd' and fs.stat(R, 'x/y/z/deep').mode == '0755')\n"
    "assert(fs.write(R, 'empty', ''))\n"
    "assert(get(R .. '/empty') == '')\n"
    /* replacing a symlink inside the root replaces the link, not the target */
    "if not WALK then assert(fs.write(R, 'sub/flink', 'new'))\n"
    "  assert(get(R .. '/sub/file') == 'inside' and get(R .. '/sub/flink') == 'new') end\n"
    "for _, m in ipairs{'abc', '4755', '07777', '9', 644, '', '0644x'} do\n"
    "  assert(not pcall(fs.write, R, 'm', 'x', m), tostring(m)) end\n"
    "assert(not pcall(fs.write, R, 'm', nil))\n"
    "notmp(R); notmp(R .. '/x/y/z')\n"));
  lua_close(L);
}

static void t_atomic_failure(void)
{
  lua_State *L = newstate();
  CHECK(LUA_RUN(L, PRELUDE));
  CHECK(LUA_RUN(L,
    /* renaming a file over a directory fails after the temp file exists */
    "local v, e = fs.write(R, 'sub/adir', 'x')\n"
    "assert(v == nil and e:find(R .. '/sub/adir', 1, true), e)\n"
    "notmp(R .. '/sub')\n"
    "v, e = fs.install(R .. '/sub/file', R, 'sub/adir', '0755')\n"
    "assert(v == nil and e:find('sub/adir', 1, true), e); notmp(R .. '/sub')\n"
    /* a file in the way of an intermediate directory */
    "v, e = fs.write(R, 'sub/file/x', 'x'); assert(v == nil and e, e)\n"
    "assert(get(R .. '/sub/file') == 'inside')\n"
    /* an unwritable directory (skipped as root, which bypasses modes) */
    "notmp(R)\n"));
  lua_close(L);
}

static void t_remove_install(void)
{
  lua_State *L = newstate();
  CHECK(LUA_RUN(L, PRELUDE));
  CHECK(LUA_RUN(L,
    "put(R .. '/gone', 'g')\n"
    "assert(fs.remove(R, 'gone') == true and get(R .. '/gone') == nil)\n"
    "assert(fs.remove(R, 'gone') == false)\n"
    "assert(fs.remove(R, 'no/such/dir') == false)\n"
    "local v, e = fs.remove(R, 'sub/adir'); assert(v == nil and e:find('adir'), e)\n"
    "local src = T .. '/cache-blob'; put(src, string.rep('\\1\\2\\0', 400000))\n"
    "assert(fs.install(src, R, 'bin/tool', '0755') == true)\n"
    "assert(get(R .. '/bin/tool') == get(src) and get(src) ~= nil)\n"
    "assert(fs.stat(R, 'bin/tool').mode == '0755')\n"
    "assert(fs.install(src, R, 'bin/tool2'))\n"
    "assert(fs.stat(R, 'bin/tool2').mode == '0644')\n"
    "v, e = fs.install(T .. '/no-blob', R, 'bin/t3')\n"
    "assert(v == nil and e:find(T .. '/no-blob', 1, true), e)\n"
    "v, e = fs.install(T, R, 'bin/t3'); assert(v == nil and e, e)\n"
    "assert(fs.stat(R, 'bin/t3') == nil); notmp(R .. '/bin')\n"
    "if io.open('/dev/shm') then\n"   /* another filesystem: plain copy */
    "  local s2 = '/dev/shm/uh-test-' .. math.random(1e9); put(s2, 'shm')\n"
    "  assert(fs.install(s2, R, 'bin/shm')); os.remove(s2)\n"
    "  assert(get(R .. '/bin/shm') == 'shm') end\n"));
  lua_close(L);
}

static void t_backup(void)
{
  lua_State *L = newstate();
  CHECK(LUA_RUN(L, PRELUDE));
  CHECK(LUA_RUN(L,
    "put(R .. '/cfg', 'old')\n"
    "assert(fs.backup(R, 'cfg', T .. '/bak') == true)\n"
    "assert(fs.write(R, 'cfg', 'new'))\n"
    "assert(get(T .. '/bak') == 'old' and get(R .. '/cfg') == 'new')\n"
    "assert(fs.backup(R, 'cfg', T .. '/bak') == true)\n"   /* replaces */
    "assert(get(T .. '/bak') == 'new')\n"
    "assert(fs.backup(R, 'cfg', T .. '/bak') == true)\n"   /* same inode */
    "notmp(T)\n"
    "assert(fs.backup(R, 'nope', T .. '/bak2') == false)\n"
    "assert(fs.backup(R, 'no/dir', T .. '/bak2') == false)\n"
    "assert(get(T .. '/bak2') == nil)\n"
    "local v, e = fs.backup(R, 'cfg', T .. '/no/dir/bak')\n"
    "assert(v == nil and e:find(T .. '/no/dir/bak', 1, true), e)\n"
    "v, e = fs.backup(R, 'sub/adir', T .. '/bak3'); assert(v == nil and e, 'dir')\n"
    "notmp(T)\n"
    "if io.open('/dev/shm') then\n"   /* across filesystems: a copy */
    "  local d = '/dev/shm/uh-bak-' .. math.random(1e9)\n"
    "  sh('chmod 0640 ' .. R .. '/cfg')\n"
    "  assert(fs.backup(R, 'cfg', d) == true and get(d) == 'new')\n"
    "  assert(fs.write(R, 'cfg', 'newer') and get(d) == 'new')\n"
    "  notmp('/dev/shm'); os.remove(d) end\n"));
  lua_close(L);
}

static int count_fds(void)
{
  DIR *d = opendir("/proc/self/fd");
  int n = 0;
  while (d && readdir(d))
    n++;
  if (d)
    closedir(d);
  return n;
}

/* Errors raised halfway still close every fd (to-be-closed op). */
static void t_no_fd_leak(void)
{
  lua_State *L = newstate();
  int before;
  CHECK(LUA_RUN(L, PRELUDE) && LUA_RUN(L, CALLS));
  before = count_fds();
  CHECK(LUA_RUN(L,
    "for _ = 1, 50 do for _, p in ipairs{'out/secret', 'sub/adir', 'nope'} do\n"
    "  for _, f in ipairs(calls(p)) do pcall(f) end end end\n"
    "collectgarbage()\n"));
  CHECK(count_fds() == before);
  lua_close(L);
}

static void all(void)
{
  RUN(t_no_fd_leak);
  RUN(t_lexical);
  RUN(t_symlink_out);
  RUN(t_symlink_in);
  RUN(t_read_stat_hash);
  RUN(t_write);
  RUN(t_atomic_failure);
  RUN(t_remove_install);
  RUN(t_backup);
}

int main(void)
{
  int rc;
  memcpy(base, "/tmp/uh_test_fsXXXXXX", 22);
  if (!mkdtemp(base))
    return 2;
  all();
  printf("-- again with the O_NOFOLLOW walk (no openat2)\n");
  uh_fs_walk_only = 1;
  all();
  rc = UNIT_END();
  {
    lua_State *L = newstate();
    LUA_RUN(L, "os.execute('rm -rf ' .. T)");
    lua_close(L);
  }
  return rc;
}

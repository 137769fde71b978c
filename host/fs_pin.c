/* Roots resolved once (docs/security.md "Addon folder reopened by path"):
 * fs.pin(path) opens a folder, following symlinks that one time, and keeps
 * its descriptor; every later fs.* call whose root is the path fs.pin
 * returned resolves beneath that descriptor instead of opening the path
 * again.  Swapping the folder (a rename, a symlink put in its place) during a
 * run then changes nothing: reads stay in the folder that was resolved.
 *
 * The descriptors live in the registry table "uphook.fs.pins" (path ->
 * userdata), for the life of the process. */
#include "fs.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <lauxlib.h>

#define PINS "uphook.fs.pins"
#define PIN_MT "uphook.fs.pin"

static int pin_gc(lua_State *L)
{
  int *fd = luaL_checkudata(L, 1, PIN_MT);
  if (*fd >= 0)
    close(*fd);
  *fd = -1;
  return 0;
}

static void pins(lua_State *L)
{
  if (lua_getfield(L, LUA_REGISTRYINDEX, PINS) != LUA_TTABLE) {
    lua_pop(L, 1);
    lua_newtable(L);
    lua_pushvalue(L, -1);
    lua_setfield(L, LUA_REGISTRYINDEX, PINS);
  }
}

/* fs.pin(path) -> the folder's real path (its descriptor held) | nil, err */
int fs_pin(lua_State *L)
{
  const char *path = luaL_checkstring(L, 1);
  char proc[64], real[PATH_MAX];
  ssize_t n;
  int fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC), *ud;
  if (fd < 0) {
    luaL_pushfail(L);
    lua_pushfstring(L, "%s: %s", path, strerror(errno));
    return 2;
  }
  snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
  n = readlink(proc, real, sizeof real - 1);
  if (n <= 0 || real[0] != '/') {
    close(fd);
    luaL_pushfail(L);
    lua_pushfstring(L, "%s: cannot tell where it leads", path);
    return 2;
  }
  real[n] = '\0';
  pins(L);
  if (lua_getfield(L, -1, real) == LUA_TUSERDATA) {
    close(fd);   /* the same folder, pinned before: keep the first */
  } else {
    lua_pop(L, 1);
    ud = lua_newuserdatauv(L, sizeof *ud, 0);
    *ud = fd;
    if (luaL_newmetatable(L, PIN_MT)) {
      lua_pushcfunction(L, pin_gc);
      lua_setfield(L, -2, "__gc");
    }
    lua_setmetatable(L, -2);
    lua_setfield(L, -2, real);
  }
  lua_pushstring(L, real);
  return 1;
}

int uh_fs_pinned(lua_State *L, const char *root)
{
  int fd = -1, top = lua_gettop(L);
  if (lua_getfield(L, LUA_REGISTRYINDEX, PINS) == LUA_TTABLE &&
      lua_getfield(L, -1, root) == LUA_TUSERDATA)
    fd = *(int *)lua_touserdata(L, -1);
  lua_settop(L, top);
  return fd;
}

/* The node lock shared with `microk8s enable/disable`: lockf on
 * $SNAP_DATA/var/lock/.microk8s-addon-lock (docs/contract.md §7).
 *
 * Lua: sys.lock(path, wait_seconds) -> lock | nil, message, "locked"
 *      lock:release()   (also __gc / __close) */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>
#include <lua.h>
#include <lauxlib.h>
#include "luax.h"
#include "sys.h"
#include "os.h"

#define LOCK_MT "uphook.lock"

struct lock { int fd; };

static int lock_release(lua_State *L)
{
  struct lock *k = luaL_checkudata(L, 1, LOCK_MT);
  if (k->fd >= 0) {
    lockf(k->fd, F_ULOCK, 0);
    close(k->fd);
    k->fd = -1;
  }
  return 0;
}

static const luaL_Reg lock_methods[] = {
  { "__close", lock_release },
  { "__gc", lock_release },
  { "release", lock_release },
  { NULL, NULL }
};

int sys_lock(lua_State *L)
{
  const char *path = luaL_checkstring(L, 1);
  double wait = luaL_optnumber(L, 2, 10);
  struct lock *k;
  int tries = (int)(wait * 10) + 1;
  int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) {
    luaL_pushfail(L);
    lua_pushfstring(L, "cannot open the lock %s: %s", path, strerror(errno));
    return 2;
  }
  while (lockf(fd, F_TLOCK, 0) != 0) {
    if ((errno != EACCES && errno != EAGAIN) || --tries <= 0) {
      int e = errno;
      close(fd);
      luaL_pushfail(L);
      lua_pushfstring(L, "%s is held by another process (an upgrade, or "
                      "microk8s enable/disable); waited %f s: %s", path, wait,
                      strerror(e));
      lua_pushliteral(L, "locked");
      return 3;
    }
    uh_sleep(0.1);
  }
  k = lua_newuserdatauv(L, sizeof *k, 0);
  k->fd = fd;
  uh_newclass(L, LOCK_MT, lock_methods);
  luaL_setmetatable(L, LOCK_MT);
  return 1;
}

int sys_lock_fd(lua_State *L, int idx)
{
  return ((struct lock *)luaL_checkudata(L, idx, LOCK_MT))->fd;
}

/* The node lock shared with `microk8s enable/disable`: lockf on
 * $SNAP_DATA/var/lock/.microk8s-addon-lock (docs/contract.md §7).
 *
 * Lua: sys.lock(path, wait_seconds) -> lock | nil, message, "locked"
 *      sys.lock_holder(path) -> pid, command line | nil
 *      lock:release()   (also __gc / __close) */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <lua.h>
#include <lauxlib.h>
#include "luax.h"
#include "sys.h"
#include "osutil.h"

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

/* Who holds the lock on fd (F_GETLK: lockf's locks are fcntl record
 * locks): its pid, and its command line in cmd (NULs as spaces, other
 * control characters as '?'); 0 when no one does or it cannot tell. */
static pid_t holder(int fd, char *cmd, size_t n)
{
  struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
  char path[64];
  size_t len = 0, i;
  FILE *f;
  cmd[0] = '\0';
  if (fcntl(fd, F_GETLK, &fl) != 0 || fl.l_type == F_UNLCK || fl.l_pid <= 0)
    return 0;
  snprintf(path, sizeof path, "/proc/%ld/cmdline", (long)fl.l_pid);
  if ((f = fopen(path, "re"))) {
    len = fread(cmd, 1, n - 1, f);
    fclose(f);
  }
  while (len > 0 && cmd[len - 1] == '\0')
    len--;
  for (i = 0; i < len; i++)
    if (cmd[i] == '\0')
      cmd[i] = ' ';
    else if ((unsigned char)cmd[i] < 0x20 || cmd[i] == 0x7f)
      cmd[i] = '?';
  cmd[len] = '\0';
  return fl.l_pid;
}

int sys_lock_holder(lua_State *L)
{
  const char *path = luaL_checkstring(L, 1);
  char cmd[512];
  pid_t pid;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    luaL_pushfail(L);
    return 1;
  }
  pid = holder(fd, cmd, sizeof cmd);
  close(fd);
  if (pid <= 0) {
    luaL_pushfail(L);
    return 1;
  }
  lua_pushinteger(L, pid);
  lua_pushstring(L, cmd);
  return 2;
}

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
    int e = errno;
    if (e != EACCES && e != EAGAIN) {
      close(fd);
      luaL_pushfail(L);
      lua_pushfstring(L, "cannot lock %s: %s", path, strerror(e));
      return 2;
    }
    if (--tries <= 0) {
      char cmd[512], who[640];
      pid_t pid = holder(fd, cmd, sizeof cmd);
      close(fd);
      if (pid > 0)
        snprintf(who, sizeof who, "PID %ld (%s)", (long)pid,
                 *cmd ? cmd : "?");
      else
        snprintf(who, sizeof who, "another process (an upgrade, or "
                 "microk8s enable/disable)");
      luaL_pushfail(L);
      lua_pushfstring(L, "%s is held by %s; waited %f s", path, who, wait);
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

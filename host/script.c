/* An addon's legacy `upgrade` script, run in uphook's place as
 * `microk8s enable` runs an enable script (docs/microk8s.md):
 *
 *   sys.exec(path, argv, env [, lock]) -> only on failure: nil, message
 *
 * argv is the new program's argv (argv[1] is its argv[0]); env holds
 * variables to set first.  A lock from sys.lock() stays held by the
 * script: lockf locks belong to the process, which exec keeps, and the
 * lock's descriptor loses FD_CLOEXEC so that exec does not close it. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <lua.h>
#include <lauxlib.h>
#include "sys.h"

#define MAX_ARGS 4096

static void set_env(lua_State *L, int idx)
{
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    const char *k = luaL_checkstring(L, -2);
    if (!*k || strchr(k, '='))
      luaL_error(L, "bad argument #%d to 'exec' (bad variable name '%s')",
                 idx, k);
    setenv(k, luaL_checkstring(L, -1), 1);
    lua_pop(L, 1);
  }
}

int sys_exec(lua_State *L)
{
  const char *path = luaL_checkstring(L, 1);
  lua_Integer i, n;
  char **argv;
  int fd, e;
  luaL_checktype(L, 2, LUA_TTABLE);
  luaL_checktype(L, 3, LUA_TTABLE);
  n = luaL_len(L, 2);
  luaL_argcheck(L, n >= 1 && n <= MAX_ARGS, 2, "1 to 4096 arguments");
  fd = lua_isnoneornil(L, 4) ? -1 : sys_lock_fd(L, 4);
  argv = lua_newuserdatauv(L, (size_t)(n + 1) * sizeof *argv, 0);
  for (i = 1; i <= n; i++) {
    /* the strings stay referenced by the argv table */
    lua_geti(L, 2, i);
    argv[i - 1] = (char *)luaL_checkstring(L, -1);
    lua_pop(L, 1);
  }
  argv[n] = NULL;
  set_env(L, 3);
  if (fd >= 0)
    fcntl(fd, F_SETFD, fcntl(fd, F_GETFD) & ~FD_CLOEXEC);
  fflush(NULL);
  execv(path, argv);
  e = errno;
  if (fd >= 0)
    fcntl(fd, F_SETFD, fcntl(fd, F_GETFD) | FD_CLOEXEC);
  luaL_pushfail(L);
  lua_pushfstring(L, "cannot run %s: %s", path, strerror(e));
  return 2;
}

/* The download cache (<state-dir>/cache/sha256/<sum>) is trusted only
 * as far as it is checked: each use hashes the file again
 * (docs/security.md "Trusted cache", docs/state.md "The download cache").  Used by
 * host/http.c's cache hit, and as http.cached by the mock transfers of
 * uphook test (lua/backend/offline.lua), so both skip a transfer on the same
 * condition.  config.install verifies its copy as well (host/fs.c). */
#include "http.h"
#include "hash.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <lauxlib.h>

/* A cached file is used only after it is hashed again (docs/security.md
 * "Trusted cache"): whoever could write the cache cannot make uphook install other
 * bytes under a sum.  A file whose bytes differ is removed, so that it is
 * downloaded again. */
int uh_cache_verified(const char *path, const char *hex, struct stat *st)
{
  char got[UH_SHA256_HEXLEN + 1];
  int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC), r;
  if (fd < 0)
    return errno == ENOENT ? 0 : (unlink(path) == 0 ? 0 : -1);
  if (fstat(fd, st) != 0 || !S_ISREG(st->st_mode)) {
    close(fd);
    return unlink(path) == 0 ? 0 : -1;
  }
  r = uh_sha256_fd(fd, got);
  close(fd);
  if (r != 0)
    return -1;
  if (strcmp(got, hex) == 0)
    return 1;
  return unlink(path) == 0 ? 0 : -1;
}

int http_cached(lua_State *L)
{
  const char *dir = luaL_checkstring(L, 1);
  const char *hex = luaL_checkstring(L, 2);
  char path[PATH_MAX];
  struct stat st;
  luaL_argcheck(L, strspn(hex, "0123456789abcdef") == 64 && !hex[64], 2,
                "64 lower-case hex digits expected");
  if ((size_t)snprintf(path, sizeof path, "%s/sha256/%s", dir, hex)
      >= sizeof path)
    return luaL_argerror(L, 1, "cache folder too long");
  if (uh_cache_verified(path, hex, &st) == 1)
    lua_pushstring(L, path);
  else
    lua_pushnil(L);
  return 1;
}

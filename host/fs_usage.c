/* What a folder of the hook's takes on disk (fs.usage, for the state:
 * quota, docs/security.md "State without a quota"), and group names for
 * fs.stat.
 *
 * The walk opens each folder beneath the root with O_NOFOLLOW (symlinks
 * are counted, never followed), is bounded in depth, and stops counting
 * once past the caller's cap, so its cost does not grow with what a hook
 * managed to create beyond the quota. */
#include "fs.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <lauxlib.h>

#define BLOCK 4096
#define MAX_DEPTH 64

static uint64_t charge(const struct stat *st)
{
  uint64_t n = S_ISREG(st->st_mode) ? (uint64_t)st->st_size : 0;
  n = (n + BLOCK - 1) / BLOCK * BLOCK;
  return n < BLOCK ? BLOCK : n;
}

/* Add what the folder fd holds to *used; fd is consumed.  -1 with errno. */
static int walk(int fd, int depth, uint64_t cap, uint64_t *used)
{
  DIR *d = fdopendir(fd);
  struct dirent *e;
  int rc = 0;
  if (!d) {
    close(fd);
    return -1;
  }
  while (*used <= cap && (e = readdir(d)) != NULL) {
    struct stat st;
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
      continue;
    if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
      continue;   /* gone meanwhile */
    *used += charge(&st);
    if (S_ISDIR(st.st_mode)) {
      int sub;
      if (depth >= MAX_DEPTH) {
        *used = cap + 1;   /* deeper than any addon needs: over */
        break;
      }
      sub = openat(dirfd(d), e->d_name,
                   O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (sub >= 0 && (rc = walk(sub, depth + 1, cap, used)) != 0)
        break;
    }
  }
  closedir(d);
  return rc;
}

int fs_usage(lua_State *L)
{
  const char *root = luaL_checkstring(L, 1);
  lua_Integer cap = luaL_checkinteger(L, 2);
  uint64_t used = 0;
  int fd;
  luaL_argcheck(L, root[0] == '/', 1, "absolute folder expected");
  luaL_argcheck(L, cap >= 0, 2, "non-negative cap expected");
  fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT) {
    lua_pushinteger(L, 0);
    return 1;
  }
  if (fd < 0 || walk(fd, 0, (uint64_t)cap, &used) != 0) {
    luaL_pushfail(L);
    lua_pushfstring(L, "cannot measure %s: %s", root, strerror(errno));
    return 2;
  }
  lua_pushinteger(L, used > (uint64_t)INT64_MAX ? INT64_MAX
                     : (lua_Integer)used);
  return 1;
}

void uh_fs_push_group(lua_State *L, gid_t gid)
{
  struct group gr, *res = NULL;
  char buf[4096];
  if (getgrgid_r(gid, &gr, buf, sizeof buf, &res) == 0 && res)
    lua_pushstring(L, res->gr_name);
  else
    lua_pushnil(L);
}

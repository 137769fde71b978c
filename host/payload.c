/* A file's bytes bound for the hook process (see payload.h). */
#include "payload.h"
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <lauxlib.h>
#include "osutil.h"

typedef struct {
  size_t n;
  int fd;      /* -1 once sent */
} payload;

static int payload_gc(lua_State *L)
{
  payload *p = luaL_checkudata(L, 1, UH_PAYLOAD_MT);
  if (p->fd >= 0)
    close(p->fd);
  p->fd = -1;
  return 0;
}

static int payload_len(lua_State *L)
{
  payload *p = luaL_checkudata(L, 1, UH_PAYLOAD_MT);
  lua_pushinteger(L, (lua_Integer)p->n);
  return 1;
}

static int payload_tostring(lua_State *L)
{
  payload *p = luaL_checkudata(L, 1, UH_PAYLOAD_MT);
  luaL_Buffer b;
  char *s = luaL_buffinitsize(L, &b, p->n);
  if (uh_payload_pread(p->fd, s, p->n) != 0)
    return luaL_error(L, "payload: %s", strerror(errno));
  luaL_pushresultsize(&b, p->n);
  return 1;
}

static const luaL_Reg payload_methods[] = {
  {"__gc", payload_gc},
  {"__len", payload_len},
  {"__tostring", payload_tostring},
  {NULL, NULL}
};

int uh_payload_file(lua_State *L, int fd, size_t size)
{
  payload *p = lua_newuserdatauv(L, sizeof *p, 0);
  p->n = size;
  p->fd = -1;
  if (luaL_newmetatable(L, UH_PAYLOAD_MT))
    luaL_setfuncs(L, payload_methods, 0);
  lua_setmetatable(L, -2);
  if ((p->fd = fcntl(fd, F_DUPFD_CLOEXEC, 0)) < 0) {
    int e = errno;
    lua_pop(L, 1);
    errno = e;
    return -1;
  }
  return 0;
}

int *uh_payload_of(lua_State *L, int idx, size_t *n)
{
  payload *p = luaL_testudata(L, idx, UH_PAYLOAD_MT);
  if (!p)
    return NULL;
  *n = p->n;
  return &p->fd;
}

/* pread(2) of up to want bytes at off: the count (> 0), or -1 with errno
 * (ENODATA: the file ends before off). */
static ssize_t pread_some(int fd, char *buf, size_t want, off_t off)
{
  for (;;) {
    ssize_t r = pread(fd, buf, want, off);
    if (r > 0)
      return r;
    if (r < 0 && errno == EINTR)
      continue;
    if (r == 0)
      errno = ENODATA;
    return -1;
  }
}

int uh_payload_pread(int fd, char *buf, size_t n)
{
  size_t got = 0;
  if (fd < 0) {
    errno = EBADF;
    return -1;
  }
  while (got < n) {
    ssize_t r = pread_some(fd, buf + got, n - got, (off_t)got);
    if (r < 0)
      return -1;
    got += (size_t)r;
  }
  return 0;
}

/* From *off to n through a buffer: for a file system without splice. */
static int copy_rest(int fd, loff_t *off, size_t n, int out)
{
  char buf[65536];
  while ((size_t)*off < n) {
    size_t want = n - (size_t)*off;
    ssize_t r = pread_some(fd, buf, want < sizeof buf ? want : sizeof buf,
                           *off);
    if (r < 0 || uh_write_all(out, buf, (size_t)r) != 0)
      return -1;
    *off += r;
  }
  return 0;
}

static int send_file(int fd, size_t n, int out)
{
  loff_t off = 0;
  if (fd < 0) {
    errno = EBADF;
    return -1;
  }
  while ((size_t)off < n) {
    ssize_t r = splice(fd, &off, out, NULL, n - (size_t)off, SPLICE_F_MOVE);
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0 && (errno == EINVAL || errno == ENOSYS))
      return copy_rest(fd, &off, n, out);
    if (r <= 0) {
      if (r == 0)
        errno = ENODATA;
      return -1;
    }
  }
  return 0;
}

int uh_payload_send(int *fd, size_t n, int out)
{
  int r = send_file(*fd, n, out), e = errno;
  if (*fd >= 0)
    close(*fd);
  *fd = -1;
  errno = e;
  return r;
}

/* Bytes bound for the hook process, in a userdata (see payload.h). */
#include "payload.h"
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <lauxlib.h>

typedef struct {
  size_t n;
  char bytes[];
} payload;

static int payload_len(lua_State *L)
{
  payload *p = luaL_checkudata(L, 1, UH_PAYLOAD_MT);
  lua_pushinteger(L, (lua_Integer)p->n);
  return 1;
}

static int payload_tostring(lua_State *L)
{
  payload *p = luaL_checkudata(L, 1, UH_PAYLOAD_MT);
  lua_pushlstring(L, p->bytes, p->n);
  return 1;
}

static const luaL_Reg payload_methods[] = {
  {"__len", payload_len},
  {"__tostring", payload_tostring},
  {NULL, NULL}
};

/* read(2) until n bytes or the end; the count read, or -1 */
static ssize_t read_full(int fd, char *buf, size_t n)
{
  size_t got = 0;
  while (got < n) {
    ssize_t r = read(fd, buf + got, n - got);
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0)
      return -1;
    if (r == 0)
      break;
    got += (size_t)r;
  }
  return (ssize_t)got;
}

int uh_payload_read(lua_State *L, int fd, size_t size)
{
  payload *p = lua_newuserdatauv(L, sizeof *p + size, 0);
  char more;
  ssize_t got = read_full(fd, p->bytes, size), past = 0;
  if (got == (ssize_t)size)
    past = read_full(fd, &more, 1);
  if (got < 0 || past < 0) {
    int e = errno;
    lua_pop(L, 1);
    errno = e;
    return -1;
  }
  if (got != (ssize_t)size || past != 0) {   /* it changed: start again */
    lua_pop(L, 1);
    return lseek(fd, 0, SEEK_SET) == 0 ? 0 : -1;
  }
  p->n = size;
  if (luaL_newmetatable(L, UH_PAYLOAD_MT))
    luaL_setfuncs(L, payload_methods, 0);
  lua_setmetatable(L, -2);
  return 1;
}

const char *uh_payload_bytes(lua_State *L, int idx, size_t *n)
{
  payload *p = luaL_testudata(L, idx, UH_PAYLOAD_MT);
  if (!p)
    return NULL;
  *n = p->n;
  return p->bytes;
}

/* uh_sha256_* and the uphook.c.hash binding. */
#include "hash.h"
#include "unit.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include <lualib.h>
#include <lauxlib.h>

static const char *EMPTY =
  "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
static const char *ABC =
  "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

static void t_oneshot(void)
{
  char hex[65];
  CHECK(uh_sha256_hex("", 0, hex) == 0);
  CHECK_STR(hex, EMPTY);
  CHECK(uh_sha256_hex("abc", 3, hex) == 0);
  CHECK_STR(hex, ABC);
}

static void t_incremental(void)
{
  uh_sha256_ctx c;
  char hex[65], one[65];
  static char big[300000];
  size_t i;
  for (i = 0; i < sizeof big; i++)
    big[i] = (char)(i * 7);
  CHECK(uh_sha256_hex(big, sizeof big, one) == 0);
  CHECK(uh_sha256_init(&c) == 0);
  for (i = 0; i < sizeof big; i += 4099)
    CHECK(uh_sha256_update(&c, big + i,
                           sizeof big - i < 4099 ? sizeof big - i : 4099) == 0);
  CHECK(uh_sha256_final(&c, hex) == 0);
  CHECK_STR(hex, one);
  CHECK(c.md == NULL);
  CHECK(uh_sha256_init(&c) == 0);   /* abandoned context frees cleanly */
  uh_sha256_free(&c);
}

static void t_fd(void)
{
  char path[] = "/tmp/uh_test_hashXXXXXX", hex[65], one[65];
  static char big[3 << 20];   /* spans several 1 MiB reads */
  size_t i;
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  for (i = 0; i < sizeof big; i++)
    big[i] = (char)(i ^ (i >> 9));
  CHECK(write(fd, big, sizeof big) == (ssize_t)sizeof big);
  CHECK(lseek(fd, 0, SEEK_SET) == 0);
  CHECK(uh_sha256_fd(fd, hex) == 0);
  CHECK(uh_sha256_hex(big, sizeof big, one) == 0);
  CHECK_STR(hex, one);
  CHECK(uh_sha256_fd(fd, hex) == 0);   /* at EOF now: empty input */
  CHECK_STR(hex, EMPTY);
  close(fd);
  CHECK(uh_sha256_fd(fd, hex) == -1);  /* closed fd: error, no crash */
  unlink(path);
}

static int lua_ok(lua_State *L, const char *code)
{
  if (luaL_dostring(L, code) != LUA_OK) {
    fprintf(stderr, "  lua: %s\n", lua_tostring(L, -1));
    lua_pop(L, 1);
    return 0;
  }
  return 1;
}

static void t_lua(void)
{
  lua_State *L = luaL_newstate();
  luaL_openlibs(L);
  luaL_requiref(L, "uphook.c.hash", luaopen_uphook_hash, 0);
  lua_pop(L, 1);
  CHECK(lua_ok(L,
    "local h = require 'uphook.c.hash'\n"
    "assert(h.sha256('abc') == 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad')\n"
    "assert(h.sha256('a\\0b') == h.sha256('a\\0b') and h.sha256('a\\0b') ~= h.sha256('a'))\n"
    "local p = os.tmpname(); local f = io.open(p, 'wb'); f:write('abc'); f:close()\n"
    "assert(h.file(p) == h.sha256('abc')); os.remove(p)\n"
    "local v, msg = h.file('/nonexistent/x')\n"
    "assert(v == nil and msg:find('/nonexistent/x', 1, true), msg)\n"
    "v, msg = h.file('/tmp')\n"
    "assert(v == nil and msg:find('/tmp'), msg)\n"
    "assert(not pcall(h.file, 'relative'))\n"
    "assert(not pcall(h.sha256, {}))\n"));
  lua_close(L);
}

int main(void)
{
  RUN(t_oneshot);
  RUN(t_incremental);
  RUN(t_fd);
  RUN(t_lua);
  return UNIT_END();
}

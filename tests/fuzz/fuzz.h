/* Shared helpers of the libFuzzer targets (tests/fuzz/fuzz_*.c).
 *
 * Every target keeps one Lua state for the whole run and does its work
 * inside lua_pcall, so that a Lua error (out of memory, a limit) is an
 * ordinary outcome and not a crash.  A property violation calls
 * fuzz_fail(), which aborts: libFuzzer reports it as a crash and saves
 * the input. */
#ifndef UH_FUZZ_H
#define UH_FUZZ_H
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <lua.h>
#include <lauxlib.h>
#include <lualib.h>
#include "embedded.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define fuzz_fail(...) do { fprintf(stderr, "fuzz property violated: " \
  __VA_ARGS__); fputc('\n', stderr); abort(); } while (0)

static lua_State *fuzz_L;

/* The target's Lua state, created once with the standard libraries. */
static inline lua_State *fuzz_state(void)
{
  if (!fuzz_L) {
    fuzz_L = luaL_newstate();
    if (!fuzz_L)
      abort();
    luaL_openlibs(fuzz_L);
  }
  lua_settop(fuzz_L, 0);
  return fuzz_L;
}

/* End of one input: free its garbage now, so that the input's mallocs
 * and frees balance and libFuzzer's per-input leak check stays cheap
 * (it scans the whole heap whenever they do not). */
static inline void fuzz_done(lua_State *L)
{
  lua_settop(L, 0);
  lua_gc(L, LUA_GCCOLLECT);
}

/* Run fn(data lightuserdata, size) protected; 1 when it returned. */
static inline int fuzz_pcall(lua_State *L, lua_CFunction fn, const uint8_t *data,
                      size_t size)
{
  int ok;
  lua_pushcfunction(L, fn);
  lua_pushlightuserdata(L, (void *)data);
  lua_pushinteger(L, (lua_Integer)size);
  ok = lua_pcall(L, 2, 0, 0) == LUA_OK;
  fuzz_done(L);
  return ok;
}

/* Deep equality of the values at a and b (absolute indices): the same
 * types, integers and floats kept apart, NaN equal to NaN, tables with
 * the same keys, equal values and the same metatable (the array mark). */
static inline int fuzz_deep_equal(lua_State *L, int a, int b, int depth)
{
  int ta = lua_type(L, a), eq = 1, na = 0, nb = 0;
  if (ta != lua_type(L, b) || depth > 200)
    return 0;
  if (ta == LUA_TNUMBER) {
    if (lua_isinteger(L, a) != lua_isinteger(L, b))
      return 0;
    if (lua_isinteger(L, a))
      return lua_tointeger(L, a) == lua_tointeger(L, b);
    return lua_tonumber(L, a) == lua_tonumber(L, b)
           || (lua_tonumber(L, a) != lua_tonumber(L, a)
               && lua_tonumber(L, b) != lua_tonumber(L, b));
  }
  if (ta != LUA_TTABLE)
    return lua_rawequal(L, a, b);
  luaL_checkstack(L, 6, "deep equal");
  {
    int ma = lua_getmetatable(L, a), mb = lua_getmetatable(L, b);
    if (ma != mb)
      eq = 0;
    else if (ma)
      eq = lua_rawequal(L, -1, -2);
    lua_pop(L, ma + mb);
  }
  lua_pushnil(L);
  while (eq && lua_next(L, a)) {
    na++;
    lua_pushvalue(L, -2);
    lua_rawget(L, b);
    eq = fuzz_deep_equal(L, lua_gettop(L) - 1, lua_gettop(L), depth + 1);
    lua_pop(L, 2);
  }
  if (!eq)
    return 0;
  lua_pushnil(L);
  while (lua_next(L, b)) {
    nb++;
    lua_pop(L, 1);
  }
  return na == nb;
}

/* Coverage of Lua code.  libFuzzer only sees the C it instruments, not
 * the Lua that liblua interprets: a line hook feeds (previous line, line)
 * pairs into libFuzzer's extra counters, so that lua/core/semver.lua and
 * lua/engine/prims.lua give it a signal too.  The count part of the hook bounds
 * one input's work: past FUZZ_LUA_BUDGET instructions it raises, and
 * fuzz_lua_budget_hit says so. */
#define FUZZ_LUA_COV 65536
#define FUZZ_LUA_BUDGET 50000000L
__attribute__((used, section("__libfuzzer_extra_counters")))
static uint8_t fuzz_lua_cov[FUZZ_LUA_COV];
static int fuzz_prev_line;
static long fuzz_lua_steps;
static int fuzz_lua_budget_hit;

static inline void fuzz_lua_hook(lua_State *L, lua_Debug *ar)
{
  if (ar->event == LUA_HOOKCOUNT) {
    fuzz_lua_steps += 1000;
    if (fuzz_lua_steps > FUZZ_LUA_BUDGET) {
      fuzz_lua_budget_hit = 1;
      luaL_error(L, "fuzz instruction budget");
    }
    return;
  }
  {
    unsigned h = (unsigned)fuzz_prev_line * 2654435761u
                 ^ (unsigned)ar->currentline;
    uint8_t *c = &fuzz_lua_cov[(h ^ (h >> 16)) % FUZZ_LUA_COV];
    if (*c < 255)
      ++*c;
    fuzz_prev_line = ar->currentline;
  }
}

/* Start one input's Lua coverage and budget. */
static inline void fuzz_lua_begin(lua_State *L)
{
  fuzz_prev_line = 0;
  fuzz_lua_steps = 0;
  fuzz_lua_budget_hit = 0;
  lua_sethook(L, fuzz_lua_hook, LUA_MASKLINE | LUA_MASKCOUNT, 1000);
}

static inline void fuzz_lua_end(lua_State *L)
{
  lua_sethook(L, NULL, 0, 0);
}

/* Load an embedded Lua module (build/embedded.c) and leave its value. */
static inline void fuzz_require_embedded(lua_State *L, const char *name)
{
  const struct uh_embedded *e = uh_embedded_find(name);
  if (!e || uh_embedded_load(L, e) != LUA_OK
      || lua_pcall(L, 0, 1, 0) != LUA_OK)
    fuzz_fail("cannot load embedded module %s", name);
}

/* Write buf to path (created or truncated). */
static inline void fuzz_write_file(const char *path, const void *buf, size_t n)
{
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  const char *p = buf;
  if (fd < 0)
    fuzz_fail("cannot write %s", path);
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w <= 0)
      fuzz_fail("cannot write %s", path);
    p += w;
    n -= (size_t)w;
  }
  close(fd);
}

/* A private temporary directory for this process, made once. */
static inline const char *fuzz_tmpdir(void)
{
  static char dir[80];
  if (!dir[0]) {
    const char *t = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%.40s/uphook-fuzz-XXXXXX", t && *t ? t : "/tmp");
    if (!mkdtemp(dir))
      fuzz_fail("mkdtemp");
  }
  return dir;
}

#endif

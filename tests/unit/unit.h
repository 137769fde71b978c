/* Minimal C unit-test macros.  Each test binary ends by printing
 * "N passed, N failed" and exits 1 when anything failed. */
#ifndef UH_UNIT_H
#define UH_UNIT_H
#include <stdio.h>
#include <string.h>
#include <lua.h>
#include <lauxlib.h>

static int unit_passed, unit_failed, unit_cur_failed;

#define CHECK(cond) do { if (!(cond)) { unit_cur_failed = 1; \
  fprintf(stderr, "  %s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); \
  } } while (0)
#define CHECK_STR(a, b) do { const char *a_ = (a), *b_ = (b); \
  if (!a_ || !b_ || strcmp(a_, b_)) { unit_cur_failed = 1; \
  fprintf(stderr, "  %s:%d: \"%s\" != \"%s\"\n", __FILE__, __LINE__, \
          a_ ? a_ : "(null)", b_ ? b_ : "(null)"); } } while (0)

#define RUN(fn) do { unit_cur_failed = 0; fn(); \
  if (unit_cur_failed) { unit_failed++; printf("FAIL %s\n", #fn); } \
  else { unit_passed++; printf("ok   %s\n", #fn); } } while (0)

#define UNIT_END() (printf("%d passed, %d failed\n", unit_passed, \
  unit_failed), unit_failed ? 1 : 0)

/* Run a Lua chunk; print its error and return 0 when it raises. */
static inline int unit_lua(lua_State *L, const char *chunk, const char *name)
{
  if (luaL_loadbuffer(L, chunk, strlen(chunk), name)
      || lua_pcall(L, 0, 0, 0)) {
    fprintf(stderr, "  %s: %s\n", name, lua_tostring(L, -1));
    lua_pop(L, 1);
    return 0;
  }
  return 1;
}
#define LUA_RUN(L, code) unit_lua((L), (code), __func__)
/* Run a chunk; fail the current test when it raises. */
#define LUA_CHECK(L, chunk) do { if (!unit_lua((L), (chunk), __func__)) \
  unit_cur_failed = 1; } while (0)

/* Run a chunk whose result must be true: 1, or 0 after printing its error
 * or the chunk that returned false. */
static inline int unit_lua_true(lua_State *L, const char *chunk)
{
  int ok;
  if (luaL_loadstring(L, chunk) != LUA_OK || lua_pcall(L, 0, 1, 0)) {
    fprintf(stderr, "  %s\n", lua_tostring(L, -1));
    lua_pop(L, 1);
    return 0;
  }
  ok = lua_toboolean(L, -1);
  if (!ok)
    fprintf(stderr, "  chunk returned false: %.300s\n", chunk);
  lua_pop(L, 1);
  return ok;
}

/* A Lua helper for test chunks: err(fn, text) asserts that fn raises an
 * error containing text and returns the message. */
#define UNIT_LUA_ERR \
  "function err(fn, pat)\n" \
  "  local ok, msg = pcall(fn)\n" \
  "  assert(not ok, 'expected an error matching ' .. pat)\n" \
  "  assert(tostring(msg):find(pat, 1, true), 'error \"' .. tostring(msg)" \
  "    .. '\" does not contain \"' .. pat .. '\"')\n" \
  "  return msg\n" \
  "end\n"

#endif

/* Args files: parse(text), then edit(text, changes) and parse the result.
 * Input: the text, a NUL byte, then one change a line: "--flag" (set it
 * bare), "!--flag" (remove it), "--flag value" (set it to value).  After
 * a successful edit, parse(new) must show every change: a removed flag
 * absent, a bare one true, a value unquoted back to itself. */
#include "fuzz.h"
#include "argsfile.h"

static int one(lua_State *L)
{
  const char *s = lua_touserdata(L, 1);
  size_t n = (size_t)lua_tointeger(L, 2);
  const char *z = memchr(s, '\0', n), *p, *end = s + n;
  size_t tn = z ? (size_t)(z - s) : n;
  lua_settop(L, 0);
  luaL_requiref(L, "uphook.c.argsfile", luaopen_uphook_argsfile, 0); /* 1 */
  lua_getfield(L, 1, "parse");
  lua_pushlstring(L, s, tn);
  lua_call(L, 1, 1);
  lua_pop(L, 1);
  if (!z)
    return 0;
  lua_newtable(L);                                                    /* 2 */
  for (p = z + 1; p < end;) {
    const char *nl = memchr(p, '\n', (size_t)(end - p)), *le = nl ? nl : end;
    const char *sp = memchr(p, ' ', (size_t)(le - p));
    if (le > p && *p == '!') {
      lua_pushlstring(L, p + 1, (size_t)(le - p - 1));
      lua_pushboolean(L, 0);
    } else if (sp) {
      lua_pushlstring(L, p, (size_t)(sp - p));
      lua_pushlstring(L, sp + 1, (size_t)(le - sp - 1));
    } else {
      lua_pushlstring(L, p, (size_t)(le - p));
      lua_pushboolean(L, 1);
    }
    lua_rawset(L, 2);
    p = nl ? nl + 1 : end;
  }
  lua_getfield(L, 1, "edit");
  lua_pushlstring(L, s, tn);
  lua_pushvalue(L, 2);
  if (lua_pcall(L, 2, 2, 0) != LUA_OK)
    return 0;                 /* an invalid change: refused, fine */
  lua_getfield(L, 1, "parse");                                        /* 5 */
  lua_pushvalue(L, 3);
  lua_call(L, 1, 1);                                                  /* 5 */
  lua_pushnil(L);
  while (lua_next(L, 2)) {
    int t;
    lua_pushvalue(L, -2);
    t = lua_rawget(L, 5);
    if (lua_type(L, -2) == LUA_TBOOLEAN && !lua_toboolean(L, -2)) {
      if (t != LUA_TNIL)
        fuzz_fail("removed flag %s still parses", lua_tostring(L, -3));
    } else if (!lua_rawequal(L, -1, -2)) {
      fuzz_fail("flag %s: set to '%s', parses as '%s'\n--- text\n%s",
                lua_tostring(L, -3), luaL_tolstring(L, -2, NULL),
                luaL_tolstring(L, -2, NULL), lua_tostring(L, 3));
    }
    lua_pop(L, 2);
  }
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  fuzz_pcall(fuzz_state(), one, data, size);
  return 0;
}

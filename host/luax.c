/* Shared Lua helpers: null sentinel, array marker, error names. */
#include "luax.h"
#include <stdint.h>

static const char *const uh_errnames[UH_ELAST] = {
  [UH_OK] = "no error",
  [UH_ENOMEM] = "out of memory",
  [UH_EIO] = "input/output error",
  [UH_ENOENT] = "not found",
  [UH_EESCAPE] = "path leaves its root",
  [UH_EINVAL] = "invalid argument",
  [UH_EPARSE] = "parse error",
  [UH_ELIMIT] = "limit exceeded",
  [UH_ECHECKSUM] = "checksum mismatch",
  [UH_EHTTP] = "HTTP error",
  [UH_ENET] = "network error",
  [UH_ETIMEOUT] = "timed out",
  [UH_EDENIED] = "permission denied",
  [UH_EPROTO] = "protocol error",
  [UH_ECRASH] = "hook process crashed",
  [UH_ELOCKED] = "locked",
};

const char *uh_strerror(uh_err e)
{
  if ((unsigned)e >= UH_ELAST || !uh_errnames[e])
    return "unknown error";
  return uh_errnames[e];
}

void uh_pushnull(lua_State *L)
{
  lua_pushlightuserdata(L, NULL);
}

int uh_isnull(lua_State *L, int idx)
{
  return lua_islightuserdata(L, idx) && lua_touserdata(L, idx) == NULL;
}

static void push_array_mt(lua_State *L)
{
  if (luaL_newmetatable(L, UH_ARRAY_MT)) {
    lua_pushliteral(L, "array");
    lua_setfield(L, -2, "__name");
  }
}

void uh_markarray(lua_State *L, int idx)
{
  idx = lua_absindex(L, idx);
  push_array_mt(L);
  lua_setmetatable(L, idx);
}

int uh_hasarraymt(lua_State *L, int idx)
{
  int r;
  if (!lua_getmetatable(L, idx))
    return 0;
  luaL_getmetatable(L, UH_ARRAY_MT);
  r = lua_rawequal(L, -1, -2);
  lua_pop(L, 2);
  return r;
}

int uh_isarray(lua_State *L, int idx, size_t *n)
{
  lua_Integer count = 0, max = 0;
  idx = lua_absindex(L, idx);
  if (uh_hasarraymt(L, idx)) {
    *n = lua_rawlen(L, idx);
    return 1;
  }
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    lua_pop(L, 1);
    if (!lua_isinteger(L, -1) || lua_tointeger(L, -1) < 1) {
      lua_pop(L, 1);
      return 0;
    }
    if (lua_tointeger(L, -1) > max)
      max = lua_tointeger(L, -1);
    count++;
  }
  *n = (size_t)count;
  return count > 0 && count == max;
}

static int l_array(lua_State *L)
{
  if (lua_isnoneornil(L, 1))
    lua_newtable(L);
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_settop(L, 1);
  uh_markarray(L, 1);
  return 1;
}

static int l_isarray(lua_State *L)
{
  size_t n;
  lua_pushboolean(L, lua_istable(L, 1) && uh_isarray(L, 1, &n));
  return 1;
}

void uh_setnullarray(lua_State *L)
{
  uh_pushnull(L);
  lua_setfield(L, -2, "null");
  lua_pushcfunction(L, l_array);
  lua_setfield(L, -2, "array");
  lua_pushcfunction(L, l_isarray);
  lua_setfield(L, -2, "isarray");
}

void uh_newclass(lua_State *L, const char *name, const luaL_Reg *methods)
{
  if (luaL_newmetatable(L, name)) {
    luaL_setfuncs(L, methods, 0);
    lua_pushvalue(L, -1);
    lua_setfield(L, -2, "__index");
  }
  lua_pop(L, 1);
}

void uh_pushcloser(lua_State *L, const char *name, lua_CFunction close)
{
  if (luaL_newmetatable(L, name)) {
    lua_pushcfunction(L, close);
    lua_setfield(L, -2, "__gc");
    lua_pushcfunction(L, close);
    lua_setfield(L, -2, "__close");
  }
}

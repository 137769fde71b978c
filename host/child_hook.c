/* What the hook declares, in the hook child (docs/contract.md §3): the
 * description of the hook table the broker validates (host/child.c sends
 * it as "loaded"), and the "__params" phase, which runs each parameter's
 * `pattern` and `check` here, under the child's limits, since both are
 * hook code. */
#include <string.h>
#include <lua.h>
#include <lauxlib.h>
#include <lualib.h>
#include "child.h"

/* params.<name>: the spec's data fields, with its functions (`check`)
 * left out, since they cannot cross the pipe; checks[<name>] = true
 * says that one has a check, which the "__params" phase runs here. */
static void describe_params(lua_State *L, int params, int data)
{
  int copy, checks;
  lua_newtable(L);
  copy = lua_gettop(L);
  lua_newtable(L);
  checks = copy + 1;
  lua_pushnil(L);
  while (lua_next(L, params)) {
    if (lua_type(L, -1) == LUA_TTABLE) {
      int spec = lua_gettop(L);
      lua_pushvalue(L, -2);
      lua_newtable(L);
      lua_pushnil(L);
      while (lua_next(L, spec)) {
        if (lua_isfunction(L, -1) && lua_type(L, -2) == LUA_TSTRING
            && strcmp(lua_tostring(L, -2), "check") == 0) {
          lua_pushvalue(L, spec - 1);
          lua_pushboolean(L, 1);
          lua_rawset(L, checks);
        } else if (!lua_isfunction(L, -1)) {
          lua_pushvalue(L, -2);
          lua_insert(L, -2);
          lua_rawset(L, -4);
          continue;
        }
        lua_pop(L, 1);
      }
      lua_rawset(L, copy);
    } else {
      lua_pushvalue(L, -2);
      lua_pushvalue(L, -2);
      lua_rawset(L, copy);
    }
    lua_pop(L, 1);
  }
  lua_setfield(L, data, "__param_checks");
  lua_setfield(L, data, "params");
}

/* Describe the hook table: field types, and the data fields' values.
 * [hook] -> [hook, {types = {k = typename}, data = {k = v}}] */
int uh_child_describe(lua_State *L)
{
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_newtable(L);                          /* [hook, types] */
  lua_newtable(L);                          /* [hook, types, data] */
  lua_pushnil(L);
  while (lua_next(L, 1)) {                  /* [hook, types, data, k, v] */
    if (lua_type(L, -2) == LUA_TSTRING) {
      lua_pushvalue(L, -2);
      lua_pushstring(L, luaL_typename(L, -2));  /* [.., k, v, k, tname] */
      lua_rawset(L, 2);                     /* types[k] = tname */
      if (lua_istable(L, -1) && strcmp(lua_tostring(L, -2), "params") == 0)
        describe_params(L, lua_gettop(L), 3);
      else if (!lua_isfunction(L, -1)) {
        lua_pushvalue(L, -2);
        lua_pushvalue(L, -2);               /* [.., k, v, k, v] */
        lua_rawset(L, 3);                   /* data[k] = v */
      }
    }
    lua_pop(L, 1);                          /* [hook, types, data, k] */
  }
  lua_createtable(L, 0, 2);                 /* [hook, types, data, desc] */
  lua_insert(L, 2);                         /* [hook, desc, types, data] */
  lua_setfield(L, 2, "data");               /* [hook, desc, types] */
  lua_setfield(L, 2, "types");              /* [hook, desc] */
  return 1;
}

/* A Lua pattern that must match the whole value: ^ and $ added unless
 * the pattern has them (a "$" escaped by an odd run of "%" is literal). */
static void push_anchored(lua_State *L, const char *p)
{
  size_t n = strlen(p), pct = 0;
  luaL_Buffer b;
  while (pct + 1 < n && p[n - 2 - pct] == '%')
    pct++;
  luaL_buffinit(L, &b);
  if (p[0] != '^')
    luaL_addchar(&b, '^');
  luaL_addstring(&b, p);
  if (!(n > 0 && p[n - 1] == '$' && pct % 2 == 0))
    luaL_addchar(&b, '$');
  luaL_pushresult(&b);
}

/* One value against its spec (at `spec`): the problem pushed, or
 * nothing.  `ctx` is passed to check(value, ctx). */
static int param_problem(lua_State *L, int spec, int value, int ctx)
{
  if (lua_getfield(L, spec, "pattern") == LUA_TSTRING) {
    const char *pat = lua_tostring(L, -1);
    luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
    lua_getfield(L, -1, "string");
    lua_getfield(L, -1, "match");
    lua_pushvalue(L, value);
    push_anchored(L, pat);
    if (lua_pcall(L, 2, 1, 0) != LUA_OK || lua_isnil(L, -1)) {
      lua_pushfstring(L, "does not match the pattern %s", pat);
      return 1;
    }
    lua_pop(L, 3);
  }
  lua_pop(L, 1);
  if (lua_getfield(L, spec, "check") != LUA_TFUNCTION) {
    lua_pop(L, 1);
    return 0;
  }
  lua_pushvalue(L, value);
  lua_pushvalue(L, ctx);
  if (lua_pcall(L, 2, 2, 0) != LUA_OK) {
    lua_pushstring(L, luaL_tolstring(L, -1, NULL));
    return 1;
  }
  if (lua_toboolean(L, -2) || !lua_isboolean(L, -2)) {
    lua_pop(L, 2);
    return 0;
  }
  lua_pushstring(L, lua_isstring(L, -1) ? lua_tostring(L, -1)
                                        : "is refused by the hook's check");
  return 1;
}

/* The "__params" phase: {values = {name = value}, ctx = ctx}.  Each
 * value against its param's `pattern` and `check`, both hook code, so
 * they run here, under the child's limits.  Returns {name = problem}. */
int uh_child_check_params(lua_State *L)
{
  int msg = 1, specs, values, ctx, out;
  luaL_checktype(L, msg, LUA_TTABLE);
  lua_getfield(L, LUA_REGISTRYINDEX, "uphook.hook");
  lua_getfield(L, -1, "params");
  specs = lua_gettop(L);
  lua_getfield(L, msg, "values");
  values = lua_gettop(L);
  lua_getfield(L, msg, "ctx");
  ctx = lua_gettop(L);
  lua_newtable(L);
  out = lua_gettop(L);
  if (!lua_istable(L, specs) || !lua_istable(L, values))
    return 1;
  lua_pushnil(L);
  while (lua_next(L, values)) {
    int top = lua_gettop(L);
    lua_pushvalue(L, -2);
    if (lua_gettable(L, specs) == LUA_TTABLE && lua_isstring(L, top)
        && param_problem(L, top + 1, top, ctx)) {
      lua_pushvalue(L, top - 1);
      lua_insert(L, -2);
      lua_rawset(L, out);
    }
    lua_settop(L, top - 1);
  }
  lua_settop(L, out);
  return 1;
}

/* uphook.c.tables: the deep copy of lua/tables.lua (its one home) done
 * in C, for the trusted parent state, where the mock cluster copies every
 * object it returns and stores.  The same result as the Lua copy: every
 * table copied with its metatable, `null` kept (or, with drop_null,
 * left out of maps), whether a null was met reported.  A table whose
 * metatable has __pairs or __metatable (pairs and getmetatable would
 * see something else), or nesting deeper than MAX_DEPTH, is not copied
 * here: copy answers false and lua/tables.lua copies it in Lua. */
#include <lauxlib.h>
#include <lua.h>
#include "tables.h"

#define MAX_DEPTH 200

typedef struct {
  lua_State *L;
  int null;        /* stack index of null, 0 when none */
  int drop;
  int saw_null;
} copy_ctx;

/* A metatable pairs() and getmetatable() see as it is? */
static int plain_mt(lua_State *L, int mt)
{
  int ok = lua_getfield(L, mt, "__pairs") == LUA_TNIL
           && lua_getfield(L, mt, "__metatable") == LUA_TNIL;
  lua_settop(L, mt);
  return ok;
}

static int is_null(copy_ctx *c, int idx)
{
  return c->null && lua_compare(c->L, idx, c->null, LUA_OPEQ);
}

/* Push a copy of the table at src; 0, or -1 when it must be copied in
 * Lua (the stack is then left as it was). */
static int copy_table(copy_ctx *c, int src, int depth)
{
  lua_State *L = c->L;
  int out, top = lua_gettop(L);
  if (depth > MAX_DEPTH || !lua_checkstack(L, 8))
    return -1;
  if (lua_getmetatable(L, src) && !plain_mt(L, lua_gettop(L))) {
    lua_settop(L, top);
    return -1;
  }
  lua_settop(L, top);
  lua_createtable(L, (int)lua_rawlen(L, src), 0);
  out = lua_gettop(L);
  lua_pushnil(L);
  while (lua_next(L, src)) {              /* [out, k, x] */
    if (is_null(c, -1)) {
      c->saw_null = 1;
      if (!c->drop || lua_type(L, -2) == LUA_TNUMBER) {
        lua_pushvalue(L, -2);
        lua_pushvalue(L, -2);
        lua_rawset(L, out);
      }
    } else if (lua_type(L, -1) == LUA_TTABLE) {
      lua_pushvalue(L, -2);               /* [out, k, x, k] */
      if (copy_table(c, lua_gettop(L) - 1, depth + 1)) {
        lua_settop(L, top);
        return -1;
      }
      lua_rawset(L, out);                 /* out[k] = copy of x */
    } else {
      lua_pushvalue(L, -2);
      lua_pushvalue(L, -2);
      lua_rawset(L, out);
    }
    lua_pop(L, 1);
  }
  if (lua_getmetatable(L, src))
    lua_setmetatable(L, out);
  return 0;
}

/* copy(t, null, drop_null) -> the copy, whether a null was met | false */
static int tables_copy(lua_State *L)
{
  copy_ctx c;
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_settop(L, 3);
  c.L = L;
  c.null = lua_isnil(L, 2) ? 0 : 2;
  c.drop = lua_toboolean(L, 3);
  c.saw_null = 0;
  if (copy_table(&c, 1, 0)) {
    lua_pushboolean(L, 0);
    return 1;
  }
  lua_pushboolean(L, c.saw_null);
  return 2;
}

static const luaL_Reg tables_funcs[] = {
  { "copy", tables_copy },
  { NULL, NULL }
};

int luaopen_uphook_tables(lua_State *L)
{
  luaL_newlib(L, tables_funcs);
  return 1;
}

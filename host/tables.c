/* uphook.c.tables: the deep copy and the deep equality of lua/core/tables.lua
 * (their one home) done in C, for the trusted parent state, where the
 * mock cluster copies every object it returns and stores and compares
 * what it merges.  The same results as the Lua functions: every table
 * copied with its metatable, `null` kept (or, with drop_null, left out
 * of maps), whether a null was met and whether the copy holds an empty
 * table reported; equality of plain data,
 * metatables ignored.  What Lua would see otherwise is left to Lua: copy
 * answers false for a table whose metatable has __pairs or __metatable,
 * equal nil for one with __eq, __index or __pairs, and both for nesting
 * deeper than MAX_DEPTH; lua/core/tables.lua then does it in Lua.  And the
 * weight of a value (tables.weight), as Lua counts it, and the
 * projection of what the server stored onto what was applied
 * (tables.project). */
#include <lauxlib.h>
#include <lua.h>
#include "tables.h"

#define MAX_DEPTH 200

typedef struct {
  lua_State *L;
  int null;        /* stack index of null, 0 when none */
  int drop;
  int saw_null;
  int saw_empty;   /* a table of the copy is empty (lua/mock: omitempty) */
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
  lua_pushnil(L);
  if (lua_next(L, out))                   /* not empty */
    lua_pop(L, 2);
  else
    c->saw_empty = 1;
  if (lua_getmetatable(L, src))
    lua_setmetatable(L, out);
  return 0;
}

/* copy(t, null, drop_null) -> the copy, whether a null was met, whether
 * the copy holds an empty table | false */
static int tables_copy(lua_State *L)
{
  copy_ctx c;
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_settop(L, 3);
  c.L = L;
  c.null = lua_isnil(L, 2) ? 0 : 2;
  c.drop = lua_toboolean(L, 3);
  c.saw_null = 0;
  c.saw_empty = 0;
  if (copy_table(&c, 1, 0)) {
    lua_pushboolean(L, 0);
    return 1;
  }
  lua_pushboolean(L, c.saw_null);
  lua_pushboolean(L, c.saw_empty);
  return 3;
}

/* Is the metatable of the value at idx one that == and indexing ignore
 * (no __eq, __index, __pairs)?  A value without one is. */
static int plain_for_equal(lua_State *L, int idx)
{
  int top = lua_gettop(L), ok;
  if (!lua_getmetatable(L, idx))
    return 1;
  ok = lua_getfield(L, top + 1, "__eq") == LUA_TNIL
       && lua_getfield(L, top + 1, "__index") == LUA_TNIL
       && lua_getfield(L, top + 1, "__pairs") == LUA_TNIL;
  lua_settop(L, top);
  return ok;
}

/* Do the values at a and b (absolute) have the same metatable (or none)? */
static int same_metatable(lua_State *L, int a, int b)
{
  int top = lua_gettop(L), ha = lua_getmetatable(L, a);
  int hb = lua_getmetatable(L, b);
  int r = ha == hb && (!ha || lua_rawequal(L, -1, -2));
  lua_settop(L, top);
  return r;
}

/* 1 equal, 0 not, -1 to be decided in Lua (a metatable with __eq,
 * __index or __pairs, or nesting deeper than MAX_DEPTH).  strict: also
 * the same number subtype and the same metatables (tables.same). */
static int equal_at(lua_State *L, int a, int b, int depth, int strict)
{
  int r = 1, top = lua_gettop(L);
  if (strict && lua_type(L, a) == LUA_TNUMBER && lua_type(L, b) == LUA_TNUMBER
      && lua_isinteger(L, a) != lua_isinteger(L, b))
    return 0;                               /* 1 == 1.0, raw too */
  if (lua_rawequal(L, a, b))
    return 1;
  if (lua_type(L, a) != LUA_TTABLE || lua_type(L, b) != LUA_TTABLE)
    return lua_compare(L, a, b, LUA_OPEQ);
  if (depth > MAX_DEPTH || !lua_checkstack(L, 6)
      || !plain_for_equal(L, a) || !plain_for_equal(L, b))
    return -1;
  if (strict && !same_metatable(L, a, b))
    return 0;
  lua_pushnil(L);
  while (r == 1 && lua_next(L, a)) {        /* [k, x] */
    lua_pushvalue(L, -2);
    lua_rawget(L, b);                       /* [k, x, b[k]] */
    r = equal_at(L, lua_gettop(L) - 1, lua_gettop(L), depth + 1, strict);
    lua_pop(L, 2);
  }
  if (r != 1) {
    lua_settop(L, top);
    return r;
  }
  lua_pushnil(L);
  while (lua_next(L, b)) {                  /* every key of b is in a */
    lua_pop(L, 1);
    lua_pushvalue(L, -1);
    if (lua_rawget(L, a) == LUA_TNIL) {
      lua_settop(L, top);
      return 0;
    }
    lua_pop(L, 1);
  }
  return 1;
}

/* equal(a, b[, strict]) -> lua/core/tables.lua's deep equality (strict: its
 * same) | nil (decide in Lua) */
static int tables_equal(lua_State *L)
{
  int r, strict = lua_toboolean(L, 3);
  lua_settop(L, 2);
  r = equal_at(L, 1, 2, 0, strict);
  if (r < 0)
    return 0;
  lua_pushboolean(L, r);
  return 1;
}

/* lua/core/tables.lua's lua_weight: bytes of v's strings, tables 16, anything
 * else 8, below depth 8 a table 8; stops once past left. */
static lua_Integer weight_at(lua_State *L, int v, lua_Integer left,
                             int depth)
{
  lua_Integer w = 16;
  size_t n;
  if (lua_type(L, v) == LUA_TSTRING) {
    lua_tolstring(L, v, &n);
    return (lua_Integer)n;
  }
  if (lua_type(L, v) != LUA_TTABLE || depth > 8)
    return 8;
  luaL_checkstack(L, 4, "tables.weight");
  lua_pushnil(L);
  while (lua_next(L, v)) {                  /* [k, x] */
    int top = lua_gettop(L);
    w += weight_at(L, top - 1, left, depth + 1)
         + weight_at(L, top, left, depth + 1);
    lua_pop(L, 1);
    if (w > left) {
      lua_pop(L, 1);
      return w;
    }
  }
  return w;
}

/* weight(v, left) -> integer */
static int tables_weight(lua_State *L)
{
  lua_Integer left = luaL_checkinteger(L, 2);
  lua_settop(L, 2);
  lua_pushinteger(L, weight_at(L, 1, left, 0));
  return 1;
}

/* A metatable the projection's raw reads see through (plain_for_equal,
 * and no __len or __metatable)?  A value without one is. */
static int plain_for_project(lua_State *L, int idx)
{
  int top = lua_gettop(L), ok;
  if (!plain_for_equal(L, idx))
    return 0;
  if (!lua_getmetatable(L, idx))
    return 1;
  ok = lua_getfield(L, top + 1, "__len") == LUA_TNIL
       && lua_getfield(L, top + 1, "__metatable") == LUA_TNIL;
  lua_settop(L, top);
  return ok;
}

static int project_at(lua_State *L, int s, int a, int depth);

/* The list branch: a list of the same length, each element projected. */
static int project_list(lua_State *L, int s, int a, int depth)
{
  int top = lua_gettop(L);
  lua_Integer i, n = (lua_Integer)lua_rawlen(L, a);
  if ((lua_Integer)lua_rawlen(L, s) != n) {
    lua_pushvalue(L, s);
    return 0;
  }
  lua_createtable(L, n > 0 && n < 1 << 20 ? (int)n : 0, 0);
  for (i = 1; i <= n; i++) {
    lua_rawgeti(L, s, i);
    lua_rawgeti(L, a, i);                    /* [out, s[i], a[i]] */
    if (project_at(L, top + 2, top + 3, depth + 1)) {
      lua_settop(L, top);
      return -1;
    }
    lua_rawseti(L, top + 1, i);
    lua_settop(L, top + 1);
  }
  if (lua_getmetatable(L, s))
    lua_setmetatable(L, top + 1);
  return 0;
}

/* Push lua/core/tables.lua's project(stored, applied) of the values at s and
 * a (absolute); 0, or -1 when it must be done in Lua (the stack is then
 * left as it was). */
static int project_at(lua_State *L, int s, int a, int depth)
{
  int top = lua_gettop(L), list;
  if (lua_type(L, a) != LUA_TTABLE || lua_type(L, s) != LUA_TTABLE) {
    lua_pushvalue(L, s);
    return 0;
  }
  if (depth > MAX_DEPTH || !lua_checkstack(L, 8)
      || !plain_for_project(L, a) || !plain_for_project(L, s))
    return -1;
  list = lua_rawgeti(L, a, 1) != LUA_TNIL || lua_getmetatable(L, a);
  lua_settop(L, top);
  if (list)
    return project_list(L, s, a, depth);
  lua_newtable(L);
  lua_pushnil(L);
  while (lua_next(L, a)) {                   /* [out, k, v] */
    lua_pushvalue(L, -2);
    if (lua_rawget(L, s) != LUA_TNIL) {      /* [out, k, v, s[k]] */
      if (project_at(L, top + 4, top + 3, depth + 1)) {
        lua_settop(L, top);
        return -1;
      }
      lua_pushvalue(L, top + 2);
      lua_insert(L, -2);
      lua_rawset(L, top + 1);                /* out[k] = projection */
    }
    lua_settop(L, top + 2);
  }
  return 0;
}

/* project(stored, applied) -> lua/core/tables.lua's project | nothing (do it
 * in Lua) */
static int tables_project(lua_State *L)
{
  lua_settop(L, 2);
  return project_at(L, 1, 2, 0) ? 0 : 1;
}

static const luaL_Reg tables_funcs[] = {
  { "copy", tables_copy },
  { "equal", tables_equal },
  { "project", tables_project },
  { "weight", tables_weight },
  { NULL, NULL }
};

int luaopen_uphook_tables(lua_State *L)
{
  luaL_newlib(L, tables_funcs);
  return 1;
}

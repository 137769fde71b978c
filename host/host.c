/* The trusted parent Lua state: the engine, its C families and the
 * embedded Lua modules. */
#include <string.h>
#include <lua.h>
#include <lauxlib.h>
#include <lualib.h>
#include "embedded.h"
#include "host.h"
#include "osutil.h"

/* The public names of engine modules: a test file's `require
 * "uphook.test"` (docs/contract.md §6) is lua/cmd/test.lua in the broker
 * (UPHOOK_TEST_UNCONFINED=1), as host/testchild.c makes it
 * lua/cmd/testchild.lua in the test child. */
static const char *const public_names[][2] = {
  { "uphook.test", "uphook.cmd.test" },
};

/* loader of a public name: require(the module it names), so both names
 * share one module table */
static int alias_loader(lua_State *L)
{
  lua_getglobal(L, "require");
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_call(L, 1, 1);
  return 1;
}

/* package.searchers entry for modules compiled into the binary */
static int embedded_searcher(lua_State *L)
{
  const char *name = luaL_checkstring(L, 1);
  const struct uh_embedded *e = uh_embedded_find(name);
  size_t i;
  for (i = 0; i < sizeof public_names / sizeof public_names[0]; i++)
    if (strcmp(name, public_names[i][0]) == 0) {
      lua_pushstring(L, public_names[i][1]);
      lua_pushcclosure(L, alias_loader, 1);
      lua_pushstring(L, public_names[i][1]);
      return 2;
    }
  if (!e) {
    lua_pushfstring(L, "no embedded module '%s'", name);
    return 1;
  }
  if (uh_embedded_load(L, e) != LUA_OK)
    return lua_error(L);
  lua_pushstring(L, e->chunk + 1);
  return 2;
}

static void preload(lua_State *L, const struct uh_family *f)
{
  lua_getglobal(L, "package");
  lua_getfield(L, -1, "preload");
  for (; f->name; f++) {
    lua_pushcfunction(L, f->open);
    lua_setfield(L, -2, f->name);
  }
  lua_pop(L, 2);
}

/* The broker's allocator: a big block (an addon.read of 11 MB) in a
 * mapping of its own (host/osutil.h). */
static void *broker_alloc(void *ud, void *p, size_t osize, size_t nsize)
{
  (void)ud;
  return uh_big_realloc(p, p ? osize : 0, nsize);
}

lua_State *uh_host_newstate(const struct uh_family *families)
{
  lua_State *L = luaL_newstate();
  if (!L)
    return NULL;
  lua_setallocf(L, broker_alloc, NULL);
  luaL_openlibs(L);
  preload(L, families);
  /* embedded modules come before the file system: an installed uphook
   * needs no Lua files beside it, and stray files cannot shadow them */
  lua_getglobal(L, "package");
  lua_getfield(L, -1, "searchers");
  lua_pushcfunction(L, embedded_searcher);
  lua_rawseti(L, -2, 2);
  lua_pop(L, 2);
  return L;
}

static int traceback(lua_State *L)
{
  const char *msg = lua_tostring(L, 1);
  if (!msg)
    msg = lua_pushfstring(L, "(error object is a %s value)",
                          luaL_typename(L, 1));
  luaL_traceback(L, L, msg, 1);
  return 1;
}

int uh_host_call(lua_State *L, int nargs, int nres)
{
  int base = lua_gettop(L) - nargs;
  int status;
  lua_pushcfunction(L, traceback);
  lua_insert(L, base);
  status = lua_pcall(L, nargs, nres, base);
  lua_remove(L, base);
  return status;
}

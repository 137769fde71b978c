/* The confined test child (docs/security.md, "Test files"): `uphook test`
 * runs a *_test.lua file in the hook child's sandbox, with the same allow
 * list and seccomp filter as a hook.  What differs from a hook child is
 * here: the modules a test may require (uphook.test as lua/cmd/testchild.lua
 * builds it, over uphook.cmd.testlib, uphook.core.tables and
 * uphook.core.textdiff), the two requests it
 * makes of the broker instead of the hook primitives, and how the file is
 * loaded (its cases registered, a runner kept for the "case" phase). */
#include <string.h>
#include <lua.h>
#include <lauxlib.h>
#include "testchild.h"
#include "embedded.h"

/* The engine modules a test file may require, as they are embedded: pure
 * Lua over plain data. */
static const char *const test_shared[] = { "uphook.cmd.testlib",
                                            "uphook.core.tables",
                                            "uphook.core.textdiff", NULL };

const struct uh_embedded *uh_testchild_module(const char *name)
{
  const char *const *p;
  if (strcmp(name, "uphook.test") == 0)
    return uh_embedded_find("uphook.cmd.testchild");
  for (p = test_shared; *p; p++)
    if (strcmp(name, *p) == 0)
      return uh_embedded_find(name);
  return NULL;
}

/* Before uphook.test's chunk is called: [.., chunk, name] ->
 * [.., chunk, name, testlib, env_request, call_request]; returns the
 * number of arguments pushed after the name (0 for other modules). */
int uh_testchild_args(lua_State *L, const char *name)
{
  if (strcmp(name, "uphook.test") != 0)
    return 0;
  lua_getglobal(L, "require");
  lua_pushliteral(L, "uphook.cmd.testlib");
  lua_call(L, 1, 1);
  lua_getfield(L, LUA_REGISTRYINDEX, "uphook.test.env");
  lua_getfield(L, LUA_REGISTRYINDEX, "uphook.test.call");
  return 3;
}

/* The two requests, kept out of the test file's reach (only uphook.test
 * gets them). `stub` is the child's request function, whose upvalue is
 * the request's name. */
void uh_testchild_requests(lua_State *L, lua_CFunction stub)
{
  lua_pushliteral(L, "__test.env");
  lua_pushcclosure(L, stub, 1);
  lua_setfield(L, LUA_REGISTRYINDEX, "uphook.test.env");
  lua_pushliteral(L, "__test.call");
  lua_pushcclosure(L, stub, 1);
  lua_setfield(L, LUA_REGISTRYINDEX, "uphook.test.call");
}

/* [chunk] -> [descriptor]: run the test file through uphook.test's
 * __load, which registers its cases; the runner it returns is what the
 * "case" phase calls (registry uphook.hook, as a hook's table is). */
int uh_testchild_load(lua_State *L)
{
  lua_getglobal(L, "require");
  lua_pushliteral(L, "uphook.test");
  lua_call(L, 1, 1);                        /* [chunk, t] */
  lua_getfield(L, -1, "__load");            /* [chunk, t, __load] */
  lua_pushvalue(L, 1);
  lua_call(L, 1, 2);                        /* [chunk, t, desc, runner] */
  lua_setfield(L, LUA_REGISTRYINDEX, "uphook.hook");
  return 1;                                 /* [.., desc] */
}

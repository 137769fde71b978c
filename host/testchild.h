/* The confined test child's differences from a hook child (see
 * testchild.c). */
#ifndef UH_TESTCHILD_H
#define UH_TESTCHILD_H
#include <lua.h>
#include "embedded.h"

/* The embedded source of a module only a test file may require, or NULL. */
const struct uh_embedded *uh_testchild_module(const char *name);
/* Extra arguments for a module's chunk; returns how many it pushed. */
int uh_testchild_args(lua_State *L, const char *name);
/* Register the test requests (closures of `stub`). */
void uh_testchild_requests(lua_State *L, lua_CFunction stub);
/* [chunk] -> [descriptor]: load a test file. */
int uh_testchild_load(lua_State *L);

#endif

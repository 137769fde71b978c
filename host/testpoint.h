/* uphook.c.testpoint: the test points of the production binary
 * (testpoint.c). */
#ifndef UH_TESTPOINT_H
#define UH_TESTPOINT_H
#include <lua.h>

int luaopen_uphook_testpoint(lua_State *L);

#endif

/* uphook.c.sys: process and file services for the engine (sys.c) and
 * the node lock (lock.c). */
#ifndef UH_SYS_H
#define UH_SYS_H
#include <lua.h>

int sys_lock(lua_State *L);
int luaopen_uphook_sys(lua_State *L);

#endif

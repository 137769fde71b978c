/* uphook.c.sys: process and file services for the engine (sys.c) and
 * the node lock (lock.c) and the legacy upgrade script run under it
 * (script.c). */
#ifndef UH_SYS_H
#define UH_SYS_H
#include <lua.h>

int sys_lock(lua_State *L);
int sys_lock_holder(lua_State *L);
/* the descriptor of the sys.lock() handle at idx (raises if it is not one,
 * -1 once released) */
int sys_lock_fd(lua_State *L, int idx);
int sys_exec(lua_State *L);
/* Remove path and, if it is a folder, what is beneath it, following no
 * link (sys.rmtree without its name check): 0, or -1 with errno. */
int uh_rmtree(const char *path);
int luaopen_uphook_sys(lua_State *L);

#endif

/* uphook.c.tables: lua/core/tables.lua's deep copy in C (see tables.c). */
#ifndef UH_TABLES_H
#define UH_TABLES_H
#include <lua.h>

int luaopen_uphook_tables(lua_State *L);

#endif

/* Look up and load an embedded Lua module. */
#include <string.h>
#include <lauxlib.h>
#include "embedded.h"

const struct uh_embedded *uh_embedded_find(const char *name)
{
  const struct uh_embedded *e;
  for (e = uh_embedded; e->name; e++)
    if (strcmp(e->name, name) == 0)
      return e;
  return NULL;
}

int uh_embedded_load(lua_State *L, const struct uh_embedded *e)
{
  return luaL_loadbufferx(L, e->src, e->len, e->chunk, "b");
}

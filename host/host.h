/* The trusted parent Lua state (see host.c). */
#ifndef UH_HOST_H
#define UH_HOST_H
#include <lua.h>

struct uh_family {
  const char *name;       /* "uphook.c.yaml" */
  lua_CFunction open;
};

/* A new state with the standard libraries, the given C families in
 * package.preload and the embedded modules searchable. */
lua_State *uh_host_newstate(const struct uh_family *families);
/* lua_pcall with a traceback handler. */
int uh_host_call(lua_State *L, int nargs, int nres);

#endif

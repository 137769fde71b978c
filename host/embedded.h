/* The Lua modules of lua/ and stdlib/, compiled to bytecode into the
 * binary by the build tool host/embed.c.  The table ends with an entry
 * whose name is NULL. */
#ifndef UH_EMBEDDED_H
#define UH_EMBEDDED_H
#include <stddef.h>
#include <lua.h>

struct uh_embedded {
  const char *name;    /* module name, e.g. "uphook.engine.phases", "semver" */
  const char *chunk;   /* chunk name for tracebacks, "@lua/engine/phases.lua" */
  const char *src;     /* its bytecode (debug information kept) */
  size_t len;
};

extern const struct uh_embedded uh_embedded[];

const struct uh_embedded *uh_embedded_find(const char *name);

/* Push the module's chunk (binary: only what the build compiled loads
 * this way; a hook's and an addon's files load as text), or push the
 * error message; a lua_load status. */
int uh_embedded_load(lua_State *L, const struct uh_embedded *e);

#endif

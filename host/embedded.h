/* The Lua sources of lua/ and stdlib/, compiled into the binary by
 * host/embed.sh.  The table ends with an entry whose name is NULL. */
#ifndef UH_EMBEDDED_H
#define UH_EMBEDDED_H
#include <stddef.h>

struct uh_embedded {
  const char *name;    /* module name, e.g. "uphook.engine", "semver" */
  const char *chunk;   /* chunk name for tracebacks, "@lua/engine.lua" */
  const char *src;
  size_t len;
};

extern const struct uh_embedded uh_embedded[];

const struct uh_embedded *uh_embedded_find(const char *name);

#endif

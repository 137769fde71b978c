/* Look up an embedded Lua module by name. */
#include <string.h>
#include "embedded.h"

const struct uh_embedded *uh_embedded_find(const char *name)
{
  const struct uh_embedded *e;
  for (e = uh_embedded; e->name; e++)
    if (strcmp(e->name, name) == 0)
      return e;
  return NULL;
}

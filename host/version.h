/* uphook's version (`uphook --version`, docs/uphook.1's header, and the
 * Lua engine's `c.cli.version`, against which a hook's `uphook` range is
 * checked: lua/engine/apiversion.lua, docs/reference.md "API versions"). */
#ifndef UH_VERSION_H
#define UH_VERSION_H

#define UPHOOK_VERSION "0.2.0"

#endif

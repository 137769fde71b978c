/* uphook.c.helm: Helm's formats and the render child (host/helm.c,
 * host/helm_chart.c, host/helm_render.c; docs/internals.md). */
#ifndef UH_HELM_H
#define UH_HELM_H
#include <lua.h>

/* helm.chart(path): the files of a packaged chart (helm_chart.c) */
int helm_chart(lua_State *L);

/* helm.render(t): Helm as a confined child (helm_render.c) */
int helm_render(lua_State *L);

int luaopen_uphook_helm(lua_State *L);

#endif

/* The broker side of the sandbox (see supervise.c). */
#ifndef UH_SUPERVISE_H
#define UH_SUPERVISE_H
#include <signal.h>
#include <lua.h>

/* Set by the SIGINT/SIGTERM handler; the broker polls it. */
extern volatile sig_atomic_t uh_interrupted;
/* Set while a rollback runs: a second ^C is then refused. */
extern volatile sig_atomic_t uh_rolling_back;

int luaopen_uphook_sandbox(lua_State *L);

#endif

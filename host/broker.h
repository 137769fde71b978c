/* The broker: forks the hook child and serves it (see broker.c). */
#ifndef UH_BROKER_H
#define UH_BROKER_H
#include <signal.h>
#include <lua.h>

/* Set by the SIGINT/SIGTERM handler; the broker polls it. */
extern volatile sig_atomic_t uh_interrupted;
/* Set while a rollback runs (or recover replays a journal). */
extern volatile sig_atomic_t uh_rolling_back;
/* Set by a signal during the rollback: its waits end, it stops, the
 * journal is kept (docs/state.md "Signals"). */
extern volatile sig_atomic_t uh_abandoned;

int luaopen_uphook_broker(lua_State *L);

#endif

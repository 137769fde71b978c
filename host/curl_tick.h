/* A transfer that answers in time: an easy handle run to its end on a
 * multi handle, with a callback between every wait of at most
 * UH_TICK_MS (docs/state.md "Signals": every wait checks for an
 * interrupt at least every 200 ms). */
#ifndef UH_CURL_TICK_H
#define UH_CURL_TICK_H
#include <curl/curl.h>
#include <lua.h>

#define UH_TICK_MS 200

/* Run h on m (which holds no other transfer) to its end, calling
 * tick(ud) after each wait of at most UH_TICK_MS; a nonzero return ends
 * the transfer with CURLE_ABORTED_BY_CALLBACK.  h is removed from m
 * again. */
CURLcode uh_curl_perform_ticking(CURLM *m, CURL *h, int (*tick)(void *),
                                 void *ud);

/* A Lua function as such a tick: called with no arguments; what it
 * raises ends the transfer and is left on the stack top (raised = 1). */
typedef struct uh_lua_tick {
  lua_State *L;
  int fn;                       /* its stack index, 0: none */
  int raised;
} uh_lua_tick;

int uh_lua_tick_call(void *ud);

#endif

/* Transfers with a tick (host/curl_tick.h): the waits of the kube client
 * (a watch, a polled /readyz) call back into the engine at least every
 * UH_TICK_MS, so that a signal, the Lease's renewal and the wait's
 * heartbeat never wait for the server. */
#include "curl_tick.h"
#include <lauxlib.h>

CURLcode uh_curl_perform_ticking(CURLM *m, CURL *h, int (*tick)(void *),
                                 void *ud)
{
  CURLcode rc = CURLE_OK;
  CURLMsg *msg;
  int running = 1, left;
  if (curl_multi_add_handle(m, h) != CURLM_OK)
    return CURLE_FAILED_INIT;
  for (;;) {
    if (curl_multi_perform(m, &running) != CURLM_OK) {
      rc = CURLE_FAILED_INIT;
      break;
    }
    if (!running)
      break;
    /* a signal ends the poll early (no SA_RESTART: host/main.c) */
    curl_multi_poll(m, NULL, 0, UH_TICK_MS, NULL);
    if (tick(ud)) {
      rc = CURLE_ABORTED_BY_CALLBACK;
      break;
    }
  }
  while (!running && (msg = curl_multi_info_read(m, &left)) != NULL)
    if (msg->msg == CURLMSG_DONE && msg->easy_handle == h)
      rc = msg->data.result;
  curl_multi_remove_handle(m, h);
  return rc;
}

int uh_lua_tick_call(void *ud)
{
  uh_lua_tick *t = ud;
  if (!t->fn)
    return 0;
  lua_pushvalue(t->L, t->fn);
  if (lua_pcall(t->L, 0, 0, 0) != LUA_OK) {
    t->raised = 1;
    return 1;
  }
  return 0;
}

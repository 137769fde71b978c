/* client:watch of uphook.c.kube: a watch stream read line by line into
 * a Lua callback, bounded per line (host/kube.c has the client and its
 * requests). */
#include "kube.h"
#include "kube_client.h"
#include "curl_lazy.h"
#include "luax.h"
#include "osutil.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <lauxlib.h>

/* ---- watch ---- */

typedef struct wctx {
  lua_State *L;
  CURL *h;
  int fn;                       /* stack index of on_line */
  long status;
  int stop, failed;
  buf line, body;
} wctx;

/* Hand one line to on_line; 1 to stop, -1 on a Lua error (left on the
 * stack top). */
static int deliver(wctx *w)
{
  lua_State *L = w->L;
  int stop;
  if (w->line.len == 0)
    return 0;
  lua_pushvalue(L, w->fn);
  lua_pushlstring(L, w->line.p, w->line.len);
  w->line.len = 0;
  if (lua_pcall(L, 1, 1, 0) != LUA_OK)
    return -1;
  stop = lua_toboolean(L, -1);
  lua_pop(L, 1);
  return stop;
}

static size_t on_watch(char *p, size_t sz, size_t n, void *ud)
{
  wctx *w = ud;
  size_t len = sz * n, i = 0;
  if (!w->status)
    curl_easy_getinfo(w->h, CURLINFO_RESPONSE_CODE, &w->status);
  if (w->status != 200)
    return buf_add(&w->body, p, len) == 0 ? len : 0;
  while (i < len) {
    const char *nl = memchr(p + i, '\n', len - i);
    size_t k = nl ? (size_t)(nl - (p + i)) : len - i;
    int r;
    if (buf_add(&w->line, p + i, k) != 0)
      return 0;
    i += k + (nl != NULL);
    if (!nl)
      break;
    if ((r = deliver(w)) != 0) {
      w->stop = r > 0;
      w->failed = r < 0;
      return 0;
    }
  }
  return len;
}

static int watch_result(lua_State *L, client *c, wctx *w, CURLcode rc,
                        const char *path, double timeout)
{
  int r;
  if (!w->stop && !w->failed && w->status == 200 &&
      (rc == CURLE_OK || rc == CURLE_OPERATION_TIMEDOUT)) {
    if ((r = deliver(w)) != 0) {  /* a last line without a newline */
      w->stop = r > 0;
      w->failed = r < 0;
    }
  }
  free(w->line.p);
  if (w->failed) {
    free(w->body.p);
    return lua_error(L);        /* on_line's error, as it was raised */
  }
  if (w->stop) {
    free(w->body.p);
    lua_pushboolean(L, 1);
    return 1;
  }
  if (rc != CURLE_OK && !(rc == CURLE_OPERATION_TIMEDOUT && w->status)) {
    req r0 = { "GET", path, NULL, NULL, NULL, 0, NULL };
    free(w->body.p);
    return push_neterr(L, c, &r0, rc, w->h, timeout);
  }
  lua_pushboolean(L, 0);
  lua_pushinteger(L, w->status);
  lua_pushlstring(L, w->body.p ? w->body.p : "", w->body.len);
  free(w->body.p);
  return 3;
}

int client_watch(lua_State *L)
{
  client *c = checkclient(L);
  const char *path = luaL_checkstring(L, 2);
  double timeout = luaL_checknumber(L, 3);
  char url[UH_KC_SERVER_MAX + 8192];
  struct curl_slist *hs;
  wctx w;
  uh_lua_tick tick = { L, 0, 0 };
  CURLcode rc;
  luaL_checktype(L, 4, LUA_TFUNCTION);
  luaL_argcheck(L, path[0] == '/' && strlen(path) < 8000, 2,
                "an absolute path under 8000 bytes expected");
  luaL_argcheck(L, timeout > 0, 3, "timeout must be positive");
  if (!lua_isnoneornil(L, 5)) {
    luaL_checktype(L, 5, LUA_TFUNCTION);
    tick.fn = 5;
  }
  lua_settop(L, 5);
  memset(&w, 0, sizeof w);
  w.L = L;
  w.fn = 4;
  w.line.max = LINE_MAX_BYTES;
  w.body.max = 1 << 20;
  if (!(w.h = handle(c, &c->w)) ||
      !(hs = curl_slist_append(NULL, "Accept: application/json")))
    return luaL_error(L, "libcurl initialisation failed");
  snprintf(url, sizeof url, "%s%s", c->kc.server, path);
  curl_easy_setopt(w.h, CURLOPT_URL, url);
  curl_easy_setopt(w.h, CURLOPT_HTTPGET, 1L);
  curl_easy_setopt(w.h, CURLOPT_HTTPHEADER, hs);
  curl_easy_setopt(w.h, CURLOPT_TIMEOUT_MS, (long)(timeout * 1000) + 1);
  curl_easy_setopt(w.h, CURLOPT_WRITEFUNCTION, on_watch);
  curl_easy_setopt(w.h, CURLOPT_WRITEDATA, &w);
  c->errbuf[0] = '\0';
  rc = run_transfer(c, w.h, &tick);
  w.failed = w.failed || tick.raised;   /* its error is on the stack top */
  curl_easy_setopt(w.h, CURLOPT_HTTPHEADER, NULL);
  curl_slist_free_all(hs);
  if (!w.status)
    curl_easy_getinfo(w.h, CURLINFO_RESPONSE_CODE, &w.status);
  return watch_result(L, c, &w, rc, path, timeout);
}


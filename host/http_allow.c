/* The URL permission rule (docs/security.md, "What permissions
 * guarantee"): which scheme and host a URL may reach.  This is its one
 * home: the engine asks it before a transfer (http.allowed, for the
 * hook's first URL, also under plan) and host/http.c asks it again for
 * every redirect target.  URLs are parsed by libcurl's own parser, the
 * one that then connects, so the rule and the transfer cannot read a
 * URL differently. */
#include "http.h"
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <lauxlib.h>

static int host_listed(const char *const *list, size_t n, const char *host,
                       const char *port)
{
  size_t hl = strlen(host);
  for (size_t i = 0; i < n; i++) {
    const char *e = list[i];
    if (strcasecmp(e, host) == 0)
      return 1;
    if (port && strncasecmp(e, host, hl) == 0 && e[hl] == ':' &&
        strcmp(e + hl + 1, port) == 0)
      return 1;
  }
  return 0;
}

/* need <- "net:<host>" or "net:http://<host>", the host in lower case. */
static void needed(char *need, size_t needlen, const char *prefix,
                   const char *host)
{
  size_t n;
  if (!need || !needlen)
    return;
  snprintf(need, needlen, "%s%s", prefix, host);
  for (n = strlen(prefix); need[n]; n++)
    need[n] = (char)tolower((unsigned char)need[n]);
}

uh_err uh_http_allowed(const uh_allow *a, const char *url, int *plain,
                       char *need, size_t needlen, char *err, size_t errlen)
{
  char *scheme = NULL, *host = NULL, *port = NULL;
  uh_err rc = UH_EINVAL;
  CURLU *u = curl_url();
  *plain = 0;
  if (need && needlen)
    need[0] = '\0';
  if (!u) {
    snprintf(err, errlen, "out of memory");
    return UH_ENOMEM;
  }
  if (strlen(url) > UH_HTTP_URLMAX) {
    snprintf(err, errlen, "URL longer than %d bytes", UH_HTTP_URLMAX);
    goto done;
  }
  if (curl_url_set(u, CURLUPART_URL, url, CURLU_NON_SUPPORT_SCHEME) ||
      curl_url_get(u, CURLUPART_SCHEME, &scheme, 0)) {
    snprintf(err, errlen, "not an absolute URL");
    goto done;
  }
  rc = UH_EDENIED;
  if (strcmp(scheme, "https") != 0 && strcmp(scheme, "http") != 0) {
    snprintf(err, errlen, "scheme %s is not allowed: only https URLs are "
             "(http with net:http://<host>)", scheme);
    goto done;
  }
  if (curl_url_get(u, CURLUPART_HOST, &host, 0)) {
    snprintf(err, errlen, "no host in the URL");
    goto done;
  }
  curl_url_get(u, CURLUPART_PORT, &port, 0);   /* NULL when absent */
  *plain = host_listed(a->http, a->nhttp, host, port);
  if (*plain || (scheme[4] == 's' && host_listed(a->https, a->nhttps, host,
                                                 port)))
    rc = UH_OK;
  else if (scheme[4] == 's') {
    snprintf(err, errlen, "host %s is not declared (net:%s)", host, host);
    needed(need, needlen, "net:", host);
  } else {
    snprintf(err, errlen, "plain http to %s is not declared "
             "(net:http://%s)", host, host);
    needed(need, needlen, "net:http://", host);
  }
done:
  curl_free(scheme);
  curl_free(host);
  curl_free(port);
  curl_url_cleanup(u);
  return rc;
}

void uh_http_opt_hosts(lua_State *L, int idx, const char *key,
                       const char **list, size_t *n)
{
  *n = 0;
  if (lua_getfield(L, idx, key) == LUA_TNIL) {
    lua_pop(L, 1);
    return;
  }
  if (!lua_istable(L, -1))
    luaL_error(L, "option '%s' must be a table", key);
  lua_pushnil(L);
  while (lua_next(L, -2)) {
    const char *h = NULL;
    if (lua_type(L, -2) == LUA_TSTRING)
      h = lua_toboolean(L, -1) ? lua_tostring(L, -2) : NULL;
    else if (lua_type(L, -1) == LUA_TSTRING)
      h = lua_tostring(L, -1);
    else
      luaL_error(L, "option '%s' holds a non-string host", key);
    if (h && *n == UH_HTTP_MAXHOSTS)
      luaL_error(L, "option '%s' lists more than %d hosts", key,
                 UH_HTTP_MAXHOSTS);
    if (h)
      list[(*n)++] = h;
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
}

/* http.allowed(url, {hosts=, http_hosts=}) -> true, plain
 *   | false, reason, permission (nil when no permission would help) */
int http_allowed(lua_State *L)
{
  size_t len;
  const char *url = luaL_checklstring(L, 1, &len);
  char need[UH_HTTP_URLMAX + 16], why[UH_HTTP_URLMAX + 128];
  uh_allow a;
  int plain;
  luaL_checktype(L, 2, LUA_TTABLE);
  if (strlen(url) != len) {   /* C, and libcurl, would see only a prefix */
    lua_pushboolean(L, 0);
    lua_pushliteral(L, "the URL has a NUL byte");
    lua_pushnil(L);
    return 3;
  }
  memset(&a, 0, sizeof a);
  uh_http_opt_hosts(L, 2, "hosts", a.https, &a.nhttps);
  uh_http_opt_hosts(L, 2, "http_hosts", a.http, &a.nhttp);
  if (uh_http_allowed(&a, url, &plain, need, sizeof need, why, sizeof why)
      == UH_OK) {
    lua_pushboolean(L, 1);
    lua_pushboolean(L, plain);
    return 2;
  }
  lua_pushboolean(L, 0);
  lua_pushstring(L, why);
  if (need[0])
    lua_pushstring(L, need);
  else
    lua_pushnil(L);
  return 3;
}

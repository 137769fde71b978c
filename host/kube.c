/* uphook.c.kube: the Kubernetes REST client (see kube.h). */
#include "kube.h"
#include "curl_lazy.h"
#include "kubeconfig.h"
#include "luax.h"
#include "os.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <curl/curl.h>
#include <lauxlib.h>


#define CLIENT_MT "uphook.kube.client"
#define BODY_MAX ((size_t)256 << 20)    /* one response */
#define LINE_MAX_BYTES ((size_t)64 << 20) /* one watch event */
#define CONNECT_MS 10000L
#define MAX_ATTEMPTS 6

typedef struct buf {
  char *p;
  size_t len, cap, max;
  int over;                     /* more than max arrived */
} buf;

typedef struct client {
  uh_kubeconfig kc;
  CURL *h;                      /* requests */
  CURL *w;                      /* watches */
  buf body;
  char errbuf[CURL_ERROR_SIZE];
  int closed;
} client;

/* ---- small helpers ---- */

static int buf_add(buf *b, const char *p, size_t n)
{
  if (b->len + n > b->max) {
    b->over = 1;
    return -1;
  }
  if (b->len + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 16384;
    char *q;
    while (cap < b->len + n + 1)
      cap *= 2;
    if (!(q = realloc(b->p, cap)))
      return -1;
    b->p = q;
    b->cap = cap;
  }
  memcpy(b->p + b->len, p, n);
  b->len += n;
  b->p[b->len] = '\0';
  return 0;
}

static size_t on_body(char *p, size_t sz, size_t n, void *ud)
{
  return buf_add(ud, p, sz * n) == 0 ? sz * n : 0;
}

static client *checkclient(lua_State *L)
{
  client *c = luaL_checkudata(L, 1, CLIENT_MT);
  luaL_argcheck(L, !c->closed, 1, "the client is closed");
  return c;
}

/* ---- handles ---- */

static void set_blob(CURL *h, CURLoption opt, const uh_kc_blob *b)
{
  struct curl_blob blob = { (void *)b->data, b->len, CURL_BLOB_NOCOPY };
  curl_easy_setopt(h, opt, &blob);
}

/* A handle with the transport defaults and the credentials. */
static CURL *new_handle(client *c)
{
  const uh_kubeconfig *kc = &c->kc;
  CURL *h = curl_easy_init();
  if (!h)
    return NULL;
  if (uh_curl_transport(h) != CURLE_OK) {
    curl_easy_cleanup(h);
    return NULL;
  }
  if (kc->insecure) {   /* insecure-skip-tls-verify in the kubeconfig */
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
    curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
  }
  curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, CONNECT_MS);
  curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, c->errbuf);
  if (kc->ca.len)
    set_blob(h, CURLOPT_CAINFO_BLOB, &kc->ca);
  if (kc->cert.len) {
    set_blob(h, CURLOPT_SSLCERT_BLOB, &kc->cert);
    curl_easy_setopt(h, CURLOPT_SSLCERTTYPE, "PEM");
    set_blob(h, CURLOPT_SSLKEY_BLOB, &kc->key);
    curl_easy_setopt(h, CURLOPT_SSLKEYTYPE, "PEM");
  }
  if (kc->token.len) {
    curl_easy_setopt(h, CURLOPT_HTTPAUTH, CURLAUTH_BEARER);
    curl_easy_setopt(h, CURLOPT_XOAUTH2_BEARER, kc->token.data);
  } else if (kc->username.len) {
    curl_easy_setopt(h, CURLOPT_HTTPAUTH, CURLAUTH_BASIC);
    curl_easy_setopt(h, CURLOPT_USERNAME, kc->username.data);
    curl_easy_setopt(h, CURLOPT_PASSWORD, kc->password.data);
  }
  return h;
}

static CURL *handle(client *c, CURL **slot)
{
  if (!*slot)
    *slot = new_handle(c);
  return *slot;
}

/* ---- one request ---- */

typedef struct req {
  const char *method, *path, *body, *ctype, *accept;
  size_t blen;
} req;

static CURLcode perform(client *c, CURL *h, const req *r, long timeout_ms,
                        long *status)
{
  char url[UH_KC_SERVER_MAX + 8192], hdr[512];
  struct curl_slist *hs = NULL, *t;
  CURLcode rc;
  snprintf(url, sizeof url, "%s%s", c->kc.server, r->path);
  snprintf(hdr, sizeof hdr, "Accept: %s", r->accept);
  hs = curl_slist_append(hs, hdr);
  if (hs && r->body) {
    snprintf(hdr, sizeof hdr, "Content-Type: %s",
             r->ctype ? r->ctype : "application/json");
    hs = (t = curl_slist_append(hs, hdr)) ? t : hs;
    hs = (t = curl_slist_append(hs, "Expect:")) ? t : hs;
  }
  if (!hs)
    return CURLE_OUT_OF_MEMORY;
  curl_easy_setopt(h, CURLOPT_URL, url);
  curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
  curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST,
                   strcmp(r->method, "GET") ? r->method : NULL);
  if (r->body) {
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)r->blen);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, r->body);
  }
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, hs);
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &c->body);
  c->body.len = 0;
  c->body.over = 0;
  c->body.max = BODY_MAX;
  c->errbuf[0] = '\0';
  *status = 0;
  rc = curl_easy_perform(h);
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, status);
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, NULL);
  curl_easy_setopt(h, CURLOPT_POSTFIELDS, NULL);
  curl_slist_free_all(hs);
  return rc;
}

static int idempotent(const char *m)
{
  return strcmp(m, "POST") != 0;
}

/* May a failed connection be tried again? */
static int retry_rc(CURLcode rc, const char *method)
{
  switch (rc) {
  case CURLE_COULDNT_CONNECT:
    return 1;                   /* nothing was sent */
  case CURLE_GOT_NOTHING:
  case CURLE_SEND_ERROR:
  case CURLE_RECV_ERROR:
  case CURLE_PARTIAL_FILE:
    return idempotent(method);
  default:
    return 0;
  }
}

static int retry_status(long s)
{
  return s == 429 || (s >= 500 && s != 501 && s != 505);
}

static double backoff(CURL *h, int attempt, long status)
{
  curl_off_t ra = -1;
  double d = 0.1 * (double)(1 << (attempt - 1));
  if (status && curl_easy_getinfo(h, CURLINFO_RETRY_AFTER, &ra) == CURLE_OK
      && ra >= 0)
    d = ra > 5 ? 5.0 : (double)ra;
  return d > 2.0 && ra < 0 ? 2.0 : d;
}

static int push_neterr(lua_State *L, client *c, const req *r, CURLcode rc,
                       double timeout)
{
  lua_pushnil(L);
  if (rc == CURLE_OPERATION_TIMEDOUT)
    lua_pushfstring(L, "%s %s%s: no answer within %fs", r->method,
                    c->kc.server, r->path, timeout);
  else if (rc == CURLE_WRITE_ERROR && c->body.over)
    lua_pushfstring(L, "%s %s%s: the response is larger than %d MiB",
                    r->method, c->kc.server, r->path, (int)(BODY_MAX >> 20));
  else
    lua_pushfstring(L, "%s %s%s: cannot reach the API server: %s",
                    r->method, c->kc.server, r->path,
                    c->errbuf[0] ? c->errbuf : curl_easy_strerror(rc));
  return 2;
}

static int push_response(lua_State *L, client *c, CURL *h, long status)
{
  const char *ct = NULL;
  lua_pushinteger(L, status);
  lua_pushlstring(L, c->body.p ? c->body.p : "", c->body.len);
  if (curl_easy_getinfo(h, CURLINFO_CONTENT_TYPE, &ct) == CURLE_OK && ct)
    lua_pushstring(L, ct);
  else
    lua_pushnil(L);
  return 3;
}

static const char *const METHODS[] = { "DELETE", "GET", "PATCH", "POST",
                                       "PUT", NULL };

static int client_request(lua_State *L)
{
  client *c = checkclient(L);
  req r;
  double timeout, deadline;
  CURL *h;
  r.method = METHODS[luaL_checkoption(L, 2, NULL, METHODS)];
  r.path = luaL_checkstring(L, 3);
  r.body = luaL_optlstring(L, 4, NULL, &r.blen);
  r.ctype = luaL_optstring(L, 5, NULL);
  timeout = luaL_optnumber(L, 6, 30);
  r.accept = luaL_optstring(L, 7, "application/json");
  luaL_argcheck(L, r.path[0] == '/' && strlen(r.path) < 8000, 3,
                "an absolute path under 8000 bytes expected");
  luaL_argcheck(L, timeout > 0, 6, "timeout must be positive");
  if (!(h = handle(c, &c->h)))
    return luaL_error(L, "libcurl initialisation failed");
  deadline = uh_monotonic() + timeout;
  for (int attempt = 1;; attempt++) {
    double left = deadline - uh_monotonic(), d;
    long status = 0;
    CURLcode rc = perform(c, h, &r, left > 0.001 ? (long)(left * 1000) : 1L,
                          &status);
    int again = rc == CURLE_OK ? retry_status(status) : retry_rc(rc, r.method);
    if (again && attempt < MAX_ATTEMPTS &&
        uh_monotonic() + (d = backoff(h, attempt, rc == CURLE_OK ? status : 0))
        < deadline) {
      uh_sleep(d);
      continue;
    }
    if (rc != CURLE_OK)
      return push_neterr(L, c, &r, rc, timeout);
    return push_response(L, c, h, status);
  }
}

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
    req r0 = { "GET", path, NULL, NULL, NULL, 0 };
    free(w->body.p);
    return push_neterr(L, c, &r0, rc, timeout);
  }
  lua_pushboolean(L, 0);
  lua_pushinteger(L, w->status);
  lua_pushlstring(L, w->body.p ? w->body.p : "", w->body.len);
  free(w->body.p);
  return 3;
}

static int client_watch(lua_State *L)
{
  client *c = checkclient(L);
  const char *path = luaL_checkstring(L, 2);
  double timeout = luaL_checknumber(L, 3);
  char url[UH_KC_SERVER_MAX + 8192];
  struct curl_slist *hs;
  wctx w;
  CURLcode rc;
  luaL_checktype(L, 4, LUA_TFUNCTION);
  luaL_argcheck(L, path[0] == '/' && strlen(path) < 8000, 2,
                "an absolute path under 8000 bytes expected");
  luaL_argcheck(L, timeout > 0, 3, "timeout must be positive");
  lua_settop(L, 4);
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
  rc = curl_easy_perform(w.h);
  curl_easy_setopt(w.h, CURLOPT_HTTPHEADER, NULL);
  curl_slist_free_all(hs);
  if (!w.status)
    curl_easy_getinfo(w.h, CURLINFO_RESPONSE_CODE, &w.status);
  return watch_result(L, c, &w, rc, path, timeout);
}

/* ---- client ---- */

static int client_server(lua_State *L)
{
  lua_pushstring(L, checkclient(L)->kc.server);
  return 1;
}

static int client_file(lua_State *L)
{
  lua_pushstring(L, checkclient(L)->kc.file);
  return 1;
}

static int client_namespace(lua_State *L)
{
  client *c = checkclient(L);
  if (c->kc.nsdefault[0])
    lua_pushstring(L, c->kc.nsdefault);
  else
    lua_pushnil(L);
  return 1;
}

static int client_close(lua_State *L)
{
  client *c = luaL_checkudata(L, 1, CLIENT_MT);
  if (c->closed)
    return 0;
  c->closed = 1;
  if (c->h)
    curl_easy_cleanup(c->h);
  if (c->w)
    curl_easy_cleanup(c->w);
  c->h = c->w = NULL;
  free(c->body.p);
  c->body.p = NULL;
  uh_kubeconfig_free(&c->kc);
  return 0;
}

static int client_tostring(lua_State *L)
{
  client *c = luaL_checkudata(L, 1, CLIENT_MT);
  lua_pushfstring(L, "kube client (%s)", c->closed ? "closed" : c->kc.server);
  return 1;
}

static const char *optfield(lua_State *L, int t, const char *k)
{
  const char *s;
  lua_getfield(L, t, k);
  s = lua_isnil(L, -1) ? NULL : lua_tostring(L, -1);
  if (!s && !lua_isnil(L, -1))
    luaL_error(L, "bad argument #1 to 'connect' (%s must be a string)", k);
  lua_pop(L, 1);                /* the table still holds the string */
  return s;
}

static int kube_connect(lua_State *L)
{
  const char *explicit_path, *snap, *home, *env;
  char path[PATH_MAX], err[PATH_MAX + 512];
  client *c;
  luaL_checktype(L, 1, LUA_TTABLE);
  explicit_path = optfield(L, 1, "kubeconfig");
  snap = optfield(L, 1, "snap_data");
  home = optfield(L, 1, "home");
  env = optfield(L, 1, "kubeconfig_env");
  if (!home)
    home = getenv("HOME");
  if (!env)
    env = getenv("KUBECONFIG");
  if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
    return luaL_error(L, "libcurl initialisation failed");
  if (uh_kubeconfig_find(explicit_path, snap, env, home, path, sizeof path,
                         err, sizeof err) != UH_OK) {
    lua_pushnil(L);
    lua_pushstring(L, err);
    return 2;
  }
  c = lua_newuserdatauv(L, sizeof *c, 0);
  memset(c, 0, sizeof *c);
  c->closed = 1;                /* until the kubeconfig is loaded */
  luaL_setmetatable(L, CLIENT_MT);
  if (uh_kubeconfig_load(path, &c->kc, err, sizeof err) != UH_OK) {
    lua_pushnil(L);
    lua_pushstring(L, err);
    return 2;
  }
  c->closed = 0;
  return 1;
}

static const luaL_Reg client_methods[] = {
  { "__close", client_close },
  { "__gc", client_close },
  { "__tostring", client_tostring },
  { "close", client_close },
  { "file", client_file },
  { "namespace", client_namespace },
  { "request", client_request },
  { "server", client_server },
  { "watch", client_watch },
  { NULL, NULL }
};

static const luaL_Reg kube_funcs[] = {
  { "connect", kube_connect },
  { NULL, NULL }
};

int luaopen_uphook_kube(lua_State *L)
{
  uh_newclass(L, CLIENT_MT, client_methods);
  luaL_newlib(L, kube_funcs);
  return 1;
}

/* uphook.c.kube: the Kubernetes REST client (see kube.h). */
#include "kube.h"
#include "curl_lazy.h"
#include "curl_tick.h"
#include "kubeconfig.h"
#include "luax.h"
#include "osutil.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <curl/curl.h>
#include <lauxlib.h>


#include "kube_client.h"

/* ---- small helpers ---- */

int buf_add(buf *b, const char *p, size_t n)
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

/* A response's buffer once Lua has its copy: one over BUF_KEEP is freed,
 * so that one big answer (a LIST) does not stay allocated for the run,
 * nor beside what it decodes to. */
#define BUF_KEEP ((size_t)64 << 10)
static void buf_release(buf *b)
{
  if (b->cap > BUF_KEEP) {
    free(b->p);
    b->p = NULL, b->cap = 0, b->len = 0;
  }
}

static size_t on_body(char *p, size_t sz, size_t n, void *ud)
{
  return buf_add(ud, p, sz * n) == 0 ? sz * n : 0;
}

client *checkclient(lua_State *L)
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

CURL *handle(client *c, CURL **slot)
{
  if (!*slot)
    *slot = new_handle(c);
  return *slot;
}

/* ---- one request ---- */


/* h to its end; with a tick, on c->wm (host/curl_tick.h). */
CURLcode run_transfer(client *c, CURL *h, uh_lua_tick *tick)
{
  if (!tick || !tick->fn)
    return curl_easy_perform(h);
  if (!c->wm && !(c->wm = curl_multi_init()))
    return CURLE_OUT_OF_MEMORY;
  return uh_curl_perform_ticking(c->wm, h, uh_lua_tick_call, tick);
}

/* Set h up for r, its answer going to body; *hs: the headers, freed by
 * the caller once the transfer ended. */
static CURLcode prepare(client *c, CURL *h, const req *r, long timeout_ms,
                        buf *body, struct curl_slist **hs)
{
  char url[UH_KC_SERVER_MAX + 8192], hdr[512];
  struct curl_slist *t;
  snprintf(url, sizeof url, "%s%s", c->kc.server, r->path);
  snprintf(hdr, sizeof hdr, "Accept: %s", r->accept);
  *hs = curl_slist_append(NULL, hdr);
  if (*hs && r->body) {
    snprintf(hdr, sizeof hdr, "Content-Type: %s",
             r->ctype ? r->ctype : "application/json");
    *hs = (t = curl_slist_append(*hs, hdr)) ? t : *hs;
    *hs = (t = curl_slist_append(*hs, "Expect:")) ? t : *hs;
  }
  if (!*hs)
    return CURLE_OUT_OF_MEMORY;
  curl_easy_setopt(h, CURLOPT_URL, url);
  curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
  curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST,
                   strcmp(r->method, "GET") ? r->method : NULL);
  if (r->body) {
    curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)r->blen);
    curl_easy_setopt(h, CURLOPT_POSTFIELDS, r->body);
  }
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, *hs);
  curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, timeout_ms);
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, body);
  body->len = 0;
  body->over = 0;
  body->max = BODY_MAX;
  return CURLE_OK;
}

static void unprepare(CURL *h, struct curl_slist **hs)
{
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, NULL);
  curl_easy_setopt(h, CURLOPT_POSTFIELDS, NULL);
  curl_slist_free_all(*hs);
  *hs = NULL;
}

static CURLcode perform(client *c, CURL *h, const req *r, long timeout_ms,
                        long *status)
{
  struct curl_slist *hs = NULL;
  CURLcode rc = prepare(c, h, r, timeout_ms, &c->body, &hs);
  c->errbuf[0] = '\0';
  *status = 0;
  if (rc == CURLE_OK) {
    rc = run_transfer(c, h, r->tick);
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, status);
  }
  unprepare(h, &hs);
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

/* What a request that timed out (on handle h, or NULL) waited for, in
 * words: setting up the connection (TCP, TLS) has its own limit,
 * CONNECT_MS, which may end it before `timeout`. */
static const char *timed_out(char *out, size_t n, CURL *h, double timeout)
{
  curl_off_t ready = 0, total = 0;   /* ready: the request could be sent */
  if (h) {
    curl_easy_getinfo(h, CURLINFO_PRETRANSFER_TIME_T, &ready);
    curl_easy_getinfo(h, CURLINFO_TOTAL_TIME_T, &total);
  }
  if (h && total > 0 && ready == 0)
    snprintf(out, n, "no connection (TCP and TLS) within %.1f s",
             (double)total / 1e6);
  else
    snprintf(out, n, "no answer within %.1f s", timeout);
  return out;
}

int push_neterr(lua_State *L, client *c, const req *r, CURLcode rc,
                       CURL *h, double timeout)
{
  char why[64];
  lua_pushnil(L);
  if (rc == CURLE_OPERATION_TIMEDOUT)
    lua_pushfstring(L, "%s %s%s: %s", r->method, c->kc.server, r->path,
                    timed_out(why, sizeof why, h, timeout));
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
  buf_release(&c->body);
  if (curl_easy_getinfo(h, CURLINFO_CONTENT_TYPE, &ct) == CURLE_OK && ct)
    lua_pushstring(L, ct);
  else
    lua_pushnil(L);
  return 3;
}

static const char *const METHODS[] = { "DELETE", "GET", "PATCH", "POST",
                                       "PUT", NULL };

/* One request with its retries: pushes status, body, content type, or
 * nil and the message. */
static int do_request(lua_State *L, client *c, const req *r, double timeout)
{
  double deadline = uh_monotonic() + timeout;
  /* a polled request's tick makes requests of its own (the Lease): on c->h */
  CURL *h = handle(c, r->tick ? &c->w : &c->h);
  if (!h)
    return luaL_error(L, "libcurl initialisation failed");
  for (int attempt = 1;; attempt++) {
    double left = deadline - uh_monotonic(), d;
    long status = 0;
    CURLcode rc = perform(c, h, r, left > 0.001 ? (long)(left * 1000) : 1L,
                          &status);
    int again = rc == CURLE_OK ? retry_status(status) : retry_rc(rc, r->method);
    if (r->tick) {
      if (r->tick->raised)
        return lua_error(L);    /* the tick's error, on the stack top */
      again = 0;                /* the caller polls */
    }
    if (again && attempt < MAX_ATTEMPTS &&
        uh_monotonic() + (d = backoff(h, attempt, rc == CURLE_OK ? status : 0))
        < deadline) {
      uh_sleep(d);
      continue;
    }
    if (rc != CURLE_OK)
      return push_neterr(L, c, r, rc, h, timeout);
    return push_response(L, c, h, status);
  }
}

static void check_path(lua_State *L, const char *path, int arg)
{
  luaL_argcheck(L, path[0] == '/' && strlen(path) < 8000, arg,
                "an absolute path under 8000 bytes expected");
}

static int client_request(lua_State *L)
{
  client *c = checkclient(L);
  req r;
  uh_lua_tick tick;
  double timeout;
  r.method = METHODS[luaL_checkoption(L, 2, NULL, METHODS)];
  r.path = luaL_checkstring(L, 3);
  r.body = luaL_optlstring(L, 4, NULL, &r.blen);
  r.ctype = luaL_optstring(L, 5, NULL);
  timeout = luaL_optnumber(L, 6, 30);
  r.accept = luaL_optstring(L, 7, "application/json");
  check_path(L, r.path, 3);
  luaL_argcheck(L, timeout > 0, 6, "timeout must be positive");
  r.tick = NULL;
  if (!lua_isnoneornil(L, 8)) {
    luaL_checktype(L, 8, LUA_TFUNCTION);
    lua_settop(L, 8);
    tick = (uh_lua_tick){ L, 8, 0 };
    r.tick = &tick;
  }
  return do_request(L, c, &r, timeout);
}

/* ---- requests in parallel ---- */

/* One request of request_many: where it stands. */
typedef struct mreq {
  req r;
  CURLcode rc;
  long status;
  int slot;                     /* -1: not started or ended */
  int done;
} mreq;

/* Read requests[i] = {method, path, body?, content_type?, accept?}. */
static void read_mreq(lua_State *L, mreq *m, lua_Integer i)
{
  if (lua_rawgeti(L, 2, i) != LUA_TTABLE)
    luaL_error(L, "bad argument #1 to 'request_many' (request %d is not a "
               "table)", (int)i);
  lua_rawgeti(L, -1, 1);
  m->r.method = METHODS[luaL_checkoption(L, -1, NULL, METHODS)];
  lua_rawgeti(L, -2, 2);
  m->r.path = luaL_checkstring(L, -1);
  check_path(L, m->r.path, 2);
  lua_rawgeti(L, -3, 3);
  m->r.body = luaL_optlstring(L, -1, NULL, &m->r.blen);
  lua_rawgeti(L, -4, 4);
  m->r.ctype = luaL_optstring(L, -1, NULL);
  lua_rawgeti(L, -5, 5);
  m->r.accept = luaL_optstring(L, -1, "application/json");
  m->slot = -1;
  lua_pop(L, 6);                /* the requests table keeps the strings */
}

/* Start m on a free slot; 0, or -1 when it cannot start (then it is
 * done, with its libcurl code). */
static int start_mreq(client *c, mreq *m, size_t i, long timeout_ms)
{
  int k = 0;                    /* a slot is free: fewer than POOL in flight */
  pslot *s;
  while (k < POOL && c->pool[k].busy)
    k++;
  s = &c->pool[k];
  if (!s->h && !(s->h = new_handle(c)))
    m->rc = CURLE_FAILED_INIT;
  else if ((m->rc = prepare(c, s->h, &m->r, timeout_ms, &s->body, &s->hs))
           == CURLE_OK) {
    s->errbuf[0] = '\0';
    curl_easy_setopt(s->h, CURLOPT_ERRORBUFFER, s->errbuf);
    curl_easy_setopt(s->h, CURLOPT_PRIVATE, (void *)i);
    if (curl_multi_add_handle(c->m, s->h) == CURLM_OK) {
      s->busy = 1;
      m->slot = k;
      return 0;
    }
    m->rc = CURLE_FAILED_INIT;
  }
  if (s->h)
    unprepare(s->h, &s->hs);
  m->done = 1;
  return -1;
}

/* results[i] = {status = , body = } or {error = message}. */
static void push_mresult(lua_State *L, client *c, mreq *m, pslot *s,
                         double timeout, lua_Integer i)
{
  lua_createtable(L, 0, 2);
  if (m->rc == CURLE_OK) {
    lua_pushinteger(L, m->status);
    lua_setfield(L, -2, "status");
    lua_pushlstring(L, s->body.p ? s->body.p : "", s->body.len);
    lua_setfield(L, -2, "body");
    buf_release(&s->body);
  } else {
    const char *why = s && s->errbuf[0] ? s->errbuf : curl_easy_strerror(m->rc);
    char waited[64];
    if (m->rc == CURLE_OPERATION_TIMEDOUT)
      lua_pushfstring(L, "%s %s%s: %s", m->r.method, c->kc.server, m->r.path,
                      timed_out(waited, sizeof waited, s ? s->h : NULL,
                                timeout));
    else if (m->rc == CURLE_WRITE_ERROR && s && s->body.over)
      lua_pushfstring(L, "%s %s%s: the response is larger than %d MiB",
                      m->r.method, c->kc.server, m->r.path,
                      (int)(BODY_MAX >> 20));
    else
      lua_pushfstring(L, "%s %s%s: cannot reach the API server: %s",
                      m->r.method, c->kc.server, m->r.path, why);
    lua_setfield(L, -2, "error");
  }
  lua_rawseti(L, 4, i);
}

/* Note the transfers that ended; their slots are free again. */
static void reap(lua_State *L, client *c, mreq *ms, double timeout,
                 int *inflight)
{
  CURLMsg *msg;
  int left;
  while ((msg = curl_multi_info_read(c->m, &left)) != NULL) {
    char *priv = NULL;
    mreq *m;
    pslot *s;
    if (msg->msg != CURLMSG_DONE)
      continue;
    curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &priv);
    m = &ms[(size_t)priv];
    s = &c->pool[m->slot];
    m->rc = msg->data.result;
    curl_easy_getinfo(s->h, CURLINFO_RESPONSE_CODE, &m->status);
    curl_multi_remove_handle(c->m, s->h);
    unprepare(s->h, &s->hs);
    curl_easy_setopt(s->h, CURLOPT_ERRORBUFFER, NULL);
    m->done = 1;
    /* what the server would have us retry is tried again in order */
    if (!(m->rc == CURLE_OK ? retry_status(m->status)
          : retry_rc(m->rc, m->r.method)))
      push_mresult(L, c, m, s, timeout, (lua_Integer)(m - ms) + 1);
    s->busy = 0;
    m->slot = -1;
    (*inflight)--;
  }
}

/* The requests of request_many left without an answer (nil in the
 * results at stack index 4: the server asked to retry, or the connection
 * failed), each tried again alone with request's retries. */
static void retry_alone(lua_State *L, client *c, mreq *ms, lua_Integer n,
                        double timeout)
{
  for (lua_Integer i = 1; i <= n; i++) {
    if (lua_rawgeti(L, 4, i) == LUA_TNIL) {        /* to be retried */
      int k = do_request(L, c, &ms[i - 1].r, timeout);
      lua_createtable(L, 0, 2);
      if (lua_isnil(L, -1 - k)) {
        lua_pushvalue(L, -1 - k + 1);
        lua_setfield(L, -2, "error");
      } else {
        lua_pushvalue(L, -1 - k);
        lua_setfield(L, -2, "status");
        lua_pushvalue(L, -1 - k + 1);
        lua_setfield(L, -2, "body");
      }
      lua_rawseti(L, 4, i);
      lua_pop(L, k);
    }
    lua_pop(L, 1);
  }
}

/* client:request_many(requests, timeout_s, parallel): at most parallel
 * (1 to POOL, default 4) at once over
 * kept connections (HTTP/2 streams where the server speaks it); the
 * answers in the requests' order. A request the server asks to retry
 * (429, 5xx) or whose connection failed is then tried again alone, with
 * request's retries. */
static int client_request_many(lua_State *L)
{
  client *c = checkclient(L);
  lua_Integer n;
  double timeout = luaL_optnumber(L, 3, 30);
  lua_Integer par = luaL_optinteger(L, 4, 4);
  size_t next = 0;
  int inflight = 0;
  mreq *ms;
  luaL_checktype(L, 2, LUA_TTABLE);
  n = luaL_len(L, 2);
  luaL_argcheck(L, n >= 1 && n <= MANY_MAX, 2, "1 to 256 requests expected");
  luaL_argcheck(L, timeout > 0, 3, "timeout must be positive");
  luaL_argcheck(L, par >= 1 && par <= POOL, 4, "1 to 8 requests at once");
  lua_settop(L, 3);
  ms = lua_newuserdatauv(L, sizeof *ms * (size_t)n, 0);
  memset(ms, 0, sizeof *ms * (size_t)n);
  for (lua_Integer i = 1; i <= n; i++)
    read_mreq(L, &ms[i - 1], i);
  lua_createtable(L, (int)n, 0);                      /* 5: results */
  lua_rotate(L, 4, 1);                                /* results at 4 */
  if (!c->m && !(c->m = curl_multi_init()))
    return luaL_error(L, "libcurl initialisation failed");
  while (next < (size_t)n || inflight > 0) {
    int running = 0;
    while (inflight < par && next < (size_t)n) {
      if (start_mreq(c, &ms[next], next, (long)(timeout * 1000) + 1) == 0)
        inflight++;
      else
        push_mresult(L, c, &ms[next], NULL, timeout, (lua_Integer)next + 1);
      next++;
    }
    if (curl_multi_perform(c->m, &running) != CURLM_OK) {
      for (int k = 0; k < POOL; k++)
        if (c->pool[k].busy) {
          curl_multi_remove_handle(c->m, c->pool[k].h);
          unprepare(c->pool[k].h, &c->pool[k].hs);
          c->pool[k].busy = 0;
        }
      return luaL_error(L, "libcurl: the parallel requests failed");
    }
    reap(L, c, ms, timeout, &inflight);
    if (inflight > 0 && running > 0)
      curl_multi_poll(c->m, NULL, 0, 200, NULL);
  }
  retry_alone(L, c, ms, n, timeout);
  lua_settop(L, 4);
  return 1;
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
  for (int i = 0; i < POOL; i++) {
    if (c->pool[i].h) {
      if (c->m)
        curl_multi_remove_handle(c->m, c->pool[i].h);
      curl_easy_cleanup(c->pool[i].h);
    }
    free(c->pool[i].body.p);
    c->pool[i].h = NULL;
    c->pool[i].body.p = NULL;
  }
  if (c->m)
    curl_multi_cleanup(c->m);
  if (c->wm)
    curl_multi_cleanup(c->wm);
  c->m = c->wm = NULL;
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
  { "request_many", client_request_many },
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

/* uphook.c.agent: the cluster-agent client (see agent.h). */
#include "agent.h"
#include "arena.h"
#include "curl_lazy.h"
#include "json.h"
#include "luax.h"
#include "osutil.h"

#include <arpa/inet.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <curl/curl.h>
#include <jansson.h>
#include <lauxlib.h>

#define AGENT_MT "uphook.agent"
#define BATCH_MT "uphook.agent.batch"
#define PATH_CONFIGURE "/cluster/api/v1.0/configure"
#define TOKENS_MAX ((size_t)1 << 20)  /* a token file */
#define CA_MAX ((size_t)1 << 20)
#define ARENA_LEN ((size_t)1 << 21)   /* room for the largest token file */
#define ANSWER_MAX ((size_t)1 << 20)
#define REQS_MAX 1024
#define CONNECT_MS 10000L
#define WHY_MAX (PATH_MAX * 2 + 160)

typedef struct endpoint {       /* a line of the legacy callback-tokens.txt */
  char host[64];                /* the address, without brackets */
  int port;
  const char *token;            /* in the arena */
} endpoint;

typedef struct conn {           /* one kept-alive handle per address */
  char address[64];
  CURL *h;
} conn;

typedef struct agent {
  uh_arena arena;
  const char *token;            /* callback-token.txt, in the arena */
  endpoint *legacy;             /* callback-tokens.txt, when no token */
  size_t nlegacy;
  char token_why[WHY_MAX];      /* why there is no token ("" if there is) */
  char *ca;                     /* the cluster CA, PEM */
  size_t ca_len;
  char ca_file[PATH_MAX];
  char ca_why[WHY_MAX];
  CURLM *multi;
  conn *conns;
  size_t nconns;
  int closed;
} agent;

/* ---- the token and the CA ---- */

/* A token is printable ASCII without quote or backslash, so that it goes
 * into the JSON body as it is. */
static int token_ok(const char *s, size_t n)
{
  for (size_t i = 0; i < n; i++)
    if (s[i] <= ' ' || s[i] > '~' || s[i] == '"' || s[i] == '\\')
      return 0;
  return n > 0;
}

static void trim(const char **s, size_t *n)
{
  while (*n && strchr(" \t\r\n", **s))
    (*s)++, (*n)--;
  while (*n && strchr(" \t\r\n", (*s)[*n - 1]))
    (*n)--;
}

/* Copy s[0..n) into the arena. */
static const char *keep(agent *a, const char *s, size_t n)
{
  char *p = uh_arena_take(&a->arena, n);
  if (p)
    memcpy(p, s, n);
  return p;
}

static void why_read(char *why, const char *path, uh_err e, int errnum)
{
  snprintf(why, WHY_MAX, "cannot read %s: %s", path,
           errnum ? strerror(errnum) : uh_strerror(e));
}

/* callback-token.txt: one token (surrounding white space dropped). */
static void load_token(agent *a, const char *path, const char *text,
                       size_t len)
{
  const char *s = text;
  size_t n = len;
  trim(&s, &n);
  if (n == 0)
    snprintf(a->token_why, WHY_MAX, "%s is empty", path);
  else if (!token_ok(s, n))
    snprintf(a->token_why, WHY_MAX, "%s does not hold a token (one line "
             "of printable characters)", path);
  else if (!(a->token = keep(a, s, n)))
    snprintf(a->token_why, WHY_MAX, "%s is too large", path);
}

/* Split "host:port" (IPv6 in brackets) into e; 0 when it is not that. */
static int parse_endpoint(const char *s, size_t n, endpoint *e)
{
  const char *colon = n ? memrchr(s, ':', n) : NULL;
  size_t hl;
  char port[8];
  if (!colon || (size_t)(s + n - colon - 1) >= sizeof port)
    return 0;
  memcpy(port, colon + 1, (size_t)(s + n - colon - 1));
  port[s + n - colon - 1] = '\0';
  e->port = (int)strtol(port, NULL, 10);
  hl = (size_t)(colon - s);
  if (hl >= 2 && s[0] == '[' && s[hl - 1] == ']')
    s++, hl -= 2;
  if (hl == 0 || hl >= sizeof e->host || e->port <= 0 || e->port > 65535)
    return 0;
  memcpy(e->host, s, hl);
  e->host[hl] = '\0';
  return 1;
}

/* callback-tokens.txt: lines "host:port token". */
static void load_legacy(agent *a, const char *path, const char *text,
                        size_t len)
{
  size_t lines = 1;
  for (size_t i = 0; i < len; i++)
    lines += text[i] == '\n';
  if (!(a->legacy = calloc(lines, sizeof *a->legacy))) {
    snprintf(a->token_why, WHY_MAX, "out of memory");
    return;
  }
  for (const char *p = text, *end = text + len; p < end;) {
    const char *nl = memchr(p, '\n', (size_t)(end - p)), *sp;
    size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
    const char *line = p;
    endpoint *e = &a->legacy[a->nlegacy];
    p += n + 1;
    trim(&line, &n);
    if (n == 0)
      continue;
    sp = memchr(line, ' ', n);
    if (sp) {
      const char *tok = sp + 1;
      size_t tn = (size_t)(line + n - tok);
      trim(&tok, &tn);
      if (parse_endpoint(line, (size_t)(sp - line), e) && token_ok(tok, tn)
          && (e->token = keep(a, tok, tn)) != NULL) {
        a->nlegacy++;
        continue;
      }
    }
    snprintf(a->token_why, WHY_MAX, "%s: line %zu is not \"host:port "
             "token\"", path, a->nlegacy + 1);
    return;
  }
  if (a->nlegacy == 0)
    snprintf(a->token_why, WHY_MAX, "%s is empty", path);
}

static void load_tokens(agent *a, const char *snap_data)
{
  char path[PATH_MAX], legacy[PATH_MAX], *text = NULL;
  size_t len = 0;
  int errnum;
  uh_err e;
  snprintf(path, sizeof path, "%s/credentials/callback-token.txt", snap_data);
  snprintf(legacy, sizeof legacy, "%s/credentials/callback-tokens.txt",
           snap_data);
  if (uh_arena_open(&a->arena, ARENA_LEN) != UH_OK) {
    snprintf(a->token_why, WHY_MAX, "out of memory");
    return;
  }
  e = uh_secret_read(path, TOKENS_MAX, &text, &len, &errnum);
  if (e == UH_OK) {
    load_token(a, path, text, len);
  } else if (e == UH_ENOENT &&
             (e = uh_secret_read(legacy, TOKENS_MAX, &text, &len,
                                 &errnum)) == UH_OK) {
    load_legacy(a, legacy, text, len);
  } else if (e == UH_ENOENT) {
    snprintf(a->token_why, WHY_MAX, "neither %s nor %s exists", path,
             legacy);
  } else {
    why_read(a->token_why, path, e, errnum);
  }
  uh_secret_drop(text, len);
}

static void load_ca(agent *a, const char *snap_data)
{
  int errnum;
  uh_err e;
  snprintf(a->ca_file, sizeof a->ca_file, "%s/certs/ca.crt", snap_data);
  e = uh_secret_read(a->ca_file, CA_MAX, &a->ca, &a->ca_len, &errnum);
  if (e != UH_OK)
    why_read(a->ca_why, a->ca_file, e, errnum);
  else if (!strstr(a->ca, "-----BEGIN CERTIFICATE-----"))
    snprintf(a->ca_why, WHY_MAX, "%s holds no PEM certificate", a->ca_file);
}

/* The token for a node and the port of its agent, or NULL with why. */
static const char *token_for(const agent *a, const char *address, int *port,
                             char *why, size_t whylen)
{
  *port = UH_AGENT_PORT;
  if (a->token)
    return a->token;
  for (size_t i = 0; i < a->nlegacy; i++)
    if (strcmp(a->legacy[i].host, address) == 0) {
      *port = a->legacy[i].port;
      return a->legacy[i].token;
    }
  if (a->token_why[0])
    snprintf(why, whylen, "no callback token: %.4000s", a->token_why);
  else
    snprintf(why, whylen, "no callback token for %s in the legacy "
             "credentials/callback-tokens.txt", address);
  return NULL;
}

/* ---- one request ---- */

typedef struct areq {
  const char *node, *address;   /* held by the reqs table */
  const char *reason;           /* NULL: not failed (yet) */
  char why[WHY_MAX];
  char url[128];
  char *post;                   /* holds the token: wiped, freed */
  size_t post_len;
  char *answer;
  size_t answer_len, answer_cap;
  int over;                     /* the answer passed ANSWER_MAX */
  CURL *h;
  CURLcode rc;
  long status;
  char errbuf[CURL_ERROR_SIZE];
} areq;

static size_t on_answer(char *p, size_t sz, size_t n, void *ud)
{
  areq *r = ud;
  size_t len = sz * n;
  if (r->answer_len + len > ANSWER_MAX) {
    r->over = 1;
    return 0;
  }
  if (r->answer_len + len + 1 > r->answer_cap) {
    size_t cap = r->answer_cap ? r->answer_cap * 2 : 4096;
    char *q;
    while (cap < r->answer_len + len + 1)
      cap *= 2;
    if (!(q = realloc(r->answer, cap)))
      return 0;
    r->answer = q;
    r->answer_cap = cap;
  }
  memcpy(r->answer + r->answer_len, p, len);
  r->answer_len += len;
  r->answer[r->answer_len] = '\0';
  return len;
}

static void fail(areq *r, const char *reason, const char *fmt, ...)
  __attribute__((format(printf, 3, 4)));
static void fail(areq *r, const char *reason, const char *fmt, ...)
{
  va_list ap;
  r->reason = reason;
  va_start(ap, fmt);
  vsnprintf(r->why, sizeof r->why, fmt, ap);
  va_end(ap);
}

/* {"callback":"<token>", + the body's members: the body is a JSON object
 * text and the token holds no character JSON would escape. */
static int build_post(areq *r, const char *token, const char *json,
                      size_t jlen)
{
  size_t tl = strlen(token), n = 14 + tl + jlen + 1;
  int empty = jlen == 2;        /* "{}" */
  if (!(r->post = malloc(n)))
    return -1;
  r->post_len = (size_t)snprintf(r->post, n, "{\"callback\":\"%s\"%s%s",
                                 token, empty ? "}" : ",",
                                 empty ? "" : json + 1);
  return 0;
}

/* Check the address, find the token, encode the body (at the stack top,
 * popped) and make the POST; on a local failure r->reason is set. */
static void prepare(lua_State *L, agent *a, areq *r)
{
  unsigned char bin[16];
  char err[256];
  const char *token, *json;
  size_t jlen;
  int port, v6 = inet_pton(AF_INET6, r->address, bin) == 1;
  if (!v6 && inet_pton(AF_INET, r->address, bin) != 1)
    fail(r, "BadAddress", "'%.64s' is not an IP address", r->address);
  else if (a->ca_why[0])
    fail(r, "NoCA", "cannot verify the cluster agent: %.4000s", a->ca_why);
  else if ((token = token_for(a, r->address, &port, r->why, sizeof r->why))
           == NULL)
    r->reason = "NoToken";
  else if (uh_json_encode_push(L, -1, err, sizeof err) != UH_OK)
    luaL_error(L, "bad argument #1 to 'configure' (body of node %s: %s)",
               r->node, err);
  else if (!(json = lua_tolstring(L, -1, &jlen)) || jlen < 2 || *json != '{')
    luaL_error(L, "bad argument #1 to 'configure' (the body of node %s "
               "must be a table with string keys)", r->node);
  else {
    snprintf(r->url, sizeof r->url, v6 ? "https://[%s]:%d%s" :
             "https://%s:%d%s", r->address, port, PATH_CONFIGURE);
    if (build_post(r, token, json, jlen) != 0)
      fail(r, "NoToken", "out of memory");
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
}

/* ---- handles ---- */

static CURL *new_handle(agent *a)
{
  struct curl_blob ca = { a->ca, a->ca_len, CURL_BLOB_NOCOPY };
  CURL *h = curl_easy_init();
  if (!h)
    return NULL;
  if (uh_curl_transport(h) != CURLE_OK) {
    curl_easy_cleanup(h);
    return NULL;
  }
  curl_easy_setopt(h, CURLOPT_NOPROXY, "*");
  /* the cluster CA and nothing else: no bundle, no system folder */
  curl_easy_setopt(h, CURLOPT_CAINFO, NULL);
  curl_easy_setopt(h, CURLOPT_CAPATH, NULL);
  curl_easy_setopt(h, CURLOPT_CAINFO_BLOB, &ca);
  curl_easy_setopt(h, CURLOPT_TCP_KEEPALIVE, 1L);
  return h;
}

static CURL *handle_for(agent *a, const char *address)
{
  conn *c;
  for (size_t i = 0; i < a->nconns; i++)
    if (strcmp(a->conns[i].address, address) == 0)
      return a->conns[i].h;
  if (a->nconns == REQS_MAX || strlen(address) >= sizeof c->address)
    return NULL;
  if (!(c = realloc(a->conns, (a->nconns + 1) * sizeof *c)))
    return NULL;
  a->conns = c;
  c = &a->conns[a->nconns];
  snprintf(c->address, sizeof c->address, "%s", address);
  if (!(c->h = new_handle(a)))
    return NULL;
  a->nconns++;
  return c->h;
}

static int start(agent *a, areq *r, struct curl_slist *hs, long timeout_ms)
{
  if (!(r->h = handle_for(a, r->address))) {
    fail(r, "Unreachable", "libcurl initialisation failed");
    return -1;
  }
  curl_easy_setopt(r->h, CURLOPT_URL, r->url);
  curl_easy_setopt(r->h, CURLOPT_POSTFIELDS, r->post);
  curl_easy_setopt(r->h, CURLOPT_POSTFIELDSIZE_LARGE,
                   (curl_off_t)r->post_len);
  curl_easy_setopt(r->h, CURLOPT_HTTPHEADER, hs);
  curl_easy_setopt(r->h, CURLOPT_WRITEFUNCTION, on_answer);
  curl_easy_setopt(r->h, CURLOPT_WRITEDATA, r);
  curl_easy_setopt(r->h, CURLOPT_ERRORBUFFER, r->errbuf);
  curl_easy_setopt(r->h, CURLOPT_PRIVATE, r);
  curl_easy_setopt(r->h, CURLOPT_TIMEOUT_MS, timeout_ms);
  curl_easy_setopt(r->h, CURLOPT_CONNECTTIMEOUT_MS,
                   timeout_ms < CONNECT_MS ? timeout_ms : CONNECT_MS);
  r->errbuf[0] = '\0';
  r->rc = CURLE_OK;
  if (curl_multi_add_handle(a->multi, r->h) != CURLM_OK) {
    r->h = NULL;
    fail(r, "Unreachable", "libcurl: cannot add the request");
    return -1;
  }
  return 0;
}

/* Run every started request to its end (each is bounded by its own
 * timeout) and note how it ended. */
static void run_all(agent *a, areq *reqs, size_t n)
{
  int running = 1, left;
  CURLMsg *m;
  while (running) {
    if (curl_multi_perform(a->multi, &running) != CURLM_OK)
      break;
    if (running)
      curl_multi_poll(a->multi, NULL, 0, 200, NULL);
  }
  while ((m = curl_multi_info_read(a->multi, &left)) != NULL) {
    areq *r = NULL;
    if (m->msg != CURLMSG_DONE)
      continue;
    curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&r);
    if (r)
      r->rc = m->data.result;
  }
  for (size_t i = 0; i < n; i++)
    if (reqs[i].h) {
      curl_easy_getinfo(reqs[i].h, CURLINFO_RESPONSE_CODE, &reqs[i].status);
      curl_multi_remove_handle(a->multi, reqs[i].h);
      curl_easy_setopt(reqs[i].h, CURLOPT_HTTPHEADER, NULL);
      curl_easy_setopt(reqs[i].h, CURLOPT_POSTFIELDS, NULL);
    }
}

/* ---- how it ended ---- */

/* At most 120 bytes of an answer, unprintable bytes as '?'. */
static void snippet(const areq *r, char *out, size_t n)
{
  size_t k = 0;
  for (size_t i = 0; i < r->answer_len && k + 4 < n && i < 120; i++) {
    char ch = r->answer[i];
    out[k++] = ch >= ' ' && ch <= '~' ? ch : '?';
  }
  if (r->answer_len > 120 && k + 4 < n)
    k += (size_t)snprintf(out + k, n - k, "...");
  out[k] = '\0';
}

static int is_tls(CURLcode rc)
{
  return rc == CURLE_PEER_FAILED_VERIFICATION || rc == CURLE_SSL_CONNECT_ERROR
    || rc == CURLE_SSL_CERTPROBLEM || rc == CURLE_SSL_CACERT_BADFILE
    || rc == CURLE_SSL_CIPHER || rc == CURLE_SSL_ISSUER_ERROR
    || rc == CURLE_SSL_INVALIDCERTSTATUS || rc == CURLE_SSL_PINNEDPUBKEYNOTMATCH;
}

/* Unreachable and TLSError: the request surely never left; Timeout and
 * BadAnswer: it may have reached the agent. */
static void judge_transfer(const agent *a, areq *r, double timeout)
{
  const char *why = r->errbuf[0] ? r->errbuf : curl_easy_strerror(r->rc);
  if (r->rc == CURLE_OPERATION_TIMEDOUT)
    fail(r, "Timeout", "the cluster agent at %s did not answer within %.1f s",
         r->url, timeout);
  else if (is_tls(r->rc))
    fail(r, "TLSError", "TLS with the cluster agent at %s failed, verified "
         "against the cluster CA %s: %s", r->url, a->ca_file, why);
  else if (r->rc == CURLE_WRITE_ERROR && r->over)
    fail(r, "BadAnswer", "the cluster agent at %s answered more than %zu "
         "bytes", r->url, ANSWER_MAX);
  else if (r->rc == CURLE_COULDNT_CONNECT || r->rc == CURLE_COULDNT_RESOLVE_HOST)
    fail(r, "Unreachable", "cannot reach the cluster agent at %s: %s",
         r->url, why);
  else
    fail(r, "BadAnswer", "the connection to the cluster agent at %s ended "
         "without an answer: %s", r->url, why);
}

/* An answer: 200 {"result": "ok"}, or the agent's {"error": ...}. */
static void judge_answer(areq *r)
{
  char snip[160];
  json_error_t jerr;
  json_t *j = json_loadb(r->answer ? r->answer : "", r->answer_len, 0, &jerr);
  json_t *res = json_is_object(j) ? json_object_get(j, "result") : NULL;
  json_t *err = json_is_object(j) ? json_object_get(j, "error") : NULL;
  snippet(r, snip, sizeof snip);
  if (r->status == 200 && json_is_string(res)
      && strcmp(json_string_value(res), "ok") == 0)
    r->reason = NULL;
  else if (r->status != 200 && json_is_string(err))
    fail(r, "AgentError", "the cluster agent refused (HTTP %ld): %.400s",
         r->status, json_string_value(err));
  else
    fail(r, "BadAnswer", "the cluster agent at %s answered HTTP %ld with "
         "something that is not {\"result\": \"ok\"}: %s", r->url, r->status,
         snip[0] ? snip : "(nothing)");
  json_decref(j);
}

/* {ok=true} or {ok=false, error={code=, reason=, message=, node=,
 * address=}} */
static void push_result(lua_State *L, const areq *r)
{
  lua_createtable(L, 0, 2);
  lua_pushboolean(L, r->reason == NULL);
  lua_setfield(L, -2, "ok");
  if (!r->reason)
    return;
  lua_createtable(L, 0, 5);
  lua_pushinteger(L, strcmp(r->reason, "AgentError") == 0 ||
                  strcmp(r->reason, "BadAnswer") == 0 ? r->status : 0);
  lua_setfield(L, -2, "code");
  lua_pushstring(L, r->reason);
  lua_setfield(L, -2, "reason");
  lua_pushfstring(L, "node %s (%s): %s", r->node, r->address, r->why);
  lua_setfield(L, -2, "message");
  lua_pushstring(L, r->node);
  lua_setfield(L, -2, "node");
  lua_pushstring(L, r->address);
  lua_setfield(L, -2, "address");
  lua_setfield(L, -2, "error");
}

/* ---- Lua ---- */

static agent *checkagent(lua_State *L)
{
  agent *a = luaL_checkudata(L, 1, AGENT_MT);
  luaL_argcheck(L, !a->closed, 1, "the agent client is closed");
  return a;
}

/* reqs[i] -> r; two requests to one address are refused. */
static void read_req(lua_State *L, agent *a, areq *reqs, size_t i)
{
  areq *r = &reqs[i];
  if (lua_geti(L, 2, (lua_Integer)i + 1) != LUA_TTABLE)
    luaL_error(L, "bad argument #1 to 'configure' (request %d: a table "
               "expected)", (int)i + 1);
  lua_getfield(L, -1, "node");
  lua_getfield(L, -2, "address");
  r->node = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : NULL;
  r->address = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
  if (!r->node || !r->address || lua_getfield(L, -3, "body") != LUA_TTABLE)
    luaL_error(L, "bad argument #1 to 'configure' (request %d needs node, "
               "address and a body table)", (int)i + 1);
  if (lua_getfield(L, -1, "callback") != LUA_TNIL)
    luaL_error(L, "bad argument #1 to 'configure' (the body of node %s "
               "carries 'callback': the token is added here)", r->node);
  lua_pop(L, 1);
  lua_remove(L, -2);            /* address and node stay in reqs[i] */
  lua_remove(L, -2);
  lua_remove(L, -2);
  for (size_t k = 0; k < i; k++)
    if (strcmp(reqs[k].address, r->address) == 0) {
      lua_pop(L, 1);
      fail(r, "BadAddress", "node %s has the same address", reqs[k].node);
      return;
    }
  prepare(L, a, r);
}

/* The requests of one configure call, in a to-be-closed userdata: a Lua
 * error half-way (a bad request) still wipes and frees them. */
typedef struct batch {
  areq *reqs;
  size_t n;
} batch;

static int batch_close(lua_State *L)
{
  batch *b = luaL_checkudata(L, 1, BATCH_MT);
  for (size_t i = 0; b->reqs && i < b->n; i++) {
    uh_secret_drop(b->reqs[i].post, b->reqs[i].post_len);
    free(b->reqs[i].answer);
  }
  free(b->reqs);
  b->reqs = NULL;
  b->n = 0;
  return 0;
}

static areq *new_batch(lua_State *L, size_t n)
{
  batch *b = lua_newuserdatauv(L, sizeof *b, 0);
  memset(b, 0, sizeof *b);
  luaL_setmetatable(L, BATCH_MT);
  lua_toclose(L, -1);
  if (!(b->reqs = calloc(n ? n : 1, sizeof *b->reqs)))
    luaL_error(L, "out of memory");
  b->n = n;
  return b->reqs;
}

static int curl_ready(void)
{
  static int done;
  if (!done)
    done = curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK;
  return done;
}

static int agent_configure(lua_State *L)
{
  agent *a = checkagent(L);
  size_t n;
  double timeout = luaL_checknumber(L, 3);
  struct curl_slist *hs = NULL;
  areq *reqs;
  luaL_checktype(L, 2, LUA_TTABLE);
  n = luaL_len(L, 2);
  luaL_argcheck(L, n <= REQS_MAX, 2, "too many requests");
  luaL_argcheck(L, timeout > 0, 3, "timeout must be positive");
  lua_settop(L, 3);
  if (!curl_ready() || (!a->multi && !(a->multi = curl_multi_init())))
    return luaL_error(L, "libcurl initialisation failed");
  reqs = new_batch(L, n);
  for (size_t i = 0; i < n; i++)
    read_req(L, a, reqs, i);
  hs = curl_slist_append(hs, "Content-Type: application/json");
  hs = hs ? curl_slist_append(hs, "Expect:") : NULL;
  for (size_t i = 0; i < n; i++)
    if (!reqs[i].reason && !hs)
      fail(&reqs[i], "Unreachable", "out of memory");
    else if (!reqs[i].reason)
      start(a, &reqs[i], hs, (long)(timeout * 1000) + 1);
  run_all(a, reqs, n);
  curl_slist_free_all(hs);
  lua_createtable(L, (int)n, 0);
  for (size_t i = 0; i < n; i++) {
    areq *r = &reqs[i];
    if (!r->reason && r->h)
      r->rc != CURLE_OK ? judge_transfer(a, r, timeout) : judge_answer(r);
    push_result(L, r);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  return 1;                     /* the batch is closed on the way out */
}

static int agent_close(lua_State *L)
{
  agent *a = luaL_checkudata(L, 1, AGENT_MT);
  if (a->closed)
    return 0;
  a->closed = 1;
  for (size_t i = 0; i < a->nconns; i++)
    curl_easy_cleanup(a->conns[i].h);
  if (a->multi)
    curl_multi_cleanup(a->multi);
  free(a->conns);
  free(a->legacy);
  free(a->ca);
  uh_arena_free(&a->arena);
  memset(a, 0, sizeof *a);
  a->closed = 1;
  return 0;
}

static int agent_tostring(lua_State *L)
{
  agent *a = luaL_checkudata(L, 1, AGENT_MT);
  lua_pushfstring(L, "cluster agent client (%s)", a->closed ? "closed" :
                  a->ca_file);
  return 1;
}

static int agent_open(lua_State *L)
{
  const char *snap;
  agent *a;
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_getfield(L, 1, "snap_data");
  snap = lua_tostring(L, -1);
  luaL_argcheck(L, snap && *snap, 1, "snap_data (a folder) expected");
  a = lua_newuserdatauv(L, sizeof *a, 0);
  memset(a, 0, sizeof *a);
  luaL_setmetatable(L, AGENT_MT);
  load_tokens(a, snap);
  load_ca(a, snap);
  return 1;
}

static const luaL_Reg agent_methods[] = {
  { "__close", agent_close },
  { "__gc", agent_close },
  { "__tostring", agent_tostring },
  { "close", agent_close },
  { "configure", agent_configure },
  { NULL, NULL }
};

static const luaL_Reg agent_funcs[] = {
  { "open", agent_open },
  { NULL, NULL }
};

int luaopen_uphook_agent(lua_State *L)
{
  uh_pushcloser(L, BATCH_MT, batch_close);
  lua_pop(L, 1);
  uh_newclass(L, AGENT_MT, agent_methods);
  luaL_newlib(L, agent_funcs);
  return 1;
}

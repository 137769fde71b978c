/* The Kubernetes client's insides that host/kube.c (requests, the
 * client) and host/kube_watch.c (watches) share.  Not an API: the family
 * is uphook.c.kube (host/kube.h). */
#ifndef UH_KUBE_CLIENT_H
#define UH_KUBE_CLIENT_H
#include <curl/curl.h>
#include <lua.h>
#include "curl_tick.h"
#include "kubeconfig.h"

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

#define POOL 8                  /* most requests in flight (request_many) */
#define MANY_MAX 256            /* requests in one request_many */

typedef struct pslot {           /* one transfer of request_many */
  CURL *h;
  buf body;
  struct curl_slist *hs;
  char errbuf[CURL_ERROR_SIZE];
  int busy;
} pslot;

typedef struct client {
  uh_kubeconfig kc;
  CURL *h;                      /* requests */
  CURL *w;                      /* watches */
  buf body;
  char errbuf[CURL_ERROR_SIZE];
  CURLM *m;                     /* request_many: its connections stay open */
  CURLM *wm;                    /* a wait's transfer, with its tick */
  pslot pool[POOL];
  int closed;
} client;

typedef struct req {
  const char *method, *path, *body, *ctype, *accept;
  size_t blen;
  uh_lua_tick *tick;            /* a polled request: one try, ticking */
} req;

int buf_add(buf *b, const char *p, size_t n);
client *checkclient(lua_State *L);
CURL *handle(client *c, CURL **slot);
int push_neterr(lua_State *L, client *c, const req *r, CURLcode rc,
                       CURL *h, double timeout);
CURLcode run_transfer(client *c, CURL *h, uh_lua_tick *tick);

/* client:watch(path, on_line, timeout) (host/kube_watch.c) */
int client_watch(lua_State *L);

#endif

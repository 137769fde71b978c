/* Verified HTTP transfers over libcurl (module uphook.c.http).
 *
 * The engine checks a hook's permissions and passes the resulting allow
 * lists in; this file enforces them on the first URL and on every
 * redirect target (libcurl's protocol options do not restrict hosts).
 * The helpers below are shared with the Kubernetes REST client.
 */
#ifndef UH_HTTP_H
#define UH_HTTP_H
#include <stddef.h>
#include <curl/curl.h>
#include "luax.h"

#define UH_HTTP_MAXHOSTS 64
#define UH_HTTP_MAXREDIRS 5
#define UH_HTTP_URLMAX 4096

/* Hosts a transfer may reach.  Entries are "host" or "host:port",
 * compared without case.  https is allowed to hosts in either list,
 * plain http only to hosts in `http`. */
typedef struct uh_allow {
  const char *https[UH_HTTP_MAXHOSTS];
  size_t nhttps;
  const char *http[UH_HTTP_MAXHOSTS];
  size_t nhttp;
} uh_allow;

/* The URL permission rule, in its one home (host/http_allow.c).
 * UH_OK when url's scheme and host pass the allow lists; *plain is set
 * to 1 when plain http is allowed for its host.  Otherwise UH_EDENIED
 * (or UH_EINVAL for an unparsable URL) with the reason in err and, when
 * declaring a permission would allow it, that permission in need
 * ("net:<host>" or "net:http://<host>"; need may be NULL). */
uh_err uh_http_allowed(const uh_allow *a, const char *url, int *plain,
                       char *need, size_t needlen, char *err, size_t errlen);

/* Read the host list t[key] of the table at idx into list (the strings
 * stay owned by the table).  Entries are list values or keys set to
 * true.  Raises on a bad type or more than UH_HTTP_MAXHOSTS. */
void uh_http_opt_hosts(lua_State *L, int idx, const char *key,
                       const char **list, size_t *n);

/* Lua: http.allowed(url, {hosts=, http_hosts=}) -> true, plain
 * | false, reason, permission-or-nil. */
int http_allowed(lua_State *L);

/* The process's one easy handle, curl_easy_reset() and set to the safe
 * defaults: TLS verification on (system CAs or ca_file), TLS >= 1.2,
 * https only, no redirects followed, no Accept-Encoding, connect and
 * low-speed timeouts, whole transfer bounded by deadline (monotonic
 * seconds, uh_monotonic(); 0: none).  Proxies come from the environment.
 * NULL when libcurl fails. */
CURL *uh_http_handle(const char *ca_file, double deadline);

/* Find the sha256 of `name` in a GNU ("hex  name", "hex *name") or BSD
 * ("SHA256 (name) = hex") checksum file; a file holding one bare sum
 * also answers.  Pure: reads only text[0..len).  out gets lowercase hex.
 * UH_ENOENT: no entry; UH_EPARSE: conflicting entries for the name. */
uh_err uh_checksum_for(const char *text, size_t len, const char *name,
                       size_t namelen, char out[65]);

/* Progress of one transfer (host/http_progress.c), throttled: a bar with
 * bytes, rate and ETA on stderr, or JSON lines on stdout
 * {"event":"progress","url":...,"bytes":n,"total":n|null}. */
enum { UH_PROGRESS_NONE, UH_PROGRESS_TTY, UH_PROGRESS_JSON };
typedef struct uh_progress {
  int mode;
  const char *url;
  double t0, tick;
  int drawn;
} uh_progress;
void uh_progress_start(uh_progress *p, int mode, const char *url);
void uh_progress_update(uh_progress *p, long long total, long long now);
/* Final state: the whole size when ok, and the bar's closing newline. */
void uh_progress_end(uh_progress *p, int ok, unsigned long long bytes);

/* Where a hook's transfer may connect (host/http_addr.c).  uh_net_check
 * sets libcurl's open-socket callback on c for one request to url: a
 * loopback, link-local or metadata address is refused (nc->refused says
 * why) unless url's host is that address literally or it is the
 * environment's proxy.  Hook transfers only. */
typedef struct uh_netcheck {
  char host[UH_HTTP_URLMAX + 1];
  char refused[UH_HTTP_URLMAX + 256];
  struct curl_slist *resolve;   /* test-only: UPHOOK_TEST_RESOLVE */
} uh_netcheck;
void uh_net_check(CURL *c, uh_netcheck *nc, const char *url);
/* After the request: free what uh_net_check allocated. */
void uh_net_done(uh_netcheck *nc);
/* "loopback", "link-local...", ... or NULL when the address is allowed. */
struct sockaddr;
const char *uh_net_refused_class(const struct sockaddr *sa);
/* Lua: http.connects() -> sockets opened, sockets refused (test counters) */
int http_connects(lua_State *L);

/* The download cache is verified each time it is used (host/http_sum.c):
 * 1 when path is a regular file whose sha256 is hex (st filled); 0 when
 * it is absent, or was not and has been removed; -1 on a read error. */
struct stat;
int uh_cache_verified(const char *path, const char *hex, struct stat *st);
/* Lua: http.cached(cache_dir, sha256) -> path | nil (the same check) */
int http_cached(lua_State *L);

int luaopen_uphook_http(lua_State *L);

#endif

/* Verified HTTP transfers over libcurl: download into the sha256 cache,
 * fetch into memory, HEAD.  Checksum files are parsed in http_sum.c,
 * progress is drawn by http_progress.c.
 *
 * One transfer loop (xfer_run) serves download, fetch and head.
 * FOLLOWLOCATION is off: every redirect target is checked here against
 * the allow lists before it is requested.  Bodies go to a sink that
 * hashes with EVP and enforces max_bytes in the write callback (libcurl's
 * CURLOPT_MAXFILESIZE only holds when Content-Length is sent).  download
 * and store share the sink and the cache install (cache_fill); only the
 * source of the bytes differs.
 */
#include "http.h"
#include "curl_lazy.h"
#include "osutil.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include <openssl/evp.h>

#define CONNECT_TIMEOUT_MS 30000L
#define LOW_SPEED_LIMIT 1024L        /* bytes per second ... */
#define LOW_SPEED_TIME 30L           /* ... for this many seconds */
#define REDIRECT_BODY_MAX 65536      /* body of a 3xx we skip */
#define FETCH_MAX ((uint64_t)16 << 20)
#define DOWNLOAD_MAX ((uint64_t)2 << 30)
#define COPY_CHUNK (256 * 1024)
#define WRITEBACK_STEP ((uint64_t)8 << 20)
#define MSG_MAX (3 * PATH_MAX)

/* ---------------------------------------------------------------- */
/* The shared handle                                                 */

static CURL *g_easy;

CURL *uh_http_handle(const char *ca_file, double deadline)
{
  long timeout_ms = 0;
  static int inited;
  CURL *c;
  if (!inited) {
    if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
      return NULL;
    inited = 1;
  }
  if (!g_easy && !(g_easy = curl_easy_init()))
    return NULL;
  c = g_easy;
  curl_easy_reset(c);
  if (uh_curl_transport(c) != CURLE_OK)
    return NULL;
  if (ca_file)
    curl_easy_setopt(c, CURLOPT_CAINFO, ca_file);
  curl_easy_setopt(c, CURLOPT_MAXREDIRS, (long)UH_HTTP_MAXREDIRS);
  /* The time left is read here, once libcurl is loaded: the first
   * request loads it (curl_lazy.c), slow under a loaded valgrind, and a
   * transfer must still end by the deadline. */
  if (deadline > 0 && (timeout_ms = (long)((deadline - uh_monotonic())
                                           * 1000)) <= 0)
    timeout_ms = 1;
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS,
                   timeout_ms > 0 && timeout_ms < CONNECT_TIMEOUT_MS ?
                   timeout_ms : CONNECT_TIMEOUT_MS);
  if (timeout_ms > 0)
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout_ms);
  curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, LOW_SPEED_LIMIT);
  curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, LOW_SPEED_TIME);
  curl_easy_setopt(c, CURLOPT_BUFFERSIZE, (long)CURL_MAX_READ_SIZE);
  /* CURLOPT_ACCEPT_ENCODING stays unset: bodies are never decoded. */
  return c;
}

/* ---------------------------------------------------------------- */
/* Sinks: hash what arrives, cap it, keep it in a file or in memory  */

typedef struct sink {
  EVP_MD_CTX *md;
  int fd;                       /* temp file, or -1 for memory */
  char tmp[PATH_MAX];           /* temp path while it exists, else "" */
  char *buf;                    /* memory sink */
  size_t len, cap;
  uint64_t bytes, max;
  uint64_t flushed;             /* writeback started up to here */
  uh_err err;                   /* why sink_write refused */
  int errnum;
  long status;                  /* the last HTTP status, for errors */
} sink;

static int mkdirs(char *path)
{
  for (char *p = path + 1; *p; p++) {
    if (*p != '/')
      continue;
    *p = '\0';
    int r = mkdir(path, 0700);
    *p = '/';
    if (r != 0 && errno != EEXIST)
      return -1;
  }
  return mkdir(path, 0700) != 0 && errno != EEXIST ? -1 : 0;
}

/* cache_dir NULL: a memory sink. */
static uh_err sink_open(sink *s, const char *cache_dir, uint64_t max,
                        char *msg, size_t msglen)
{
  char dir[PATH_MAX];
  memset(s, 0, sizeof *s);
  s->fd = -1;
  s->max = max;
  if (!(s->md = EVP_MD_CTX_new()) ||
      !EVP_DigestInit_ex(s->md, EVP_sha256(), NULL)) {
    snprintf(msg, msglen, "sha256: EVP initialisation failed");
    return UH_ENOMEM;
  }
  if (!cache_dir)
    return UH_OK;
  if ((size_t)snprintf(dir, sizeof dir, "%s/sha256", cache_dir) >= sizeof dir
      || snprintf(s->tmp, sizeof s->tmp, "%s/tmp/dl.XXXXXX", cache_dir)
         >= (int)sizeof s->tmp) {
    snprintf(msg, msglen, "cache directory path too long: %s", cache_dir);
    s->tmp[0] = '\0';
    return UH_EINVAL;
  }
  if (mkdirs(dir) != 0)
    goto fail;
  snprintf(dir, sizeof dir, "%s/tmp", cache_dir);
  if (mkdirs(dir) != 0 || (s->fd = mkostemp(s->tmp, O_CLOEXEC)) < 0)
    goto fail;
  return UH_OK;
fail:
  snprintf(msg, msglen, "cache %s: %s", cache_dir, strerror(errno));
  s->tmp[0] = '\0';
  return UH_EIO;
}

static int sink_fail(sink *s, uh_err e, int errnum)
{
  s->err = e;
  s->errnum = errnum;
  return -1;
}

static int sink_memput(sink *s, const void *p, size_t n)
{
  if (s->len + n > s->cap) {
    size_t cap = s->cap ? s->cap : 65536;
    while (cap < s->len + n)
      cap *= 2;
    char *nb = realloc(s->buf, cap);
    if (!nb)
      return sink_fail(s, UH_ENOMEM, ENOMEM);
    s->buf = nb;
    s->cap = cap;
  }
  memcpy(s->buf + s->len, p, n);
  s->len += n;
  return 0;
}

/* 0, or -1 with s->err set (limit, I/O, memory). */
static int sink_write(sink *s, const void *p, size_t n)
{
  if (n > s->max - s->bytes)
    return sink_fail(s, UH_ELIMIT, 0);
  s->bytes += n;
  if (!EVP_DigestUpdate(s->md, p, n))
    return sink_fail(s, UH_ENOMEM, 0);
  if (s->fd < 0)
    return sink_memput(s, p, n);
  if (uh_write_all(s->fd, p, n) < 0)
    return sink_fail(s, UH_EIO, errno);
  /* Start writeback while the transfer goes on, so that the final
   * fsync does not wait for the whole file. */
  if (s->bytes - s->flushed >= WRITEBACK_STEP) {
    sync_file_range(s->fd, (off_t)s->flushed, (off_t)(s->bytes - s->flushed),
                    SYNC_FILE_RANGE_WRITE);
    s->flushed = s->bytes;
  }
  return 0;
}

static void sink_hex(sink *s, char hex[65])
{
  unsigned char d[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  static const char digits[] = "0123456789abcdef";
  EVP_DigestFinal_ex(s->md, d, &n);
  for (unsigned int i = 0; i < 32; i++) {
    hex[2 * i] = digits[d[i] >> 4];
    hex[2 * i + 1] = digits[d[i] & 15];
  }
  hex[64] = '\0';
}

/* Release everything; a temp file still there is removed. */
static void sink_close(sink *s)
{
  if (s->fd >= 0)
    close(s->fd);
  if (s->tmp[0])
    unlink(s->tmp);
  EVP_MD_CTX_free(s->md);
  free(s->buf);
  memset(s, 0, sizeof *s);
  s->fd = -1;
}

static void sink_describe(const sink *s, const char *url, char *msg,
                          size_t msglen)
{
  if (s->err == UH_ELIMIT)
    snprintf(msg, msglen, "%s: body exceeds max_bytes (%llu)", url,
             (unsigned long long)s->max);
  else if (s->err == UH_EIO)
    snprintf(msg, msglen, "%s: writing %s: %s", url, s->tmp,
             strerror(s->errnum));
  else
    snprintf(msg, msglen, "%s: %s", url, uh_strerror(s->err));
}

/* ---------------------------------------------------------------- */
/* Transfers                                                         */

typedef struct xfer {
  CURL *c;
  const char *url0;             /* as asked, for messages */
  const uh_allow *allow;
  const char *ca_file;
  double deadline;              /* monotonic seconds; 0: none */
  int nobody;                   /* HEAD */
  sink *out;                    /* NULL: bodies are discarded */
  uh_progress bar;
  long status;
  size_t skipped;               /* body bytes of a 3xx, dropped */
  char errbuf[CURL_ERROR_SIZE];
  uh_netcheck net;              /* where this request may connect */
} xfer;

static size_t on_write(char *p, size_t size, size_t n, void *ud)
{
  xfer *x = ud;
  size_t len = size * n;
  if (!x->status)
    curl_easy_getinfo(x->c, CURLINFO_RESPONSE_CODE, &x->status);
  if (x->status >= 400)
    return 0;                   /* stop: reported as an HTTP error */
  if (x->status >= 300 || !x->out) {
    x->skipped += len;
    return x->skipped > REDIRECT_BODY_MAX ? 0 : len;
  }
  return sink_write(x->out, p, len) == 0 ? len : 0;
}

static int on_progress(void *ud, curl_off_t dltotal, curl_off_t dlnow,
                       curl_off_t ultotal, curl_off_t ulnow)
{
  xfer *x = ud;
  (void)ultotal;
  (void)ulnow;
  if (x->status < 300 && dlnow > 0)
    uh_progress_update(&x->bar, dltotal, dlnow);
  return 0;
}

/* One request to url, no redirect followed.  UH_OK also for 3xx/4xx:
 * the caller looks at x->status. */
static uh_err xfer_once(xfer *x, const char *url, int plain, char *msg,
                        size_t msglen)
{
  CURLcode rc;
  if (x->deadline > 0 && uh_monotonic() >= x->deadline) {
    snprintf(msg, msglen, "%s: deadline passed", url);
    return UH_ETIMEOUT;
  }
  if (!(x->c = uh_http_handle(x->ca_file, x->deadline))) {
    snprintf(msg, msglen, "%s: libcurl initialisation failed", url);
    return UH_ENOMEM;
  }
  curl_easy_setopt(x->c, CURLOPT_URL, url);
  if (uh_curl_protocols(x->c, plain ? "http,https" : "https",
                        plain ? "http,https" : "https") != CURLE_OK) {
    snprintf(msg, msglen, "%s: libcurl cannot restrict the protocols", url);
    return UH_EINVAL;
  }
  curl_easy_setopt(x->c, CURLOPT_ERRORBUFFER, x->errbuf);
  uh_net_check(x->c, &x->net, url);
  curl_easy_setopt(x->c, CURLOPT_WRITEFUNCTION, on_write);
  curl_easy_setopt(x->c, CURLOPT_WRITEDATA, x);
  if (x->nobody)
    curl_easy_setopt(x->c, CURLOPT_NOBODY, 1L);
  if (x->out && x->out->max < (uint64_t)INT64_MAX)
    curl_easy_setopt(x->c, CURLOPT_MAXFILESIZE_LARGE,
                     (curl_off_t)(x->out->max - x->out->bytes));
  if (x->bar.mode != UH_PROGRESS_NONE) {
    curl_easy_setopt(x->c, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(x->c, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(x->c, CURLOPT_XFERINFODATA, x);
  }
  x->errbuf[0] = '\0';
  x->status = 0;
  x->skipped = 0;
  rc = curl_easy_perform(x->c);
  uh_net_done(&x->net);
  curl_easy_getinfo(x->c, CURLINFO_RESPONSE_CODE, &x->status);
  if (x->net.refused[0]) {
    snprintf(msg, msglen, "%s: %s", url, x->net.refused);
    return UH_EDENIED;
  }
  if (rc == CURLE_OK || (x->status >= 300 && (rc == CURLE_FILESIZE_EXCEEDED ||
      (rc == CURLE_WRITE_ERROR && x->skipped <= REDIRECT_BODY_MAX))))
    return UH_OK;               /* the caller reports the status */
  if (rc == CURLE_WRITE_ERROR && x->out && x->out->err) {
    sink_describe(x->out, url, msg, msglen);
    return x->out->err;
  }
  if (rc == CURLE_FILESIZE_EXCEEDED && x->out) {
    x->out->err = UH_ELIMIT;
    sink_describe(x->out, url, msg, msglen);
    return UH_ELIMIT;
  }
  snprintf(msg, msglen, "%s: %s", url,
           x->errbuf[0] ? x->errbuf : curl_easy_strerror(rc));
  return rc == CURLE_OPERATION_TIMEDOUT ? UH_ETIMEOUT : UH_ENET;
}

static void redirected_from(const xfer *x, int hops, char *msg, size_t msglen)
{
  size_t n = strlen(msg);
  if (hops > 0 && n < msglen)
    snprintf(msg + n, msglen - n, " (redirected from %s)", x->url0);
}

/* Follow redirects by hand, checking each target.  On UH_OK x->status
 * is the final status (< 400 unless x->nobody). */
static uh_err xfer_follow(xfer *x, char *cur, char *msg, size_t msglen)
{
  char why[512], *next = NULL;
  int plain, hop;
  uh_err rc;
  if (uh_http_allowed(x->allow, cur, &plain, NULL, 0, why, sizeof why)
      != UH_OK) {
    snprintf(msg, msglen, "%s: %s", cur, why);
    return UH_EDENIED;
  }
  for (hop = 0;; hop++) {
    if ((rc = xfer_once(x, cur, plain, msg, msglen)) != UH_OK) {
      redirected_from(x, hop, msg, msglen);
      return rc;
    }
    if (x->status < 300 || x->status >= 400)
      break;
    if (curl_easy_getinfo(x->c, CURLINFO_REDIRECT_URL, &next) || !next) {
      snprintf(msg, msglen, "%s: HTTP %ld without a Location", cur, x->status);
      return UH_EHTTP;
    }
    if (hop == UH_HTTP_MAXREDIRS) {
      snprintf(msg, msglen, "%s: more than %d redirects (last from %s to %s)",
               x->url0, UH_HTTP_MAXREDIRS, cur, next);
      return UH_EDENIED;
    }
    if (uh_http_allowed(x->allow, next, &plain, NULL, 0, why,
                        sizeof why) != UH_OK) {
      snprintf(msg, msglen, "redirect from %s to %s refused: %s", cur, next,
               why);
      return UH_EDENIED;
    }
    snprintf(cur, UH_HTTP_URLMAX + 1, "%s", next);
  }
  if (x->status >= 400 && !x->nobody) {
    snprintf(msg, msglen, "%s: HTTP %ld", cur, x->status);
    redirected_from(x, hop, msg, msglen);
    return UH_EHTTP;
  }
  return UH_OK;
}

/* The whole transfer of x->url0 with its deadline and progress. */
static uh_err xfer_run(xfer *x, double deadline_s, char *msg, size_t msglen)
{
  char cur[UH_HTTP_URLMAX + 1];
  uh_err rc;
  x->deadline = deadline_s > 0 ? uh_monotonic() + deadline_s : 0;
  if (deadline_s < 0) {
    snprintf(msg, msglen, "%s: deadline passed", x->url0);
    return UH_ETIMEOUT;
  }
  if (strlen(x->url0) > UH_HTTP_URLMAX) {
    snprintf(msg, msglen, "%.200s...: URL too long", x->url0);
    return UH_EINVAL;
  }
  snprintf(cur, sizeof cur, "%s", x->url0);
  rc = xfer_follow(x, cur, msg, msglen);
  uh_progress_end(&x->bar, rc == UH_OK && x->out,
                  x->out ? x->out->bytes : 0);
  return rc;
}

/* ---------------------------------------------------------------- */
/* The sha256 cache, shared by download and store                    */

typedef struct opts {
  const char *url, *sha256, *cache_dir, *ca_file, *body, *file;
  size_t bodylen;
  uint64_t max;
  double deadline;              /* seconds; 0: none, < 0: passed */
  int progress;
  uh_allow allow;
} opts;

/* Fills the open sink s with the bytes; on failure writes msg. */
typedef uh_err (*feed_fn)(const opts *o, sink *s, char *msg, size_t msglen);

static void push_result(lua_State *L, const char *path, const char *hex,
                        uint64_t bytes, int cached)
{
  lua_createtable(L, 0, 4);
  lua_pushstring(L, path);
  lua_setfield(L, -2, "path");
  lua_pushstring(L, hex);
  lua_setfield(L, -2, "sha256");
  lua_pushinteger(L, (lua_Integer)bytes);
  lua_setfield(L, -2, "bytes");
  lua_pushboolean(L, cached);
  lua_setfield(L, -2, "cached");
}

/* nil, message, reason, HTTP status (for an HTTP error only): the
 * parts of the error value a hook sees (lua/core/hookerror.lua). */
static int push_fail(lua_State *L, const char *msg, uh_err rc, long status)
{
  static const char *const reasons[UH_ELAST] = {
    [UH_EHTTP] = "HTTPError", [UH_ENET] = "NetworkError",
    [UH_ETIMEOUT] = "Timeout", [UH_ECHECKSUM] = "ChecksumMismatch",
    [UH_ELIMIT] = "TooLarge", [UH_EDENIED] = "Forbidden",
    [UH_EIO] = "IOError", [UH_ENOENT] = "IOError", [UH_ENOMEM] = "IOError",
  };
  luaL_pushfail(L);
  lua_pushstring(L, msg);
  lua_pushstring(L, (unsigned)rc < UH_ELAST && reasons[rc] ? reasons[rc]
                    : "NetworkError");
  if (rc == UH_EHTTP && status > 0)
    lua_pushinteger(L, status);
  else
    lua_pushnil(L);
  return 4;
}

static int sync_dir(const char *dir)
{
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), r;
  if (fd < 0)
    return -1;
  r = fsync(fd);
  close(fd);
  return r;
}

/* Verify, fsync and rename the temp file to sha256/<hex>. */
static uh_err cache_commit(const opts *o, sink *s, char *path, size_t plen,
                           char *msg, size_t msglen)
{
  char got[65], dir[PATH_MAX];
  sink_hex(s, got);
  if (strcmp(got, o->sha256) != 0) {
    snprintf(msg, msglen, "sha256 mismatch for %s: expected %s, got %s",
             o->url, o->sha256, got);
    return UH_ECHECKSUM;
  }
  snprintf(path, plen, "%s/sha256/%s", o->cache_dir, got);
  if (fsync(s->fd) != 0 || close(s->fd) != 0) {
    s->fd = -1;
    snprintf(msg, msglen, "%s: writing %s: %s", o->url, s->tmp,
             strerror(errno));
    return UH_EIO;
  }
  s->fd = -1;
  if (rename(s->tmp, path) != 0) {
    snprintf(msg, msglen, "%s: rename to %s: %s", o->url, path,
             strerror(errno));
    return UH_EIO;
  }
  s->tmp[0] = '\0';
  snprintf(dir, sizeof dir, "%s/sha256", o->cache_dir);
  sync_dir(dir);
  return UH_OK;
}

static int cache_fill(lua_State *L, const opts *o, feed_fn feed)
{
  char msg[MSG_MAX], path[PATH_MAX];
  struct stat st;
  sink s;
  uint64_t bytes;
  uh_err rc;
  if ((size_t)snprintf(path, sizeof path, "%s/sha256/%s", o->cache_dir,
                       o->sha256) >= sizeof path)
    return luaL_error(L, "cache_dir too long");
  if (uh_cache_verified(path, o->sha256, &st) == 1) {
    push_result(L, path, o->sha256, (uint64_t)st.st_size, 1);
    return 1;
  }
  rc = sink_open(&s, o->cache_dir, o->max, msg, sizeof msg);
  if (rc == UH_OK)
    rc = feed(o, &s, msg, sizeof msg);
  if (rc == UH_OK)
    rc = cache_commit(o, &s, path, sizeof path, msg, sizeof msg);
  bytes = s.bytes;
  sink_close(&s);
  if (rc != UH_OK)
    return push_fail(L, msg, rc, s.status);
  push_result(L, path, o->sha256, bytes, 0);
  return 1;
}

/* ---------------------------------------------------------------- */
/* Options                                                           */

static void check_keys(lua_State *L, const char *const *keys)
{
  lua_pushnil(L);
  while (lua_next(L, 1)) {
    size_t i = 0;
    lua_pop(L, 1);
    if (lua_type(L, -1) != LUA_TSTRING)
      luaL_error(L, "option names must be strings");
    while (keys[i] && strcmp(keys[i], lua_tostring(L, -1)) != 0)
      i++;
    if (!keys[i])
      luaL_error(L, "unknown option '%s'", lua_tostring(L, -1));
  }
}

/* The string stays alive: the option table (argument 1) holds it. */
static const char *opt_string(lua_State *L, const char *key, size_t *len)
{
  const char *s = NULL;
  int t = lua_getfield(L, 1, key);
  if (t == LUA_TSTRING)
    s = lua_tolstring(L, -1, len);
  else if (t != LUA_TNIL)
    luaL_error(L, "option '%s' must be a string", key);
  lua_pop(L, 1);
  return s;
}

static void opt_numbers(lua_State *L, opts *o, uint64_t defmax)
{
  int isnum = 0;
  o->max = defmax;
  if (lua_getfield(L, 1, "max_bytes") != LUA_TNIL) {
    lua_Integer m = lua_tointegerx(L, -1, &isnum);
    if (!isnum || m <= 0)
      luaL_error(L, "option 'max_bytes' must be a positive integer");
    o->max = (uint64_t)m;
  }
  if (lua_getfield(L, 1, "deadline") != LUA_TNIL) {
    lua_Number d = lua_tonumberx(L, -1, &isnum);
    if (!isnum || d != d)
      luaL_error(L, "option 'deadline' must be a number");
    o->deadline = d > 0 ? d : -1;
  }
  lua_pop(L, 2);
}

static void opts_read(lua_State *L, opts *o, const char *const *keys,
                      uint64_t defmax, char sum[65])
{
  const char *p;
  luaL_checktype(L, 1, LUA_TTABLE);
  check_keys(L, keys);
  memset(o, 0, sizeof *o);
  o->url = opt_string(L, "url", NULL);
  o->cache_dir = opt_string(L, "cache_dir", NULL);
  o->ca_file = opt_string(L, "ca_file", NULL);
  o->body = opt_string(L, "body", &o->bodylen);
  o->file = opt_string(L, "file", NULL);
  opt_numbers(L, o, defmax);
  uh_http_opt_hosts(L, 1, "hosts", o->allow.https, &o->allow.nhttps);
  uh_http_opt_hosts(L, 1, "http_hosts", o->allow.http, &o->allow.nhttp);
  if ((p = opt_string(L, "progress", NULL)) != NULL) {
    if (strcmp(p, "tty") != 0 && strcmp(p, "json") != 0)
      luaL_error(L, "option 'progress' must be \"tty\" or \"json\"");
    o->progress = p[0] == 't' ? UH_PROGRESS_TTY : UH_PROGRESS_JSON;
  }
  if ((p = opt_string(L, "sha256", NULL)) != NULL) {
    if (strspn(p, "0123456789abcdefABCDEF") != 64 || p[64])
      luaL_error(L, "option 'sha256' must be 64 hex digits");
    for (int i = 0; i < 65; i++)
      sum[i] = p[i] >= 'A' && p[i] <= 'F' ? (char)(p[i] - 'A' + 'a') : p[i];
    o->sha256 = sum;
  }
  if (o->cache_dir && o->cache_dir[0] != '/')
    luaL_error(L, "option 'cache_dir' must be an absolute path");
}

static void opts_need(lua_State *L, const char *v, const char *key)
{
  if (!v)
    luaL_error(L, "option '%s' is required", key);
}

/* ---------------------------------------------------------------- */
/* Lua functions                                                     */

static uh_err feed_http(const opts *o, sink *s, char *msg, size_t msglen)
{
  xfer x;
  uh_err rc;
  memset(&x, 0, sizeof x);
  x.url0 = o->url;
  x.allow = &o->allow;
  x.ca_file = o->ca_file;
  x.out = s;
  uh_progress_start(&x.bar, o->progress, o->url);
  rc = xfer_run(&x, o->deadline, msg, msglen);
  s->status = x.status;
  return rc;
}

static uh_err feed_given(const opts *o, sink *s, char *msg, size_t msglen)
{
  char *buf;
  ssize_t n;
  int fd;
  if (o->body) {
    if (sink_write(s, o->body, o->bodylen) == 0)
      return UH_OK;
    sink_describe(s, o->url, msg, msglen);
    return s->err;
  }
  if ((fd = open(o->file, O_RDONLY | O_CLOEXEC)) < 0) {
    snprintf(msg, msglen, "%s: %s", o->file, strerror(errno));
    return UH_ENOENT;
  }
  if (!(buf = malloc(COPY_CHUNK))) {
    close(fd);
    snprintf(msg, msglen, "%s: out of memory", o->file);
    return UH_ENOMEM;
  }
  while ((n = read(fd, buf, COPY_CHUNK)) > 0 || (n < 0 && errno == EINTR))
    if (n > 0 && sink_write(s, buf, (size_t)n) != 0)
      break;
  if (n < 0)
    snprintf(msg, msglen, "%s: %s", o->file, strerror(errno));
  else if (n > 0)
    sink_describe(s, o->url, msg, msglen);
  free(buf);
  close(fd);
  return n < 0 ? UH_EIO : n > 0 ? s->err : UH_OK;
}

static int http_checksum_for(lua_State *L)
{
  size_t len, nlen;
  const char *text = luaL_checklstring(L, 1, &len);
  const char *name = luaL_checklstring(L, 2, &nlen);
  char hex[65];
  uh_err rc = uh_checksum_for(text, len, name, nlen, hex);
  if (rc == UH_OK) {
    lua_pushstring(L, hex);
    return 1;
  }
  luaL_pushfail(L);
  lua_pushfstring(L, rc == UH_EPARSE ?
                  "conflicting sha256 entries for %s in the checksum file" :
                  "no sha256 for %s in the checksum file", name);
  return 2;
}

static int http_download(lua_State *L)
{
  static const char *const keys[] = { "url", "sha256", "cache_dir",
    "max_bytes", "hosts", "http_hosts", "ca_file", "deadline", "progress",
    NULL };
  char sum[65];
  opts o;
  opts_read(L, &o, keys, DOWNLOAD_MAX, sum);
  opts_need(L, o.url, "url");
  opts_need(L, o.sha256, "sha256");
  opts_need(L, o.cache_dir, "cache_dir");
  return cache_fill(L, &o, feed_http);
}

static int http_fetch(lua_State *L)
{
  static const char *const keys[] = { "url", "max_bytes", "sha256", "hosts",
    "http_hosts", "ca_file", "deadline", "progress", NULL };
  char sum[65], got[65], msg[MSG_MAX];
  opts o;
  sink s;
  uh_err rc;
  opts_read(L, &o, keys, FETCH_MAX, sum);
  opts_need(L, o.url, "url");
  rc = sink_open(&s, NULL, o.max, msg, sizeof msg);
  if (rc == UH_OK)
    rc = feed_http(&o, &s, msg, sizeof msg);
  if (rc == UH_OK && o.sha256) {
    sink_hex(&s, got);
    if (strcmp(got, o.sha256) != 0) {
      snprintf(msg, sizeof msg, "sha256 mismatch for %s: expected %s, got %s",
               o.url, o.sha256, got);
      rc = UH_ECHECKSUM;
    }
  }
  if (rc == UH_OK)
    lua_pushlstring(L, s.buf ? s.buf : "", s.len);
  sink_close(&s);
  return rc == UH_OK ? 1 : push_fail(L, msg, rc, s.status);
}

static int http_head(lua_State *L)
{
  static const char *const keys[] = { "url", "hosts", "http_hosts",
    "ca_file", "deadline", NULL };
  char sum[65], msg[MSG_MAX];
  opts o;
  xfer x;
  uh_err rc;
  opts_read(L, &o, keys, 0, sum);
  opts_need(L, o.url, "url");
  memset(&x, 0, sizeof x);
  x.url0 = o.url;
  x.allow = &o.allow;
  x.ca_file = o.ca_file;
  x.nobody = 1;
  rc = xfer_run(&x, o.deadline, msg, sizeof msg);
  if (rc != UH_OK)
    return push_fail(L, msg, rc, x.status);
  lua_pushinteger(L, x.status);
  return 1;
}

static int http_store(lua_State *L)
{
  static const char *const keys[] = { "body", "file", "sha256", "cache_dir",
    "url", "max_bytes", NULL };
  char sum[65];
  opts o;
  opts_read(L, &o, keys, DOWNLOAD_MAX, sum);
  if (!o.body == !o.file)
    luaL_error(L, "store needs exactly one of options 'body' and 'file'");
  if (o.file && o.file[0] != '/')
    luaL_error(L, "option 'file' must be an absolute path");
  opts_need(L, o.sha256, "sha256");
  opts_need(L, o.cache_dir, "cache_dir");
  if (!o.url)
    o.url = o.file ? o.file : "(body)";
  return cache_fill(L, &o, feed_given);
}

static const luaL_Reg http_funcs[] = {
  { "allowed", http_allowed },
  { "cached", http_cached },
  { "checksum_for", http_checksum_for },
  { "connects", http_connects },
  { "download", http_download },
  { "fetch", http_fetch },
  { "head", http_head },
  { "store", http_store },
  { NULL, NULL }
};

int luaopen_uphook_http(lua_State *L)
{
  /* no libcurl yet: it is loaded by the first transfer (curl_lazy.c) */
  luaL_newlib(L, http_funcs);
  return 1;
}

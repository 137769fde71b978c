/* libcurl, loaded on first use.
 *
 * libcurl pulls in some thirty libraries (GnuTLS, Kerberos, LDAP, SASL,
 * p11-kit...) whose loading and constructors cost more than the whole of
 * `uphook version`, `uphook test` or an offline upgrade, none of which
 * makes a transfer.  So the binary does not link libcurl: these
 * definitions of the entry points uphook uses dlopen() it the first time
 * one is called and forward to it.  The prototypes are curl.h's own, so
 * the compiler checks them.
 *
 * curl_easy_setopt and curl_easy_getinfo are variadic with exactly one
 * argument whose type curl encodes in the option number (CURLOPTTYPE_*,
 * CURLINFO_TYPEMASK); they are forwarded by that type.
 *
 * The library may be older than the headers (host/curl_lazy.h): the
 * protocol restriction picks its options from curl_version_info(). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
/* our own definitions of the two variadic entry points, not curl.h's
 * type-checking macros */
#define CURL_DISABLE_TYPECHECK 1
/* CURLOPT_PROTOCOLS is deprecated since 7.85.0, and needed before it */
#define CURL_DISABLE_DEPRECATION 1
#include <curl/curl.h>
#include <string.h>
#include "curl_lazy.h"

#define SONAME "libcurl.so.4"

static struct {
  CURLcode (*global_init)(long);
  CURL *(*easy_init)(void);
  CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
  CURLcode (*easy_perform)(CURL *);
  void (*easy_cleanup)(CURL *);
  void (*easy_reset)(CURL *);
  CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
  const char *(*easy_strerror)(CURLcode);
  struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
  void (*slist_free_all)(struct curl_slist *);
  void (*free_)(void *);
  CURLU *(*url)(void);
  void (*url_cleanup)(CURLU *);
  CURLUcode (*url_set)(CURLU *, CURLUPart, const char *, unsigned int);
  CURLUcode (*url_get)(CURLU *, CURLUPart, char **, unsigned int);
  curl_version_info_data *(*version_info)(CURLversion);
  CURLM *(*multi_init)(void);
  CURLMcode (*multi_add)(CURLM *, CURL *);
  CURLMcode (*multi_remove)(CURLM *, CURL *);
  CURLMcode (*multi_perform)(CURLM *, int *);
  CURLMcode (*multi_poll)(CURLM *, struct curl_waitfd *, unsigned int, int,
                          int *);
  CURLMsg *(*multi_info_read)(CURLM *, int *);
  CURLMcode (*multi_cleanup)(CURLM *);
  const char *(*multi_strerror)(CURLMcode);
} f;

static pthread_once_t once = PTHREAD_ONCE_INIT;

#define SYM(field, name) \
  (*(void **)(&f.field) = dlsym(h, name)) == NULL

static void load(void)
{
  void *h = dlopen(SONAME, RTLD_NOW | RTLD_LOCAL);
  if (!h || SYM(global_init, "curl_global_init")
      || SYM(easy_init, "curl_easy_init")
      || SYM(easy_setopt, "curl_easy_setopt")
      || SYM(easy_perform, "curl_easy_perform")
      || SYM(easy_cleanup, "curl_easy_cleanup")
      || SYM(easy_reset, "curl_easy_reset")
      || SYM(easy_getinfo, "curl_easy_getinfo")
      || SYM(easy_strerror, "curl_easy_strerror")
      || SYM(slist_append, "curl_slist_append")
      || SYM(slist_free_all, "curl_slist_free_all")
      || SYM(free_, "curl_free")
      || SYM(url, "curl_url")
      || SYM(url_cleanup, "curl_url_cleanup")
      || SYM(url_set, "curl_url_set")
      || SYM(url_get, "curl_url_get")
      || SYM(version_info, "curl_version_info")
      || SYM(multi_init, "curl_multi_init")
      || SYM(multi_add, "curl_multi_add_handle")
      || SYM(multi_remove, "curl_multi_remove_handle")
      || SYM(multi_perform, "curl_multi_perform")
      || SYM(multi_poll, "curl_multi_poll")
      || SYM(multi_info_read, "curl_multi_info_read")
      || SYM(multi_cleanup, "curl_multi_cleanup")
      || SYM(multi_strerror, "curl_multi_strerror")) {
    /* a broken install: say what is missing, once, and stop */
    fprintf(stderr, "uphook: cannot load %s: %s\n", SONAME, dlerror());
    abort();
  }
}

static void need(void)
{
  pthread_once(&once, load);
}

CURLcode curl_global_init(long flags)
{
  need();
  return f.global_init(flags);
}

CURL *curl_easy_init(void)
{
  need();
  return f.easy_init();
}

CURLcode curl_easy_setopt(CURL *curl, CURLoption option, ...)
{
  va_list ap;
  CURLcode rc;
  need();
  va_start(ap, option);
  if (option < CURLOPTTYPE_OBJECTPOINT)
    rc = f.easy_setopt(curl, option, va_arg(ap, long));
  else if (option < CURLOPTTYPE_FUNCTIONPOINT)
    rc = f.easy_setopt(curl, option, va_arg(ap, void *));
  else if (option < CURLOPTTYPE_OFF_T)
    rc = f.easy_setopt(curl, option, va_arg(ap, void (*)(void)));
  else if (option < CURLOPTTYPE_BLOB)
    rc = f.easy_setopt(curl, option, va_arg(ap, curl_off_t));
  else
    rc = f.easy_setopt(curl, option, va_arg(ap, void *));
  va_end(ap);
  return rc;
}

CURLcode curl_easy_perform(CURL *curl)
{
  need();
  return f.easy_perform(curl);
}

void curl_easy_cleanup(CURL *curl)
{
  need();
  f.easy_cleanup(curl);
}

void curl_easy_reset(CURL *curl)
{
  need();
  f.easy_reset(curl);
}

/* every CURLINFO_* takes one pointer to where the answer goes */
CURLcode curl_easy_getinfo(CURL *curl, CURLINFO info, ...)
{
  va_list ap;
  CURLcode rc;
  need();
  va_start(ap, info);
  rc = f.easy_getinfo(curl, info, va_arg(ap, void *));
  va_end(ap);
  return rc;
}

const char *curl_easy_strerror(CURLcode code)
{
  need();
  return f.easy_strerror(code);
}

struct curl_slist *curl_slist_append(struct curl_slist *list,
                                     const char *data)
{
  need();
  return f.slist_append(list, data);
}

void curl_slist_free_all(struct curl_slist *list)
{
  need();
  f.slist_free_all(list);
}

void curl_free(void *p)
{
  need();
  f.free_(p);
}

CURLU *curl_url(void)
{
  need();
  return f.url();
}

void curl_url_cleanup(CURLU *handle)
{
  need();
  f.url_cleanup(handle);
}

CURLUcode curl_url_set(CURLU *handle, CURLUPart what, const char *part,
                       unsigned int flags)
{
  need();
  return f.url_set(handle, what, part, flags);
}

CURLUcode curl_url_get(CURLU *handle, CURLUPart what, char **part,
                       unsigned int flags)
{
  need();
  return f.url_get(handle, what, part, flags);
}

curl_version_info_data *curl_version_info(CURLversion age)
{
  need();
  return f.version_info(age);
}

unsigned uh_curl_version(void)
{
  const char *t = getenv("UPHOOK_TEST_CURL_VERSION");
  char *end;
  unsigned long v;
  if (t && *t && (v = strtoul(t, &end, 0)) > 0 && !*end)
    return (unsigned)v;
  return curl_version_info(CURLVERSION_NOW)->version_num;
}

int uh_curl_has_protocols_str(unsigned version_num)
{
  return version_num >= UH_CURL_PROTOCOLS_STR_SINCE;
}

/* "https" or "http,https" as a CURLPROTO_* mask; 0 for anything else */
static long proto_mask(const char *list)
{
  if (!strcmp(list, "https"))
    return CURLPROTO_HTTPS;
  if (!strcmp(list, "http,https"))
    return CURLPROTO_HTTP | CURLPROTO_HTTPS;
  return 0;
}

CURLcode uh_curl_protocols(CURL *h, const char *protocols,
                           const char *redirects)
{
  long p = proto_mask(protocols), r = proto_mask(redirects);
  CURLcode rc;
  if (!p || !r)
    return CURLE_BAD_FUNCTION_ARGUMENT;
  if (uh_curl_has_protocols_str(uh_curl_version())) {
    rc = curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, protocols);
    return rc ? rc : curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR,
                                      redirects);
  }
  rc = curl_easy_setopt(h, CURLOPT_PROTOCOLS, p);
  return rc ? rc : curl_easy_setopt(h, CURLOPT_REDIR_PROTOCOLS, r);
}

CURLcode uh_curl_transport(CURL *h)
{
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_USERAGENT, "uphook");
  curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(h, CURLOPT_SSLVERSION, (long)CURL_SSLVERSION_TLSv1_2);
  curl_easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 1L);
  curl_easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 2L);
  return uh_curl_protocols(h, "https", "https");
}

/* the multi interface: parallel requests to the cluster agents */
CURLM *curl_multi_init(void)
{
  need();
  return f.multi_init();
}

CURLMcode curl_multi_add_handle(CURLM *m, CURL *h)
{
  need();
  return f.multi_add(m, h);
}

CURLMcode curl_multi_remove_handle(CURLM *m, CURL *h)
{
  need();
  return f.multi_remove(m, h);
}

CURLMcode curl_multi_perform(CURLM *m, int *running)
{
  need();
  return f.multi_perform(m, running);
}

CURLMcode curl_multi_poll(CURLM *m, struct curl_waitfd extra[],
                          unsigned int nextra, int timeout_ms, int *numfds)
{
  need();
  return f.multi_poll(m, extra, nextra, timeout_ms, numfds);
}

CURLMsg *curl_multi_info_read(CURLM *m, int *left)
{
  need();
  return f.multi_info_read(m, left);
}

CURLMcode curl_multi_cleanup(CURLM *m)
{
  need();
  return f.multi_cleanup(m);
}

const char *curl_multi_strerror(CURLMcode code)
{
  need();
  return f.multi_strerror(code);
}

/* The allow lists of a transfer: which scheme and host a URL (the first
 * one, and every redirect target) may reach.  Shared by downloads and the
 * Kubernetes client; libcurl's protocol options do not restrict hosts. */
#include "http.h"
#include <stdio.h>
#include <string.h>
#include <strings.h>


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

uh_err uh_http_allowed(const uh_allow *a, const char *url, int *plain,
                       char *err, size_t errlen)
{
  char *scheme = NULL, *host = NULL, *port = NULL;
  uh_err rc = UH_EINVAL;
  CURLU *u = curl_url();
  *plain = 0;
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
    snprintf(err, errlen, "scheme %s is not allowed", scheme);
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
  else if (scheme[4] == 's')
    snprintf(err, errlen, "host %s is not declared (net:%s)", host, host);
  else
    snprintf(err, errlen, "plain http to %s is not declared "
             "(net:http://%s)", host, host);
done:
  curl_free(scheme);
  curl_free(host);
  curl_free(port);
  curl_url_cleanup(u);
  return rc;
}


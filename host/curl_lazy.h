/* What the libcurl loaded at run time supports (host/curl_lazy.c).
 *
 * The library found at run time may be older than the curl.h uphook was
 * built with: Ubuntu 22.04 (the MicroK8s snap's base, core22) has 7.81.0,
 * and CURLOPT_PROTOCOLS_STR / CURLOPT_REDIR_PROTOCOLS_STR came in 7.85.0.
 * Before that, only the CURLPROTO_* bitmasks of CURLOPT_PROTOCOLS /
 * CURLOPT_REDIR_PROTOCOLS (7.19.4) restrict a handle's protocols. */
#ifndef UH_CURL_LAZY_H
#define UH_CURL_LAZY_H
#include <curl/curl.h>

/* the first libcurl with CURLOPT_PROTOCOLS_STR (7.85.0) */
#define UH_CURL_PROTOCOLS_STR_SINCE 0x075500u

/* version_num of the libcurl in use (curl_version_info at run time), or
 * of UPHOOK_TEST_CURL_VERSION when set (test-only: e.g. 0x075100) */
unsigned uh_curl_version(void);

/* Whether a libcurl of that version_num takes CURLOPT_PROTOCOLS_STR. */
int uh_curl_has_protocols_str(unsigned version_num);

/* Restrict handle h to the protocols in `protocols` and its redirects to
 * those in `redirects` ("https" or "http,https"), with the options the
 * libcurl in use has.  Not CURLE_OK: the restriction is not in place and
 * the handle must not be used. */
CURLcode uh_curl_protocols(CURL *h, const char *protocols,
                           const char *redirects);

/* The transport every uphook handle starts from (downloads, the API
 * server, the cluster agents): no signals, user agent "uphook", https
 * only, redirects never followed by libcurl, TLS 1.2 or later with the
 * peer and its name verified.  Not CURLE_OK: do not use the handle. */
CURLcode uh_curl_transport(CURL *h);

#endif

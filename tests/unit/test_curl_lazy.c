/* host/curl_lazy.c: the protocol restriction picks its libcurl options by
 * the version of the library in use.  7.81.0 (Ubuntu 22.04, core22) has
 * only the CURLPROTO_* bitmasks; the test forces that path with
 * UPHOOK_TEST_CURL_VERSION on the libcurl of this machine, whose bitmask
 * options still work, and checks that they really restrict: an http URL
 * on an https-only handle fails before any connection. */
#include <stdlib.h>
#include <curl/curl.h>
#include "curl_lazy.h"
#include "unit.h"

static void test_chooser(void)
{
  CHECK(!uh_curl_has_protocols_str(0x075100));   /* 7.81.0, core22 */
  CHECK(!uh_curl_has_protocols_str(0x075402));   /* 7.84.2 */
  CHECK(uh_curl_has_protocols_str(0x075500));    /* 7.85.0 */
  CHECK(uh_curl_has_protocols_str(0x075801));    /* 7.88.1, Debian 12 */
  CHECK(uh_curl_has_protocols_str(0x080500));
}

static void test_version(void)
{
  unsigned real = curl_version_info(CURLVERSION_NOW)->version_num;
  unsetenv("UPHOOK_TEST_CURL_VERSION");
  CHECK(uh_curl_version() == real);
  setenv("UPHOOK_TEST_CURL_VERSION", "0x075100", 1);
  CHECK(uh_curl_version() == 0x075100);
  setenv("UPHOOK_TEST_CURL_VERSION", "junk", 1);
  CHECK(uh_curl_version() == real);
  unsetenv("UPHOOK_TEST_CURL_VERSION");
}

/* perform on url with the restriction in place: the CURLcode */
static CURLcode attempt(const char *protocols, const char *url)
{
  CURL *h = curl_easy_init();
  CURLcode rc;
  if (!h)
    return CURLE_FAILED_INIT;
  rc = uh_curl_protocols(h, protocols, protocols);
  if (rc == CURLE_OK) {
    curl_easy_setopt(h, CURLOPT_URL, url);
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, 2000L);
    rc = curl_easy_perform(h);
  }
  curl_easy_cleanup(h);
  return rc;
}

/* port 1 of loopback: nothing listens, so an allowed protocol fails to
 * connect and a refused one fails before it tries */
static void restricts(const char *version)
{
  if (version)
    setenv("UPHOOK_TEST_CURL_VERSION", version, 1);
  else
    unsetenv("UPHOOK_TEST_CURL_VERSION");
  CHECK(attempt("https", "http://127.0.0.1:1/") == CURLE_UNSUPPORTED_PROTOCOL);
  CHECK(attempt("https", "ftp://127.0.0.1:1/") == CURLE_UNSUPPORTED_PROTOCOL);
  CHECK(attempt("http,https", "http://127.0.0.1:1/") == CURLE_COULDNT_CONNECT);
  CHECK(attempt("https", "https://127.0.0.1:1/") == CURLE_COULDNT_CONNECT);
  CHECK(attempt("ftp", "ftp://127.0.0.1:1/") == CURLE_BAD_FUNCTION_ARGUMENT);
  unsetenv("UPHOOK_TEST_CURL_VERSION");
}

static void test_old_bitmasks_restrict(void) { restricts("0x075100"); }
static void test_new_strings_restrict(void) { restricts(NULL); }

int main(void)
{
  curl_global_init(CURL_GLOBAL_DEFAULT);
  RUN(test_chooser);
  RUN(test_version);
  RUN(test_old_bitmasks_restrict);
  RUN(test_new_strings_restrict);
  return UNIT_END();
}

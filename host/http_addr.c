/* Where a hook's transfer may connect (docs/security.md, "What
 * permissions guarantee"; docs/security.md "Node-local addresses").
 *
 * A declared host may resolve to this node's own services: loopback,
 * link-local addresses (169.254.0.0/16, fe80::/10, where clouds put
 * their metadata service) and the metadata addresses outside those.
 * libcurl calls net_opensocket for every socket of a hook transfer,
 * with the very address it then connects to, so the check is on what is
 * connected (there is no second lookup to race).  Such an address is
 * refused unless the URL's host is that address, written literally (the
 * permission then names it), or it is the literal address of the proxy
 * the environment configures (a proxy on this node is named by its
 * address, e.g. http://127.0.0.1:3128).  Private ranges stay allowed:
 * air-gapped mirrors live there.  Only hook transfers (host/http.c) set
 * this callback: the API server and cluster-agent connections never do. */
#include "http.h"
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <lauxlib.h>

static long long g_connects, g_refused;

static int v4_in(uint32_t a, uint32_t net, int bits)
{
  uint32_t mask = bits ? ~(uint32_t)0 << (32 - bits) : 0;
  return (a & mask) == (net & mask);
}

static const char *v4_class(uint32_t a)
{
  if (v4_in(a, 0x7f000000u, 8))
    return "loopback";
  if (v4_in(a, 0xa9fe0000u, 16))
    return "link-local, where the cloud metadata service is";
  if (v4_in(a, 0x00000000u, 8))
    return "unspecified: this host";
  if (a == 0x646464c8u)          /* 100.100.100.200: Alibaba's metadata */
    return "the cloud metadata service";
  return NULL;
}

const char *uh_net_refused_class(const struct sockaddr *sa)
{
  if (sa->sa_family == AF_INET) {
    const struct sockaddr_in *in = (const void *)sa;
    return v4_class(ntohl(in->sin_addr.s_addr));
  }
  if (sa->sa_family == AF_INET6) {
    static const unsigned char ec2[16] = { 0xfd, 0x00, 0x0e, 0xc2, 0, 0, 0,
      0, 0, 0, 0, 0, 0, 0, 0x02, 0x54 };   /* fd00:ec2::254 (AWS) */
    const struct sockaddr_in6 *in6 = (const void *)sa;
    const unsigned char *b = in6->sin6_addr.s6_addr;
    if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr) ||
        IN6_IS_ADDR_V4COMPAT(&in6->sin6_addr)) {
      uint32_t a;
      memcpy(&a, b + 12, 4);
      return v4_class(ntohl(a));
    }
    if (IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr))
      return "loopback";
    if (IN6_IS_ADDR_UNSPECIFIED(&in6->sin6_addr))
      return "unspecified: this host";
    if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80)
      return "link-local";
    if (memcmp(b, ec2, 16) == 0)
      return "the cloud metadata service";
    return NULL;
  }
  return "not an internet address";
}

static void addr_text(const struct sockaddr *sa, char *out, size_t n)
{
  const void *p = sa->sa_family == AF_INET6
    ? (const void *)&((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr
    : (const void *)&((const struct sockaddr_in *)(const void *)sa)->sin_addr;
  if (!inet_ntop(sa->sa_family, p, out, (socklen_t)n))
    snprintf(out, n, "?");
}

/* Is text (a URL host, maybe "[v6]") the literal address sa? */
static int literal_is(const char *text, const struct sockaddr *sa)
{
  char buf[INET6_ADDRSTRLEN + 2];
  unsigned char bin[16];
  size_t n = strlen(text);
  if (n >= 2 && text[0] == '[' && text[n - 1] == ']' && n - 2 < sizeof buf) {
    memcpy(buf, text + 1, n - 2);
    buf[n - 2] = '\0';
    text = buf;
  }
  if (sa->sa_family == AF_INET && inet_pton(AF_INET, text, bin) == 1)
    return memcmp(bin, &((const struct sockaddr_in *)(const void *)sa)
                  ->sin_addr, 4) == 0;
  if (sa->sa_family == AF_INET6 && inet_pton(AF_INET6, text, bin) == 1)
    return memcmp(bin, &((const struct sockaddr_in6 *)(const void *)sa)
                  ->sin6_addr, 16) == 0;
  return 0;
}

/* The literal host of a proxy the environment configures, if it is one. */
static int is_proxy(const struct sockaddr *sa)
{
  static const char *const vars[] = { "http_proxy", "https_proxy",
    "HTTPS_PROXY", "all_proxy", "ALL_PROXY", NULL };
  for (int i = 0; vars[i]; i++) {
    const char *v = getenv(vars[i]);
    char *host = NULL;
    int yes = 0;
    CURLU *u;
    if (!v || !*v || !(u = curl_url()))
      continue;
    if (curl_url_set(u, CURLUPART_URL, v, CURLU_GUESS_SCHEME) == CURLUE_OK
        && curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK)
      yes = literal_is(host, sa);
    curl_free(host);
    curl_url_cleanup(u);
    if (yes)
      return 1;
  }
  return 0;
}

static curl_socket_t net_opensocket(void *clientp, curlsocktype purpose,
                                    struct curl_sockaddr *a)
{
  uh_netcheck *nc = clientp;
  const char *why = uh_net_refused_class(&a->addr);
  char text[INET6_ADDRSTRLEN];
  (void)purpose;
  if (why && !literal_is(nc->host, &a->addr) && !is_proxy(&a->addr)) {
    addr_text(&a->addr, text, sizeof text);
    snprintf(nc->refused, sizeof nc->refused, "%s resolves to %s (%s): a "
             "net: permission must name that address to reach it "
             "(net:%s%s%s)", nc->host, text, why,
             a->family == AF_INET6 ? "[" : "", text,
             a->family == AF_INET6 ? "]" : "");
    g_refused++;
    return CURL_SOCKET_BAD;
  }
  g_connects++;
  return socket(a->family, a->socktype, a->protocol);
}

/* Test-only: UPHOOK_TEST_RESOLVE="name:port:address ..." pins names for
 * hook transfers (libcurl's CURLOPT_RESOLVE), so that tests reach the
 * refusal of a metadata or link-local address without any DNS query. */
static void test_resolve(CURL *c, uh_netcheck *nc)
{
  const char *v = getenv("UPHOOK_TEST_RESOLVE"), *end;
  char one[512];
  for (; v && *v; v = end) {
    while (*v == ' ')
      v++;
    end = v + strcspn(v, " ");
    if (end > v && (size_t)(end - v) < sizeof one) {
      memcpy(one, v, (size_t)(end - v));
      one[end - v] = '\0';
      nc->resolve = curl_slist_append(nc->resolve, one);
    }
  }
  if (nc->resolve)
    curl_easy_setopt(c, CURLOPT_RESOLVE, nc->resolve);
}

void uh_net_done(uh_netcheck *nc)
{
  curl_slist_free_all(nc->resolve);
  nc->resolve = NULL;
}

void uh_net_check(CURL *c, uh_netcheck *nc, const char *url)
{
  CURLU *u = curl_url();
  char *host = NULL;
  nc->host[0] = nc->refused[0] = '\0';
  nc->resolve = NULL;
  test_resolve(c, nc);
  if (u && curl_url_set(u, CURLUPART_URL, url, 0) == CURLUE_OK &&
      curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK)
    snprintf(nc->host, sizeof nc->host, "%s", host);
  curl_free(host);
  curl_url_cleanup(u);
  curl_easy_setopt(c, CURLOPT_OPENSOCKETFUNCTION, net_opensocket);
  curl_easy_setopt(c, CURLOPT_OPENSOCKETDATA, nc);
}

/* http.connects() -> sockets opened for hook transfers, refused ones */
int http_connects(lua_State *L)
{
  lua_pushinteger(L, (lua_Integer)g_connects);
  lua_pushinteger(L, (lua_Integer)g_refused);
  return 2;
}

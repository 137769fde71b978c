/* Checksum files: find a file's sha256 in a GNU or BSD listing.
 *
 * Pure and self-contained (no libcurl, no Lua) so that a fuzzer can
 * link this file alone.  Bound to Lua as uphook.c.http.checksum_for.
 */
#include "http.h"
#include <string.h>
#include <strings.h>

static int hex64(const char *p, size_t n)
{
  if (n < 64)
    return 0;
  for (size_t i = 0; i < 64; i++)
    if (!strchr("0123456789abcdefABCDEF", p[i]) || !p[i])
      return 0;
  return 1;
}

/* 2: the listed name is name; 1: its last path component is; 0: no. */
static int name_match(const char *l, size_t ln, const char *name, size_t nn)
{
  if (nn == 0)
    return 0;
  if (ln == nn && memcmp(l, name, nn) == 0)
    return 2;
  if (ln > nn && l[ln - nn - 1] == '/' && memcmp(l + ln - nn, name, nn) == 0)
    return 1;
  return 0;
}

/* GNU's escaped names ("\\" line prefix): \\ and \n. */
static size_t unescape(const char *p, size_t n, char *out, size_t cap)
{
  size_t o = 0;
  for (size_t i = 0; i < n && o < cap; i++) {
    if (p[i] == '\\' && i + 1 < n) {
      i++;
      out[o++] = p[i] == 'n' ? '\n' : p[i];
    } else {
      out[o++] = p[i];
    }
  }
  return o;
}

/* 1: a named entry (*hex, *nm, *nl); 2: a bare sum; 0: anything else. */
static int parse_line(const char *p, size_t n, const char **hex,
                      const char **nm, size_t *nl, char *scratch, size_t cap)
{
  int esc = n > 0 && p[0] == '\\';
  if (n > 8 && memcmp(p, "SHA256 (", 8) == 0) {
    while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t'))
      n--;
    if (n < 8 + 4 + 64 || memcmp(p + n - 68, ") = ", 4) != 0 ||
        !hex64(p + n - 64, 64))
      return 0;
    *hex = p + n - 64;
    *nm = p + 8;
    *nl = n - 8 - 68;
    return 1;
  }
  p += esc;
  n -= (size_t)esc;
  if (!hex64(p, n))
    return 0;
  *hex = p;
  p += 64;
  n -= 64;
  size_t ws = 0;
  while (ws < n && (p[ws] == ' ' || p[ws] == '\t'))
    ws++;
  if (ws == n)
    return 2;
  if (p[0] != ' ' && p[0] != '\t')
    return 0;
  p++;
  n--;
  if (n > 0 && (p[0] == ' ' || p[0] == '*')) {
    p++;
    n--;
  }
  if (n == 1 && p[0] == '-')
    return 2;
  *nm = p;
  *nl = esc ? unescape(p, n, scratch, cap) : n;
  if (esc)
    *nm = scratch;
  return 1;
}

uh_err uh_checksum_for(const char *text, size_t len, const char *name,
                       size_t namelen, char out[65])
{
  const char *p = text, *end = text + len, *hex = NULL, *nm = NULL;
  char found[64], bare[64], scratch[4096];
  int best = 0, conflict = 0, nbare = 0, nsums = 0;
  while (p < end) {
    const char *nlp = memchr(p, '\n', (size_t)(end - p));
    const char *le = nlp ? nlp : end;
    size_t n = (size_t)(le - p), nl = 0;
    if (n > 0 && p[n - 1] == '\r')
      n--;
    int kind = parse_line(p, n, &hex, &nm, &nl, scratch, sizeof scratch);
    p = nlp ? nlp + 1 : end;
    nsums += kind != 0;
    if (kind == 2) {
      nbare++;
      memcpy(bare, hex, 64);
      continue;
    }
    int m = kind ? name_match(nm, nl, name, namelen) : 0;
    if (m > best) {
      best = m;
      conflict = 0;
      memcpy(found, hex, 64);
    } else if (m && m == best && strncasecmp(found, hex, 64) != 0) {
      conflict = 1;
    }
  }
  if (best && conflict)
    return UH_EPARSE;
  if (!best && !(nbare == 1 && nsums == 1))
    return UH_ENOENT;
  for (int i = 0; i < 64; i++) {
    char c = best ? found[i] : bare[i];
    out[i] = c >= 'A' && c <= 'F' ? (char)(c - 'A' + 'a') : c;
  }
  out[64] = '\0';
  return UH_OK;
}

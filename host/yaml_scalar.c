/* uphook.c.yaml's plain scalar resolution (host/yaml_scalar.h): the
 * words, integers and floats go-yaml v2 resolves, as Kubernetes reads a
 * manifest. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>  /* host/yaml.h: uh_yaml_plain_is_string */
#include "yaml_scalar.h"

/* The fixed words of go-yaml's resolve table, with their lengths: a
 * scalar is compared with the words of its own length only (most keys
 * of a manifest start with one of their letters: type, format, name). */
static const struct word {
  const char *s;
  size_t n;
  int kind, b;
  double d;
} words[] = {
#define W(s, kind, b, d) { s, sizeof s - 1, kind, b, d }
  W("y", R_BOOL, 1, 0), W("Y", R_BOOL, 1, 0), W("yes", R_BOOL, 1, 0),
  W("Yes", R_BOOL, 1, 0), W("YES", R_BOOL, 1, 0), W("true", R_BOOL, 1, 0),
  W("True", R_BOOL, 1, 0), W("TRUE", R_BOOL, 1, 0), W("on", R_BOOL, 1, 0),
  W("On", R_BOOL, 1, 0), W("ON", R_BOOL, 1, 0),
  W("n", R_BOOL, 0, 0), W("N", R_BOOL, 0, 0), W("no", R_BOOL, 0, 0),
  W("No", R_BOOL, 0, 0), W("NO", R_BOOL, 0, 0), W("false", R_BOOL, 0, 0),
  W("False", R_BOOL, 0, 0), W("FALSE", R_BOOL, 0, 0),
  W("off", R_BOOL, 0, 0), W("Off", R_BOOL, 0, 0), W("OFF", R_BOOL, 0, 0),
  W("~", R_NULL, 0, 0), W("null", R_NULL, 0, 0), W("Null", R_NULL, 0, 0),
  W("NULL", R_NULL, 0, 0),
  W(".nan", R_FLOAT, 0, NAN), W(".NaN", R_FLOAT, 0, NAN),
  W(".NAN", R_FLOAT, 0, NAN),
  W(".inf", R_FLOAT, 0, HUGE_VAL), W(".Inf", R_FLOAT, 0, HUGE_VAL),
  W(".INF", R_FLOAT, 0, HUGE_VAL), W("+.inf", R_FLOAT, 0, HUGE_VAL),
  W("+.Inf", R_FLOAT, 0, HUGE_VAL), W("+.INF", R_FLOAT, 0, HUGE_VAL),
  W("-.inf", R_FLOAT, 0, -HUGE_VAL), W("-.Inf", R_FLOAT, 0, -HUGE_VAL),
  W("-.INF", R_FLOAT, 0, -HUGE_VAL),
#undef W
};

static int resolve_word(const char *s, size_t n, yscalar *v)
{
  size_t i;
  if (n > 6)
    return 0;
  for (i = 0; i < sizeof words / sizeof words[0]; i++)
    if (words[i].n == n && words[i].s[0] == s[0]
        && memcmp(words[i].s, s, n) == 0) {
      v->kind = words[i].kind;
      v->b = words[i].b;
      v->d = words[i].d;
      return 1;
    }
  return 0;
}

static size_t skip_digits(const char *s, size_t i, size_t n)
{
  while (i < n && s[i] >= '0' && s[i] <= '9')
    i++;
  return i;
}

/* go-yaml's yamlStyleFloat:
 * ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$ */
static int float_syntax(const char *s, size_t n)
{
  size_t i = 0, j;
  if (i < n && (s[i] == '+' || s[i] == '-'))
    i++;
  if (i < n && s[i] == '.') {
    j = skip_digits(s, i + 1, n);
    if (j == i + 1)
      return 0;
    i = j;
  } else {
    j = skip_digits(s, i, n);
    if (j == i)
      return 0;
    i = j;
    if (i < n && s[i] == '.')
      i = skip_digits(s, i + 1, n);
  }
  if (i < n && (s[i] == 'e' || s[i] == 'E')) {
    i++;
    if (i < n && (s[i] == '+' || s[i] == '-'))
      i++;
    j = skip_digits(s, i, n);
    if (j == i)
      return 0;
    i = j;
  }
  return i == n;
}

static int digit_value(char c)
{
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return 99;
}

/* Go's strconv.ParseInt(s, 0, 64), then ParseUint for the unsigned
 * range; values beyond lua_Integer become floats, as the brief wants. */
static int parse_int(const char *s, size_t n, yscalar *v)
{
  size_t i = 0;
  int neg = 0, sign = 0, base = 10, d;
  uint64_t u = 0;
  if (i < n && (s[i] == '+' || s[i] == '-'))
    neg = s[i] == '-', sign = 1, i++;
  if (n - i >= 2 && s[i] == '0') {
    char c = s[i + 1];
    if (c == 'x' || c == 'X') base = 16, i += 2;
    else if (c == 'b' || c == 'B') base = 2, i += 2;
    else if (c == 'o' || c == 'O') base = 8, i += 2;
    else base = 8, i += 1;
  }
  if (i == n)
    return 0;
  for (; i < n; i++) {
    if ((d = digit_value(s[i])) >= base)
      return 0;
    if (u > (UINT64_MAX - (uint64_t)d) / (uint64_t)base)
      return 0;  /* beyond uint64: Go fails, maybe a float below */
    u = u * (uint64_t)base + (uint64_t)d;
  }
  if (neg && u > (uint64_t)INT64_MAX + 1)
    return 0;
  if (!neg && u > (uint64_t)INT64_MAX) {
    if (sign)  /* ParseUint takes no sign */
      return 0;
    v->kind = R_FLOAT, v->d = (double)u;
    return 1;
  }
  v->kind = R_INT;
  v->i = neg ? (lua_Integer)(0 - u) : (lua_Integer)u;
  return 1;
}

static int parse_float(const char *s, yscalar *v)
{
  char *end;
  double d;
  errno = 0;
  d = strtod(s, &end);
  if (*end || isinf(d))  /* Go: out of range is an error, so a string */
    return 0;
  v->kind = R_FLOAT, v->d = d;
  return 1;
}

/* A number-looking plain scalar: strip '_' as go-yaml does, then int,
 * then float. s is NUL-terminated (libyaml guarantees it). */
static int resolve_number(const char *s, size_t n, yscalar *v)
{
  char small[128], *buf = small;
  size_t i, m = 0;
  int ok;
  if (!memchr(s, '_', n)) {
    if (parse_int(s, n, v))
      return 1;
    return float_syntax(s, n) && parse_float(s, v);
  }
  if (n >= sizeof small && !(buf = malloc(n + 1)))
    return 0;
  for (i = 0; i < n; i++)
    if (s[i] != '_')
      buf[m++] = s[i];
  buf[m] = '\0';
  ok = parse_int(buf, m, v) || (float_syntax(buf, m) && parse_float(buf, v));
  if (buf != small)
    free(buf);
  return ok;
}

/* Resolve a plain scalar; returns its kind (R_STR when it stays text). */
int uh_yaml_resolve_plain(const char *s, size_t n, yscalar *v)
{
  unsigned char c;
  v->kind = R_STR;
  if (n == 0)
    return v->kind = R_NULL;
  c = (unsigned char)s[0];
  if (strchr("yYnNtTfFoO~.+-0123456789", c) == NULL || c == 0)
    return R_STR;
  if (resolve_word(s, n, v))
    return v->kind;
  if (c == '.') {  /* go-yaml: ParseFloat on the raw text */
    if (n > 1 && skip_digits(s, 1, n) > 1 && float_syntax(s, n))
      parse_float(s, v);
  } else if (c == '+' || c == '-' || (c >= '0' && c <= '9')) {
    resolve_number(s, n, v);
  }
  return v->kind;
}

/* 1 if the plain scalar s decodes as the string s (the encoder's test
 * for quoting). */
int uh_yaml_plain_is_string(const char *s, size_t n)
{
  yscalar v;
  return uh_yaml_resolve_plain(s, n, &v) == R_STR;
}


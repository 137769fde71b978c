/* uphook.c.helm: what the broker needs of Helm's formats and of Helm
 * itself (docs/internals.md, "C families"):
 *
 *   gzip(s [, level]) -> bytes            zlib, a gzip member
 *   gunzip(s [, max]) -> bytes | nil, msg  at most max bytes out
 *   b64encode(s) -> text                  OpenSSL EVP, standard alphabet
 *   b64decode(s) -> bytes | nil, msg      padding required, newlines ok
 *   chart(path) -> {files = {[name] = bytes}} | nil, msg   (helm_chart.c)
 *   render(t) -> stdout | nil, msg [, note]               (helm_render.c)
 *     (with t.copies = n: {stdout...}, n Helms at once)
 *
 * A release record in Helm's Secret driver is base64(gzip(json)); the
 * chart's files go into it.  Broker only: the hook child never has it. */
#include <limits.h>
#include <string.h>
#include <lua.h>
#include <lauxlib.h>
#include <openssl/evp.h>
#include <zlib.h>
#include "helm.h"

#define CHUNK (64u << 10)
#define GUNZIP_MAX (64u << 20)   /* the default bound on gunzip's output */

/* gzip(s [, level]): one gzip member, as Go's compress/gzip writes
 * (level 6 unless given: zlib's and Go's default), made in one deflate
 * call into deflateBound's room. */
static int helm_gzip(lua_State *L)
{
  size_t n;
  const char *s = luaL_checklstring(L, 1, &n);
  int level = (int)luaL_optinteger(L, 2, Z_DEFAULT_COMPRESSION), rc;
  uLong room;
  z_stream z;
  luaL_Buffer b;
  luaL_argcheck(L, level >= -1 && level <= 9, 2, "a level from 0 to 9");
  luaL_argcheck(L, n < (1u << 30), 1, "1 GiB or more");
  memset(&z, 0, sizeof z);
  /* 15 + 16: a gzip header and trailer around the deflate stream */
  if (deflateInit2(&z, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY)
      != Z_OK)
    return luaL_error(L, "gzip: out of memory");
  room = deflateBound(&z, (uLong)n);
  z.next_out = (Bytef *)luaL_buffinitsize(L, &b, room);
  z.avail_out = (uInt)room;
  z.next_in = (Bytef *)s;
  z.avail_in = (uInt)n;
  rc = deflate(&z, Z_FINISH);
  room = z.total_out;
  deflateEnd(&z);
  if (rc != Z_STREAM_END)
    return luaL_error(L, "gzip: deflate failed (%d)", rc);
  luaL_pushresultsize(&b, room);
  return 1;
}

/* Inflate all of z's input into b, at most max bytes; members one after
 * another are read as one stream (as Go's gzip.Reader does).  NULL, or
 * what is wrong. */
static const char *inflate_all(z_stream *z, luaL_Buffer *b, size_t max)
{
  size_t out = 0;
  for (;;) {
    int rc;
    z->next_out = (Bytef *)luaL_prepbuffsize(b, CHUNK);
    z->avail_out = CHUNK;
    rc = inflate(z, Z_NO_FLUSH);
    luaL_addsize(b, CHUNK - z->avail_out);
    out += CHUNK - z->avail_out;
    if (out > max)
      return "more than the bound";
    if (rc == Z_STREAM_END) {
      if (z->avail_in == 0)
        return NULL;
      if (inflateReset(z) != Z_OK)
        return "bad stream";
      continue;
    }
    if (rc == Z_BUF_ERROR && z->avail_in == 0)
      return "truncated data";
    if (rc != Z_OK && rc != Z_BUF_ERROR)
      return z->msg ? z->msg : "bad data";
  }
}

/* gunzip(s [, max]) -> bytes | nil, "gunzip: ..." */
static int helm_gunzip(lua_State *L)
{
  size_t n;
  const char *s = luaL_checklstring(L, 1, &n);
  lua_Integer max = luaL_optinteger(L, 2, GUNZIP_MAX);
  const char *why;
  z_stream z;
  luaL_Buffer b;
  luaL_argcheck(L, max >= 0, 2, "a byte count expected");
  luaL_argcheck(L, n <= UINT_MAX, 1, "more than 4 GiB");
  memset(&z, 0, sizeof z);
  if (inflateInit2(&z, 15 + 16) != Z_OK)   /* gzip only */
    return luaL_error(L, "gunzip: out of memory");
  z.next_in = (Bytef *)s;
  z.avail_in = (uInt)n;
  luaL_buffinit(L, &b);
  why = n == 0 ? "empty input" : inflate_all(&z, &b, (size_t)max);
  inflateEnd(&z);
  if (why) {
    luaL_pushfail(L);
    if (strcmp(why, "more than the bound") == 0)
      lua_pushfstring(L, "gunzip: the data inflates to more than %I bytes",
                      max);
    else
      lua_pushfstring(L, "gunzip: %s", why);
    return 2;
  }
  luaL_pushresult(&b);
  return 1;
}

static int helm_b64encode(lua_State *L)
{
  size_t n;
  const unsigned char *s = (const unsigned char *)luaL_checklstring(L, 1,
                                                                    &n);
  luaL_Buffer b;
  luaL_argcheck(L, n <= (size_t)INT_MAX / 4 * 3 - 3, 1, "too long");
  char *out = luaL_buffinitsize(L, &b, 4 * ((n + 2) / 3) + 1);
  int len = EVP_EncodeBlock((unsigned char *)out, s, (int)n);
  luaL_pushresultsize(&b, (size_t)len);
  return 1;
}

/* b64decode(s): the standard alphabet with its padding; line breaks and
 * other white space are skipped (EVP_DecodeUpdate). */
static int helm_b64decode(lua_State *L)
{
  size_t n;
  const unsigned char *s = (const unsigned char *)luaL_checklstring(L, 1,
                                                                    &n);
  EVP_ENCODE_CTX *ctx;
  luaL_Buffer b;
  int len = 0, last = 0, ok;
  luaL_argcheck(L, n <= INT_MAX, 1, "too long");
  ctx = EVP_ENCODE_CTX_new();
  if (!ctx)
    return luaL_error(L, "b64decode: out of memory");
  unsigned char *out = (unsigned char *)luaL_buffinitsize(L, &b,
                                                          n / 4 * 3 + 3);
  EVP_DecodeInit(ctx);
  ok = EVP_DecodeUpdate(ctx, out, &len, s, (int)n) >= 0
       && EVP_DecodeFinal(ctx, out + len, &last) == 1
       && EVP_ENCODE_CTX_num(ctx) == 0;
  EVP_ENCODE_CTX_free(ctx);
  if (!ok) {
    luaL_pushfail(L);
    lua_pushliteral(L, "b64decode: not base64 (standard alphabet, padded)");
    return 2;
  }
  luaL_pushresultsize(&b, (size_t)(len + last));
  return 1;
}

static const luaL_Reg helm_funcs[] = {
  { "b64decode", helm_b64decode },
  { "b64encode", helm_b64encode },
  { "chart", helm_chart },
  { "gunzip", helm_gunzip },
  { "gzip", helm_gzip },
  { "render", helm_render },
  { NULL, NULL }
};

int luaopen_uphook_helm(lua_State *L)
{
  luaL_newlib(L, helm_funcs);
  return 1;
}

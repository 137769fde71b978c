/* SHA-256 for the host: OpenSSL EVP only (no hand-written digest).
 * Lua family uphook.c.hash: sha256(s), file(abs_path), and for the
 * plan's Secret redaction (lua/core/redact.lua) hmac_sha256(key, s),
 * random_key() and b64_size(s) (only sha256 reaches the hook child). */
#include "hash.h"
#include "luax.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

/* Large enough that syscalls cost little next to the digest, small
 * enough that the kernel's copy and the digest both hit cache: on the
 * bench VM 64-128 KiB took ~400 ms of CPU for 512 MiB, 256 KiB ~600,
 * openssl dgst (8 KiB reads) ~460 (tests/bench/bench_hash.sh). */
#ifndef HASH_BUFSIZE
#define HASH_BUFSIZE (128u << 10)
#endif

void uh_hex(const unsigned char *p, size_t n, char *out)
{
  static const char digits[] = "0123456789abcdef";
  size_t i;
  for (i = 0; i < n; i++) {
    out[2 * i] = digits[p[i] >> 4];
    out[2 * i + 1] = digits[p[i] & 15];
  }
  out[2 * n] = '\0';
}

int uh_sha256_init(uh_sha256_ctx *c)
{
  c->md = EVP_MD_CTX_new();
  if (!c->md)
    return -1;
  if (EVP_DigestInit_ex(c->md, EVP_sha256(), NULL) != 1) {
    uh_sha256_free(c);
    return -1;
  }
  return 0;
}

int uh_sha256_update(uh_sha256_ctx *c, const void *p, size_t n)
{
  if (!c->md)
    return -1;
  return EVP_DigestUpdate(c->md, p, n) == 1 ? 0 : -1;
}

/* The raw 32-byte digest; also releases the context. */
static int final_raw(uh_sha256_ctx *c, unsigned char out[32])
{
  unsigned int len = 0;
  int ok = c->md && EVP_DigestFinal_ex(c->md, out, &len) == 1 && len == 32;
  uh_sha256_free(c);
  return ok ? 0 : -1;
}

int uh_sha256_final(uh_sha256_ctx *c, char hex[UH_SHA256_HEXLEN + 1])
{
  unsigned char raw[32];
  if (final_raw(c, raw) != 0)
    return -1;
  uh_hex(raw, sizeof raw, hex);
  return 0;
}

void uh_sha256_free(uh_sha256_ctx *c)
{
  EVP_MD_CTX_free(c->md);
  c->md = NULL;
}

int uh_sha256_raw(const void *p, size_t n, unsigned char out[32])
{
  unsigned int len = 0;
  return EVP_Digest(p, n, out, &len, EVP_sha256(), NULL) == 1 && len == 32
         ? 0 : -1;
}

int uh_sha256_hex(const void *p, size_t n, char hex[UH_SHA256_HEXLEN + 1])
{
  unsigned char raw[32];
  if (uh_sha256_raw(p, n, raw) != 0)
    return -1;
  uh_hex(raw, sizeof raw, hex);
  return 0;
}

int uh_sha256_fd(int fd, char hex[UH_SHA256_HEXLEN + 1])
{
  uh_sha256_ctx c;
  unsigned char *buf;
  ssize_t r;
  int saved;

  buf = malloc(HASH_BUFSIZE);
  if (!buf || uh_sha256_init(&c) != 0) {
    free(buf);
    errno = ENOMEM;
    return -1;
  }
  /* Advice only: failure (a pipe, say) changes nothing. */
  (void)posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  for (;;) {
    r = read(fd, buf, HASH_BUFSIZE);
    if (r == 0)
      break;
    if (r < 0) {
      if (errno == EINTR)
        continue;
      goto fail;
    }
    if (uh_sha256_update(&c, buf, (size_t)r) != 0) {
      errno = EIO;
      goto fail;
    }
  }
  free(buf);
  return uh_sha256_final(&c, hex);
fail:
  saved = errno;
  uh_sha256_free(&c);
  free(buf);
  errno = saved;
  return -1;
}

/* ---- Lua binding ---- */

static int hash_sha256(lua_State *L)
{
  size_t n;
  const char *s = luaL_checklstring(L, 1, &n);
  char hex[UH_SHA256_HEXLEN + 1];
  if (uh_sha256_hex(s, n, hex) != 0)
    return luaL_error(L, "sha256: %s", uh_strerror(UH_ENOMEM));
  lua_pushlstring(L, hex, UH_SHA256_HEXLEN);
  return 1;
}

static int hash_file(lua_State *L)
{
  const char *path = luaL_checkstring(L, 1);
  char hex[UH_SHA256_HEXLEN + 1];
  struct stat st;
  int fd, err;

  luaL_argcheck(L, path[0] == '/', 1, "absolute path expected");
  /* O_NONBLOCK so that a FIFO cannot stall the parent. */
  fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0)
    goto fail;
  if (fstat(fd, &st) != 0)
    goto fail;
  if (!S_ISREG(st.st_mode)) {
    errno = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
    goto fail;
  }
  if (uh_sha256_fd(fd, hex) != 0)
    goto fail;
  close(fd);
  lua_pushlstring(L, hex, UH_SHA256_HEXLEN);
  return 1;
fail:
  err = errno;
  if (fd >= 0)
    close(fd);
  lua_pushnil(L);
  lua_pushfstring(L, "cannot hash %s: %s", path,
                  err == EINVAL ? "not a regular file" : strerror(err));
  return 2;
}

/* b64_size(s) -> the bytes base64 text decodes to (the standard alphabet,
 * padded, no white space: a Secret's data value as the API server stores
 * it), or nil when s is not that. A scan in C: the Lua pattern it
 * replaced took ~26 ms on the ~0.8 MB of a Helm release Secret. */
static int hash_b64_size(lua_State *L)
{
  size_t n, i, pad = 0;
  const unsigned char *s = (const unsigned char *)luaL_checklstring(L, 1,
                                                                    &n);
  if (n % 4 != 0)
    goto fail;
  if (n > 0 && s[n - 1] == '=')
    pad = n > 1 && s[n - 2] == '=' ? 2 : 1;
  for (i = 0; i < n - pad; i++) {
    unsigned char ch = s[i];
    if (!((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z')
          || (ch >= '0' && ch <= '9') || ch == '+' || ch == '/'))
      goto fail;
  }
  lua_pushinteger(L, (lua_Integer)(n / 4 * 3 - pad));
  return 1;
fail:
  luaL_pushfail(L);
  return 1;
}

/* hmac_sha256(key, s) -> 64 hex digits (OpenSSL's HMAC). */
static int hash_hmac_sha256(lua_State *L)
{
  size_t klen, n;
  const char *key = luaL_checklstring(L, 1, &klen);
  const char *s = luaL_checklstring(L, 2, &n);
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int mdlen = 0;
  char hex[2 * EVP_MAX_MD_SIZE + 1];
  luaL_argcheck(L, klen >= 16 && klen <= 1024, 1, "a key of 16 to 1024 "
                "bytes expected");
  if (!HMAC(EVP_sha256(), key, (int)klen, (const unsigned char *)s, n, md,
            &mdlen))
    return luaL_error(L, "hmac_sha256: OpenSSL failed");
  uh_hex(md, mdlen, hex);
  lua_pushlstring(L, hex, 2 * (size_t)mdlen);
  return 1;
}

/* random_key() -> 32 bytes from OpenSSL's CSPRNG. */
static int hash_random_key(lua_State *L)
{
  unsigned char k[32];
  if (RAND_bytes(k, sizeof k) != 1)
    return luaL_error(L, "random_key: OpenSSL has no randomness");
  lua_pushlstring(L, (const char *)k, sizeof k);
  OPENSSL_cleanse(k, sizeof k);
  return 1;
}

static const luaL_Reg hash_funcs[] = {
  {"b64_size", hash_b64_size},
  {"file", hash_file},
  {"hmac_sha256", hash_hmac_sha256},
  {"random_key", hash_random_key},
  {"sha256", hash_sha256},
  {NULL, NULL}
};

int luaopen_uphook_hash(lua_State *L)
{
  luaL_newlib(L, hash_funcs);
  return 1;
}

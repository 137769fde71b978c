/* SHA-256 through OpenSSL EVP: one-shot, streaming from an fd, and an
 * incremental context for callers that hash while they copy (downloads).
 * Digests are written as 64 lowercase hex characters plus a NUL. */
#ifndef UH_HASH_H
#define UH_HASH_H
#include <stddef.h>
#include <lua.h>

#define UH_SHA256_HEXLEN 64

typedef struct uh_sha256_ctx {
  struct evp_md_ctx_st *md;   /* EVP_MD_CTX, opaque here */
} uh_sha256_ctx;

/* All return 0 on success, -1 on failure (out of memory or an EVP error;
 * uh_sha256_fd also on a read error, with errno set). */
int uh_sha256_init(uh_sha256_ctx *c);
int uh_sha256_update(uh_sha256_ctx *c, const void *p, size_t n);
/* Writes the digest and releases the context (even on failure). */
int uh_sha256_final(uh_sha256_ctx *c, char hex[UH_SHA256_HEXLEN + 1]);
/* Releases a context without finishing it (error paths). */
void uh_sha256_free(uh_sha256_ctx *c);

int uh_sha256_hex(const void *p, size_t n, char hex[UH_SHA256_HEXLEN + 1]);
int uh_sha256_raw(const void *p, size_t n, unsigned char out[32]);
/* Hashes everything from the fd's current offset to EOF. */
int uh_sha256_fd(int fd, char hex[UH_SHA256_HEXLEN + 1]);

void uh_hex(const unsigned char *p, size_t n, char *out);   /* 2n+1 bytes */

int luaopen_uphook_hash(lua_State *L);

#endif

/* The wiped credential arena, and the one way to read a credential file.
 *
 * An arena is anonymous memory mapped MADV_WIPEONFORK and MADV_DONTDUMP:
 * the hook child, forked from the broker, finds zeros there, and core
 * dumps leave it out (docs/security.md, "Credentials").  Allocation only
 * bumps a pointer; the used part is wiped and the whole arena unmapped at
 * once.  The kubeconfig's credentials (host/kubeconfig.c) and the
 * cluster-agent callback token (host/agent.c) live in one each.
 */
#ifndef UH_ARENA_H
#define UH_ARENA_H
#include <stddef.h>
#include "luax.h"

typedef struct uh_arena {
  unsigned char *base;          /* NULL: not mapped */
  size_t len, used;
} uh_arena;

/* Map len bytes.  UH_ENOMEM when mmap fails. */
uh_err uh_arena_open(uh_arena *a, size_t len);

/* Room for n bytes plus a NUL (set), or NULL when the arena is full. */
char *uh_arena_take(uh_arena *a, size_t n);

/* Wipe what was used and unmap.  Safe on a zeroed or freed arena. */
void uh_arena_free(uh_arena *a);

/* keep != 0: the next forks keep the arena (MADV_KEEPONFORK); 0: they
 * find zeros again (MADV_WIPEONFORK).  For forks that are not hook
 * children: the test workers, posix_spawn where it forks. */
void uh_arena_keep_on_fork(uh_arena *a, int keep);

/* The process's environment, moved into an arena (host/environ.c;
 * docs/security.md "Inherited environment" and "Credentials"): environ
 * points there, and the strings the kernel put on the initial stack are
 * zeroed, so a forked hook child holds none of them.  Call first thing in
 * main. */
void uh_env_seal(void);
/* uh_arena_keep_on_fork for the environment's arena. */
void uh_env_keep_on_fork(int keep);

/* Read the whole regular file `path` (at most max bytes) into a malloc'd,
 * NUL-terminated buffer.  UH_ENOENT, UH_EIO (*errnum says why), UH_ELIMIT
 * or UH_ENOMEM.  The caller hands it back to uh_secret_drop. */
uh_err uh_secret_read(const char *path, size_t max, char **out,
                      size_t *outlen, int *errnum);

/* Wipe len bytes of buf, then free it (NULL is fine). */
void uh_secret_drop(char *buf, size_t len);

#endif

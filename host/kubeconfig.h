/* Kubeconfig discovery and parsing for the Kubernetes REST client.
 *
 * The file is found as docs/contract.md §1 says (--kubeconfig, then
 * $SNAP_DATA/credentials/client.config, then the first existing entry of
 * $KUBECONFIG, then ~/.kube/config) and read with libyaml.  Only the
 * current context matters: its cluster (server, CA, insecure flag) and
 * its user (client certificate and key, bearer token or token file,
 * basic auth).
 *
 * Credentials are kept in a private arena mapped MADV_WIPEONFORK and
 * MADV_DONTDUMP: the hook child, forked from this process, sees zeros
 * there, and core dumps leave them out.  Every file a credential came
 * from (cert, key, CA, token file) is read at load time, so the blobs go
 * to libcurl as *_BLOB options.  Errors name the file and the field,
 * never a value.
 */
#ifndef UH_KUBECONFIG_H
#define UH_KUBECONFIG_H
#include <limits.h>
#include <stddef.h>
#include "arena.h"
#include "luax.h"

#define UH_KC_SERVER_MAX 1024
#define UH_KC_NAME_MAX 256

typedef struct uh_kc_blob {
  const char *data;   /* in the arena; NUL-terminated */
  size_t len;         /* 0: absent */
} uh_kc_blob;

typedef struct uh_kubeconfig {
  char file[PATH_MAX];               /* the kubeconfig that was read */
  char server[UH_KC_SERVER_MAX];     /* https://host:port, no trailing / */
  char context[UH_KC_NAME_MAX];
  char nsdefault[UH_KC_NAME_MAX];    /* the context's namespace, or "" */
  int insecure;                      /* insecure-skip-tls-verify */
  uh_kc_blob ca, cert, key;          /* PEM */
  uh_kc_blob token, username, password;
  uh_arena arena;                    /* mmap'd, wiped on fork (arena.h) */
} uh_kubeconfig;

/* Where the lookup order finds a kubeconfig.  `explicit_path` (from
 * --kubeconfig) wins even when it does not exist, so that its absence
 * is reported.  NULL arguments skip that step.  UH_ENOENT with the
 * places tried in err when none exists. */
uh_err uh_kubeconfig_find(const char *explicit_path, const char *snap_data,
                          const char *kubeconfig_env, const char *home,
                          char *out, size_t outlen, char *err,
                          size_t errlen);

/* Read and resolve `path`.  On failure kc holds nothing to free and err
 * says which file and field is wrong (UH_ENOENT, UH_EPARSE, UH_EINVAL,
 * UH_EIO, UH_ELIMIT, UH_ENOMEM). */
uh_err uh_kubeconfig_load(const char *path, uh_kubeconfig *kc, char *err,
                          size_t errlen);

/* Wipe and unmap the credentials. Safe on a zeroed or freed kc. */
void uh_kubeconfig_free(uh_kubeconfig *kc);

#endif

/* The environment, kept out of the hook child (docs/security.md
 * "Inherited environment" and "Credentials").
 *
 * uphook's environment can hold proxy passwords and cloud keys, and a
 * forked child inherits every page of its parent.  So, first thing in
 * main, the environment is copied into a wiped arena (arena.h:
 * MADV_WIPEONFORK, the way the kubeconfig's credentials are kept),
 * `environ` points there, and the strings the kernel placed on the
 * initial stack are zeroed: a hook child forked later finds zeros in
 * both places (and an empty environ), while the broker reads its
 * environment as before.  Forks that are not hook children and need the
 * environment (the test workers, posix_spawn where it forks) keep it
 * with uh_env_keep_on_fork. */
#include "arena.h"
#include <string.h>
#include <unistd.h>

extern char **environ;

static uh_arena g_env;

void uh_env_seal(void)
{
  size_t n = 0, bytes = 0, i;
  char **table;
  if (!environ || g_env.base)
    return;
  for (; environ[n]; n++)
    bytes += strlen(environ[n]) + 1;
  /* the pointer table first (the arena starts page-aligned), then the
   * strings; uh_arena_take adds one byte per piece */
  if (uh_arena_open(&g_env, (n + 1) * sizeof *table + bytes + n + 64)
      != UH_OK)
    return;   /* no arena: the environment stays where it is */
  table = (char **)(void *)uh_arena_take(&g_env, (n + 1) * sizeof *table);
  for (i = 0; i < n; i++) {
    size_t len = strlen(environ[i]);
    char *p = uh_arena_take(&g_env, len);
    memcpy(p, environ[i], len);
    explicit_bzero(environ[i], len);
    table[i] = p;
  }
  table[n] = NULL;
  environ = table;
}

void uh_env_keep_on_fork(int keep)
{
  uh_arena_keep_on_fork(&g_env, keep);
}

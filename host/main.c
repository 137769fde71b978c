/* uphook: upgrade MicroK8s addons with sandboxed Lua hooks.
 *
 * The command line (docs/contract.md §1).  `version` answers without starting Lua;
 * everything else builds the parent state and hands a table of options
 * to lua/cmd/cli.lua, which owns the policy. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <lua.h>
#include <lauxlib.h>
#include "cli.h"
#include "host.h"
#include "broker.h"
#include "arena.h"
#include "version.h"

/* Only set flags (and write(2), which is async-signal-safe): the broker
 * and every wait poll uh_interrupted and roll back.  A signal during the
 * rollback sets uh_abandoned: the rollback's waits end at once, it takes
 * no further step, and the journal is kept for `uphook recover`
 * (docs/state.md "Signals"). */
static void on_signal(int sig)
{
  static const char msg[] = "\nuphook: stopping the rollback: its waits end "
                            "now; the journal is kept for uphook recover\n";
  (void)sig;
  if (uh_rolling_back) {
    if (!uh_abandoned) {
      ssize_t r = write(2, msg, sizeof msg - 1);
      (void)r;
    }
    uh_abandoned = 1;
    return;
  }
  uh_interrupted = 1;
}

/* Test-only: UPHOOK_TEST_RUSAGE=FILE gets this process's own peak RSS
 * ("maxrss_kib N"), without the hook child's: the hostile suite holds
 * the broker to a ceiling (tests/hostile/hostile_test.sh). */
static void report_rusage(const char *path)
{
  struct rusage ru;
  FILE *f;
  if (!path || !*path || getrusage(RUSAGE_SELF, &ru) != 0)
    return;
  if ((f = fopen(path, "w")) != NULL) {
    fprintf(f, "maxrss_kib %ld\n", ru.ru_maxrss);
    fclose(f);
  }
}

static void install_signals(void)
{
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  signal(SIGPIPE, SIG_IGN);
}

int main(int argc, char **argv)
{
  struct uh_cli cli;
  int rc;
  uh_env_seal();   /* first: no hook child ever holds the environment */
  rc = uh_cli_parse(&cli, argc, argv);
  if (rc >= 0)
    return rc;                     /* usage error or --help, answered */
  if (strcmp(cli.command, "version") == 0) {
    if (cli.json)   /* the one result event (docs/output.md) */
      printf("{\"event\":\"result\",\"code\":0,\"command\":\"version\","
             "\"version\":\"%s\",\"lua\":\"%s.%s\"}\n", UPHOOK_VERSION,
             LUA_VERSION_MAJOR, LUA_VERSION_MINOR);
    else
      printf("uphook %s (Lua %s.%s)\n", UPHOOK_VERSION, LUA_VERSION_MAJOR,
             LUA_VERSION_MINOR);
    uh_cli_free(&cli);
    return 0;
  }
  const char *rusage_file = getenv("UPHOOK_TEST_RUSAGE");
  install_signals();
  rc = uh_cli_run(&cli, UPHOOK_VERSION);
  uh_cli_free(&cli);
  report_rusage(rusage_file);
  return rc;
}

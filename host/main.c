/* uphook: upgrade MicroK8s addons with sandboxed Lua hooks.
 *
 * The command line (SPEC §1).  `version` answers without starting Lua;
 * everything else builds the parent state and hands a table of options
 * to lua/cli.lua, which owns the policy. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <lua.h>
#include <lauxlib.h>
#include "cli.h"
#include "host.h"
#include "supervise.h"

#define UPHOOK_VERSION "0.1.0"

static const char usage_text[] =
  "usage: uphook [options] <command> [args...]\n"
  "\n"
  "commands:\n"
  "  upgrade <addon> [args...]  upgrade one addon\n"
  "  plan <addon> [args...]     print every change upgrade would make\n"
  "  list                       every addon found, with versions\n"
  "  recover <addon>            finish the rollback of an interrupted upgrade\n"
  "  test [path...]             run *_test.lua hook tests offline\n"
  "  lint [path...]             load hooks and check their declarations\n"
  "  version                    print the version\n"
  "\n"
  "options (before or after the command):\n"
  "  --addons DIR        an extra addon repository (repeatable)\n"
  "  --kubeconfig FILE   cluster credentials\n"
  "  --offline FIXTURE   use a mock cluster seeded from FIXTURE\n"
  "  --state-dir DIR     journal and local state\n"
  "  --output human|json\n"
  "  --timeout SECONDS   bound on the whole upgrade (default 900)\n"
  "  --memory-limit MIB  cap on the hook's Lua memory (default 256)\n"
  "  -v, -q              more or less output\n"
  "\n"
  "Run 'uphook <command> --help' for a command's own options.\n";

/* Only set flags (and write(2), which is async-signal-safe): the broker
 * polls uh_interrupted and rolls back.  During the rollback a second
 * signal is refused, so that the rollback completes. */
static void on_signal(int sig)
{
  static const char msg[] = "\nuphook: rolling back; it will finish "
                            "before uphook exits\n";
  (void)sig;
  if (uh_rolling_back) {
    ssize_t r = write(2, msg, sizeof msg - 1);
    (void)r;
    return;
  }
  uh_interrupted = 1;
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
  int rc = uh_cli_parse(&cli, argc, argv);
  if (rc >= 0)
    return rc;                     /* usage error or --help, answered */
  if (strcmp(cli.command, "version") == 0) {
    printf("uphook %s (Lua %s.%s)\n", UPHOOK_VERSION, LUA_VERSION_MAJOR,
           LUA_VERSION_MINOR);
    uh_cli_free(&cli);
    return 0;
  }
  if (strcmp(cli.command, "help") == 0) {
    fputs(usage_text, stdout);
    uh_cli_free(&cli);
    return 0;
  }
  install_signals();
  rc = uh_cli_run(&cli, UPHOOK_VERSION);
  uh_cli_free(&cli);
  return rc;
}

const char *uh_usage_text(void)
{
  return usage_text;
}

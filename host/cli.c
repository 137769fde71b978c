/* Command-line parsing (docs/contract.md §1) and dispatch to the Lua engine. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <lua.h>
#include <lauxlib.h>
#include "addons.h"
#include "cli.h"
#include "families.h"
#include "host.h"

static const struct {
  const char *name, *args, *help;
} commands[] = {
  { "upgrade", "<addon> [args...]", "Upgrade one addon with its upgrade.lua "
    "hook (what `microk8s upgrade <addon>` runs).\n"
    "  --reset-params       forget the saved parameters, start from defaults\n"
    "  --lock-wait SECONDS  wait this long for the addon lock (default 10)\n"
    "  --ca-file FILE       CA bundle for downloads\n"
    "Hook parameters are --name=value or --name value; positional\n"
    "arguments reach the hook as ctx.positional.\n" },
  { "plan", "<addon> [args...]", "Print every change upgrade would make, "
    "and change nothing.\n"
    "  --plan-fetch         check with HEAD that every download answers\n"
    "  --output json        the plan as JSON\n" },
  { "list", "", "List every addon found: repository, enabled, installed "
    "version,\nthe hook's target version and whether it can be upgraded.\n"
    "  --output json        one JSON object per addon\n" },
  { "recover", "<addon>", "Finish the rollback of an interrupted upgrade "
    "from its journal.\n" },
  { "test", "[path...]", "Run *_test.lua hook tests offline (default: "
    "hooks/).\n"
    "  --junit FILE         also write JUnit XML\n"
    "  --filter TEXT        only tests whose name contains TEXT\n"
    "  --jobs N             run a file's cases in N workers (default: CPUs)\n" },
  { "lint", "[path...]", "Load hooks without running them and check their "
    "declarations.\n" },
  { "version", "", "Print the version.\n" },
};

#define NCOMMANDS (sizeof commands / sizeof commands[0])

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

const char *uh_usage_text(void)
{
  return usage_text;
}

static int usage_error(const char *fmt, const char *arg)
{
  fputs("uphook: ", stderr);
  fprintf(stderr, fmt, arg);
  fputs("\nRun 'uphook --help' for usage.\n", stderr);
  return 2;
}

static int command_help(const char *cmd)
{
  size_t i;
  for (i = 0; i < NCOMMANDS; i++)
    if (strcmp(commands[i].name, cmd) == 0) {
      printf("usage: uphook %s %s\n\n%s\nGlobal options: see 'uphook "
             "--help'.\n", cmd, commands[i].args, commands[i].help);
      return 0;
    }
  return 2;
}

static int parse_number(const char *opt, const char *s, double *out)
{
  char *end;
  errno = 0;
  *out = strtod(s, &end);
  if (errno || end == s || *end || *out < 0 || *out > 1e7)
    return usage_error("%s needs a non-negative number", opt);
  return -1;
}

/* Options that take a value; returns where the value is stored. */
static const char **string_opt(struct uh_cli *c, const char *name)
{
  static const char *scratch;
  if (!strcmp(name, "--kubeconfig")) return &c->kubeconfig;
  if (!strcmp(name, "--offline")) return &c->offline;
  if (!strcmp(name, "--state-dir")) return &c->state_dir;
  if (!strcmp(name, "--output")) return &c->output;
  if (!strcmp(name, "--junit")) return &c->junit;
  if (!strcmp(name, "--filter")) return &c->filter;
  if (!strcmp(name, "--ca-file")) return &c->ca_file;
  if (!strcmp(name, "--addons") || !strcmp(name, "--timeout")
      || !strcmp(name, "--memory-limit") || !strcmp(name, "--lock-wait")
      || !strcmp(name, "--jobs"))
    return &scratch;
  return NULL;
}

/* Store the value of a value option; -1 on success. */
static int set_value(struct uh_cli *c, const char *name, const char *v)
{
  double d;
  int rc;
  if (!strcmp(name, "--addons")) {
    if (c->naddons == UH_CLI_MAX_ADDONS)
      return usage_error("too many %s folders", name);
    c->addons[c->naddons++] = v;
  } else if (!strcmp(name, "--timeout")) {
    if ((rc = parse_number(name, v, &d)) >= 0) return rc;
    c->timeout = d;
  } else if (!strcmp(name, "--lock-wait")) {
    if ((rc = parse_number(name, v, &d)) >= 0) return rc;
    c->lock_wait = d;
  } else if (!strcmp(name, "--jobs")) {
    if ((rc = parse_number(name, v, &d)) >= 0) return rc;
    if (d < 1 || d > 256)
      return usage_error("%s must be between 1 and 256", name);
    c->jobs = (int)d;
  } else if (!strcmp(name, "--memory-limit")) {
    if ((rc = parse_number(name, v, &d)) >= 0) return rc;
    if (d < 1 || d > 65536)
      return usage_error("%s must be between 1 and 65536 MiB", name);
    c->memory_limit = (long)d;
  } else {
    *string_opt(c, name) = v;
  }
  if (!strcmp(name, "--output") && strcmp(v, "human") && strcmp(v, "json"))
    return usage_error("--output must be human or json, got '%s'", v);
  return -1;
}

static int known_command(const char *s)
{
  size_t i;
  for (i = 0; i < NCOMMANDS; i++)
    if (strcmp(commands[i].name, s) == 0)
      return 1;
  return 0;
}

/* One argument: an option (maybe consuming the next), the command, or an
 * operand.  Returns -1 to go on, or an exit code. */
static int parse_one(struct uh_cli *c, int argc, char **argv, int *i,
                     int *help, int *dashdash)
{
  char name[64];
  const char *a = argv[*i], *eq;
  if (*dashdash || a[0] != '-' || !a[1])
    goto operand;
  if (!strcmp(a, "--")) { *dashdash = 1; return -1; }
  if (!strcmp(a, "-h") || !strcmp(a, "--help")) { *help = 1; return -1; }
  if (!strcmp(a, "-v")) { c->verbosity++; return -1; }
  if (!strcmp(a, "-q")) { c->verbosity--; return -1; }
  if (!strcmp(a, "--plan-fetch")) { c->plan_fetch = 1; return -1; }
  eq = strchr(a, '=');
  snprintf(name, sizeof name, "%.*s", eq ? (int)(eq - a) : 63, a);
  if (string_opt(c, name)) {
    if (eq)
      return set_value(c, name, eq + 1);
    if (*i + 1 >= argc)
      return usage_error("%s needs a value", name);
    return set_value(c, name, argv[++*i]);
  }
  /* an unknown --option after an addon name belongs to the hook */
  if (c->command && (!strcmp(c->command, "upgrade")
      || !strcmp(c->command, "plan")) && c->nrest > 0)
    goto operand;
  return usage_error("unknown option '%s'", a);
operand:
  if (!c->command) {
    if (!known_command(a))
      return usage_error("unknown command '%s'", a);
    c->command = a;
  } else {
    c->rest[c->nrest++] = a;
  }
  return -1;
}

int uh_cli_parse(struct uh_cli *c, int argc, char **argv)
{
  int i, rc, help = 0, dashdash = 0;
  memset(c, 0, sizeof *c);
  c->timeout = 900;
  c->lock_wait = 10;
  c->memory_limit = 256;
  c->rest = calloc((size_t)argc + 1, sizeof *c->rest);
  if (!c->rest)
    return 1;
  for (i = 1; i < argc; i++)
    if ((rc = parse_one(c, argc, argv, &i, &help, &dashdash)) >= 0) {
      uh_cli_free(c);
      return rc;
    }
  if (help || !c->command) {
    rc = c->command ? command_help(c->command)
                    : (fputs(uh_usage_text(), help ? stdout : stderr),
                       help ? 0 : 2);
    uh_cli_free(c);
    return rc;
  }
  return -1;
}

void uh_cli_free(struct uh_cli *c)
{
  free(c->rest);
  c->rest = NULL;
}

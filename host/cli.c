/* Command-line parsing (docs/contract.md §1).
 *
 * One table of commands and one of options: the usage texts, the check
 * that an option applies to its command, and the list of names no hook
 * parameter may take are all made from them.
 *
 * Decisions:
 * - Options go before or after the command.  After the addon name of
 *   `upgrade` and `plan` every argument belongs to the hook except
 *   uphook's long options (any name of the table), so that `-n`, `-y` or
 *   `-V` reach the hook, whose declarations decide (exit 2 when it does
 *   not declare them).  `--` ends uphook's options: what follows is the
 *   hook's as it is.
 * - Short flags combine (`-vq`, `-vv`).  `-V`/`--version` only before a
 *   command: after an addon, `-V` is the hook's (a chart version).
 * - An option that does not apply to the command, and an extra operand,
 *   are usage errors (exit 2): `list extra`, `version --jobs 2`.
 * - With `--output json` anywhere on the line, a usage error is an error
 *   event and a result event on stdout, like every other ending. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include <lua.h>
#include <lauxlib.h>
#include "cli.h"
#include "luax.h"
#include "version.h"
#include "json.h"
#include "osutil.h"

enum {
  CMD_UPGRADE = 1u << 0, CMD_PLAN = 1u << 1, CMD_LIST = 1u << 2,
  CMD_RECOVER = 1u << 3, CMD_TEST = 1u << 4, CMD_LINT = 1u << 5,
  CMD_VERSION = 1u << 6, CMD_HELP = 1u << 7, CMD_DOCTOR = 1u << 8,
  CMD_FIXTURE = 1u << 9, CMD_HISTORY = 1u << 10,
};
#define CMD_HOOKS (CMD_UPGRADE | CMD_PLAN)
#define CMD_CLUSTER (CMD_HOOKS | CMD_LIST | CMD_RECOVER | CMD_DOCTOR \
                     | CMD_FIXTURE | CMD_HISTORY)
#define CMD_ALL 0xffffu

static const struct command {
  const char *name;
  unsigned bit;
  int min, max;                /* operands (the addon, paths); -1: any */
  const char *args, *summary, *help;
} commands[] = {
  { "upgrade", CMD_UPGRADE, 1, 1, "<addon> [args...]", "upgrade one addon",
    "Upgrade one addon with its upgrade.lua hook (what `microk8s upgrade\n"
    "<addon>` runs). The addon is NAME, REPO/NAME, or MicroK8s's colon\n"
    "form NAME:ARG1:ARG2. After it every argument is the hook's except\n"
    "uphook's long options; `--` ends those. 'uphook upgrade <addon>\n"
    "--help' lists the hook's parameters.\n" },
  { "plan", CMD_PLAN, 1, 1, "<addon> [args...]",
    "print every change upgrade would make",
    "Print every change upgrade would make, and change nothing (the same\n"
    "as upgrade --dry-run). Arguments as for upgrade.\n" },
  { "list", CMD_LIST, 0, 0, "", "every addon found, with versions",
    "List every addon found: repository, enabled, installed version, the\n"
    "hook's version and whether it can be upgraded; an interrupted upgrade\n"
    "shows as 'interrupted: run recover'.\n" },
  { "doctor", CMD_DOCTOR, 0, 0, "", "what a snap refresh broke, and the fix",
    "Report what stops addons from working after a snap refresh, each\n"
    "with what fixes it: API versions their YAML files use that the\n"
    "cluster no longer serves or that the next Kubernetes minor removes,\n"
    "addon repositories older than the snap's copy, kubelet settings that\n"
    "differ between nodes, and each addon's versions and upgrade. Exit 1\n"
    "when anything is found.\n" },
  { "recover", CMD_RECOVER, 1, 1, "<addon>",
    "finish the rollback of an interrupted upgrade",
    "Finish the rollback of an interrupted upgrade from its journal, then\n"
    "say which version the addon is left at and what to run next. With\n"
    "--accept-current: undo nothing, keep the cluster as it is now, archive\n"
    "the journal and record 'accepted' in the history (asks; --yes).\n" },
  { "history", CMD_HISTORY, 1, 1, "<addon>", "the runs the state records",
    "Print the runs uphook's state records for the addon (the last 10):\n"
    "versions, result, when, by which node, parameters, permissions.\n" },
  { "fixture", CMD_FIXTURE, 1, 1, "<addon>",
    "print a test fixture of the addon's objects",
    "Print, as YAML for t.env{cluster = ...} and --offline, the cluster as\n"
    "the addon sees it: the objects its YAML files name and the ones\n"
    "labelled as its own (with the custom objects of its CRDs and the\n"
    "volumes of its claims), every Node and uphook's state ConfigMap; the\n"
    "server's own metadata dropped, managedFields kept, every value of a\n"
    "Secret replaced. 'uphook fixture dns > fixtures/cluster-x.yaml'.\n" },
  { "test", CMD_TEST, 0, -1, "[path...]", "run *_test.lua hook tests offline",
    "Run the *_test.lua hook tests under the paths offline (default: .,\n"
    "the addon repository). Ends with 'N passed, N failed'; a path that\n"
    "does not exist is a usage error (exit 2).\n" },
  { "lint", CMD_LINT, 0, -1, "[path...]",
    "load hooks and check their declarations",
    "Load hooks without running them and check their declarations\n"
    "(default: .). Exit 1 when anything is found, 2 when a path does not\n"
    "exist.\n" },
  { "version", CMD_VERSION, 0, 0, "", "print the version",
    "Print the version (also: uphook --version, uphook -V).\n" },
  { "help", CMD_HELP, 0, 2, "[command [addon]]",
    "this usage, or a command's (an addon's)",
    "Print the usage, a command's ('uphook help upgrade'), or an addon's\n"
    "parameters ('uphook help upgrade dns').\n" },
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

enum kind { K_FLAG, K_STR, K_NUM, K_INT, K_ADDONS, K_VERBOSE, K_QUIET,
            K_HELP, K_VERSION };
#define OFF(f) offsetof(struct uh_cli, f)

static const struct option {
  const char *name;
  char shortc;
  enum kind kind;
  size_t off;
  const char *arg;             /* the value's name; NULL for a flag */
  unsigned cmds;               /* where it applies; 0: before a command */
  double min, max;
  const char *help;
} options[] = {
  { "--help", 'h', K_HELP, 0, NULL, CMD_ALL, 0, 0,
    "usage (of the command; of the addon's hook)" },
  { "--version", 'V', K_VERSION, 0, NULL, 0, 0, 0,
    "print the version (before any command)" },
  { "--verbose", 'v', K_VERBOSE, 0, NULL, CMD_ALL, 0, 0,
    "more output; a failed hook's traceback too" },
  { "--quiet", 'q', K_QUIET, 0, NULL, CMD_ALL, 0, 0,
    "less: only warnings, errors, the outcome" },
  { "--addons", 0, K_ADDONS, 0, "DIR", CMD_CLUSTER, 0, 0,
    "an extra addon repository (repeatable)" },
  { "--kubeconfig", 0, K_STR, OFF(kubeconfig), "FILE", CMD_CLUSTER, 0, 0,
    "cluster credentials" },
  { "--offline", 0, K_STR, OFF(offline), "FIXTURE", CMD_CLUSTER, 0, 0,
    "a mock cluster seeded from FIXTURE" },
  { "--state-dir", 0, K_STR, OFF(state_dir), "DIR", CMD_CLUSTER, 0, 0,
    "journal, download cache, addons' files" },
  { "--output", 0, K_STR, OFF(output), "human|json",
    CMD_CLUSTER | CMD_VERSION, 0, 0,
    "text, or JSON events, one per line" },
  { "--timeout", 0, K_NUM, OFF(timeout), "SECONDS", CMD_CLUSTER | CMD_LINT,
    0, 1e7, "bound on the whole run (default " UH_STR(UH_DEFAULT_TIMEOUT)
    "; list, lint 15)" },
  { "--memory-limit", 0, K_INT, OFF(memory_limit), "MIB",
    CMD_HOOKS | CMD_LIST | CMD_LINT | CMD_DOCTOR, 1, 65536,
    "cap on each hook's Lua memory (default 256)" },
  { "--state-quota", 0, K_INT, OFF(state_quota), "MIB", CMD_HOOKS, 0,
    65536, "cap on the addon's state: files (default 16)" },
  { "--reset-params", 0, K_FLAG, OFF(reset_params), NULL, CMD_HOOKS, 0, 0,
    "start from the defaults, not saved params" },
  { "--yes", 0, K_FLAG, OFF(yes), NULL, CMD_HOOKS | CMD_RECOVER, 0, 0,
    "yes to new permissions, --accept-current (never to data loss)" },
  { "--allow-data-loss", 0, K_FLAG, OFF(allow_data_loss), NULL,
    CMD_UPGRADE, 0, 0, "yes to data-loss changes without a terminal" },
  { "--dry-run", 0, K_FLAG, OFF(dry_run), NULL, CMD_HOOKS | CMD_RECOVER, 0,
    0, "upgrade: plan; recover: what it would undo" },
  { "--accept-current", 0, K_FLAG, OFF(accept_current), NULL, CMD_RECOVER,
    0, 0, "keep the cluster as it is; archive the journal" },
  { "--lock-wait", 0, K_NUM, OFF(lock_wait), "SECONDS",
    CMD_UPGRADE | CMD_RECOVER, 0, 1e7,
    "wait for the addon lock (default 10)" },
  { "--ca-file", 0, K_STR, OFF(ca_file), "FILE", CMD_HOOKS, 0, 0,
    "CA bundle for downloads" },
  { "--helm", 0, K_STR, OFF(helm), "PATH", CMD_HOOKS | CMD_TEST, 0, 0,
    "Helm (default $SNAP/bin/helm, else on PATH)" },
  { "--plan-fetch", 0, K_FLAG, OFF(plan_fetch), NULL, CMD_PLAN, 0, 0,
    "check with HEAD that every download answers" },
  { "--full", 0, K_FLAG, OFF(full), NULL, CMD_PLAN, 0, 0,
    "CRD schema changes in full, not one line per CRD" },
  { "--junit", 0, K_STR, OFF(junit), "FILE", CMD_TEST, 0, 0,
    "also write JUnit XML" },
  { "--filter", 0, K_STR, OFF(filter), "TEXT", CMD_TEST, 0, 0,
    "only the tests whose name contains TEXT" },
  { "--jobs", 0, K_INT, OFF(jobs), "N", CMD_TEST, 1, 256,
    "a file's cases in N workers (default: CPUs)" },
};
#define NOPTIONS (sizeof options / sizeof options[0])
#define VERSION_OPTION 1       /* options[1] is --version */
_Static_assert(NOPTIONS <= UH_CLI_MAX_OPTIONS, "raise UH_CLI_MAX_OPTIONS");

/* ---- usage texts ---- */

static const struct command *find_command(const char *name)
{
  size_t i;
  for (i = 0; i < NCOMMANDS; i++)
    if (strcmp(commands[i].name, name) == 0)
      return &commands[i];
  return NULL;
}

static void print_option(FILE *f, const struct option *o)
{
  char head[64];
  if (o->shortc)
    snprintf(head, sizeof head, "-%c, %s", o->shortc, o->name);
  else
    snprintf(head, sizeof head, "    %s%s%s", o->name, o->arg ? " " : "",
             o->arg ? o->arg : "");
  fprintf(f, "  %-25s %s\n", head, o->help);
}

static void print_usage(FILE *f)
{
  size_t i;
  fputs("usage: uphook [options] <command> [args...]\n\ncommands:\n", f);
  for (i = 0; i < NCOMMANDS; i++) {
    char head[64];
    snprintf(head, sizeof head, "%s %s", commands[i].name, commands[i].args);
    fprintf(f, "  %-26s %s\n", head, commands[i].summary);
  }
  fputs("\noptions (before or after the command; after an addon only the "
        "long ones):\n", f);
  for (i = 0; i < NOPTIONS; i++)
    if (options[i].cmds == CMD_ALL || options[i].cmds == 0
        || (options[i].cmds & CMD_CLUSTER) == CMD_CLUSTER)
      print_option(f, &options[i]);
  fputs("\nRun 'uphook <command> --help' for a command's own options, and\n"
        "'uphook upgrade <addon> --help' for an addon's parameters.\n", f);
}

static void print_command_help(const struct command *cmd)
{
  size_t i;
  printf("usage: uphook %s%s%s\n\n%s\noptions:\n", cmd->name,
         *cmd->args ? " " : "", cmd->args, cmd->help);
  for (i = 0; i < NOPTIONS; i++)
    if (options[i].cmds & cmd->bit)
      print_option(stdout, &options[i]);
}

int uh_cli_given(const struct uh_cli *c, const char *name)
{
  size_t i;
  for (i = 0; i < NOPTIONS; i++)
    if (strcmp(options[i].name, name) == 0)
      return c->given[i];
  return 0;
}

static int cli_split(lua_State *L);

/* uphook.c.cli: {options = {"help", "version", ...}, split = fn}, uphook's long
 * option names without "--", which no hook parameter may take. */
int luaopen_uphook_cli(lua_State *L)
{
  size_t i;
  lua_createtable(L, 0, 3);
  lua_createtable(L, (int)NOPTIONS, 0);
  for (i = 0; i < NOPTIONS; i++) {
    lua_pushstring(L, options[i].name + 2);
    lua_rawseti(L, -2, (int)i + 1);
  }
  lua_setfield(L, -2, "options");
  lua_pushcfunction(L, cli_split);
  lua_setfield(L, -2, "split");
  lua_pushliteral(L, UPHOOK_VERSION);
  lua_setfield(L, -2, "version");
  return 1;
}

/* ---- endings ---- */

static void print_event(json_t *ev)
{
  uh_json_event(ev);
}

int uh_cli_fail(const struct uh_cli *c, int code, const char *addon,
                const char *msg)
{
  json_t *res;
  if (!c->json) {
    if (code == 3)
      printf("%s\n", msg);
    else
      fprintf(stderr, "uphook: %s\n", msg);
    fflush(stdout);
    return code;
  }
  print_event(json_pack("{s:s,s:s}", "event", "error", "message", msg));
  res = json_pack("{s:s,s:i,s:s}", "event", "result", "code", code, "error",
                  msg);
  if (res && c->command)
    json_object_set_new(res, "command", json_string(c->command));
  if (res && addon)
    json_object_set_new(res, "addon", json_string(addon));
  print_event(res);
  fflush(stdout);
  return code;
}

/* ---- parsing ---- */

struct parser {
  struct uh_cli *c;
  int argc, i, dashdash;
  char **argv;
  const struct command *cmd;
  char err[512];
};

static int usage(struct parser *p, const char *fmt, const char *arg)
{
  snprintf(p->err, sizeof p->err, fmt, arg);
  return 2;
}

static const struct option *find_long(const char *a, size_t n)
{
  size_t i;
  for (i = 0; i < NOPTIONS; i++)
    if (strlen(options[i].name) == n && !strncmp(options[i].name, a, n))
      return &options[i];
  return NULL;
}

static const struct option *find_short(char ch)
{
  size_t i;
  for (i = 0; i < NOPTIONS; i++)
    if (options[i].shortc == ch)
      return &options[i];
  return NULL;
}

static int set_number(struct parser *p, const struct option *o,
                      const char *v)
{
  char *end;
  double d;
  errno = 0;
  d = strtod(v, &end);
  if (errno || end == v || *end || d < o->min || d > o->max) {
    if (o->kind == K_NUM)
      return usage(p, "%s needs a non-negative number", o->name);
    snprintf(p->err, sizeof p->err, "%s must be a whole number from %g to "
             "%g, got '%s'", o->name, o->min, o->max, v);
    return 2;
  }
  if (o->kind == K_NUM)
    *(double *)((char *)p->c + o->off) = d;
  else if (d != (double)(long)d)
    return usage(p, "%s needs a whole number", o->name);
  else
    *(long *)((char *)p->c + o->off) = (long)d;
  return -1;
}

/* Store an option's effect; v is its value (NULL for a flag). */
static int apply(struct parser *p, const struct option *o, const char *v)
{
  struct uh_cli *c = p->c;
  c->given[o - options] = 1;
  switch (o->kind) {
  case K_HELP: c->help = 1; return -1;
  case K_VERSION: return -1;
  case K_VERBOSE: c->verbosity++; return -1;
  case K_QUIET: c->verbosity--; return -1;
  case K_FLAG: *(int *)((char *)c + o->off) = 1; return -1;
  case K_NUM: case K_INT: return set_number(p, o, v);
  case K_ADDONS:
    if (c->naddons == UH_CLI_MAX_ADDONS)
      return usage(p, "too many %s folders", o->name);
    c->addons[c->naddons++] = v;
    return -1;
  case K_STR:
    if (o->off == OFF(output) && strcmp(v, "human") && strcmp(v, "json"))
      return usage(p, "--output must be human or json, got '%s'", v);
    *(const char **)((char *)c + o->off) = v;
    return -1;
  }
  return -1;
}

static int long_option(struct parser *p, const char *a)
{
  const char *eq = strchr(a, '=');
  const struct option *o = find_long(a, eq ? (size_t)(eq - a) : strlen(a));
  if (!o)
    return usage(p, "unknown option '%s'", a);
  if (o->kind == K_VERSION && p->cmd)
    return usage(p, "%s goes before the command: uphook --version",
                 o->name);
  if (!o->arg) {
    if (eq)
      return usage(p, "%s takes no value", o->name);
    return apply(p, o, NULL);
  }
  if (eq)
    return apply(p, o, eq + 1);
  if (p->i + 1 >= p->argc)
    return usage(p, "%s needs a value", o->name);
  return apply(p, o, p->argv[++p->i]);
}

/* -v, -vq, -h: every short option of uphook is a flag. */
static int short_options(struct parser *p, const char *a)
{
  char bad[3] = "-?";
  int rc;
  for (a++; *a; a++) {
    const struct option *o = find_short(*a);
    bad[1] = *a;
    if (!o)
      return usage(p, "unknown option '%s'", bad);
    if (o->kind == K_VERSION && p->cmd)
      return usage(p, "%s goes before the command: uphook -V", bad);
    if ((rc = apply(p, o, NULL)) >= 0)
      return rc;
  }
  return -1;
}

static int operand(struct parser *p, const char *a)
{
  struct uh_cli *c = p->c;
  if (!p->cmd) {
    if (!(p->cmd = find_command(a))) {
      const char *names[NCOMMANDS], *near;
      for (size_t i = 0; i < NCOMMANDS; i++)
        names[i] = commands[i].name;
      if ((near = uh_closest(a, names, NCOMMANDS)) != NULL) {
        snprintf(p->err, sizeof p->err, "unknown command '%s'; did you mean "
                 "'%s'?", a, near);
        return 2;
      }
      return usage(p, "unknown command '%s'", a);
    }
    c->command = p->cmd->name;
  } else if ((p->cmd->bit & CMD_HOOKS) && c->nrest >= 1) {
    c->hook_args[c->nhook++] = a;
  } else {
    c->rest[c->nrest++] = a;
  }
  return -1;
}

/* After the addon name: is this argument the hook's? */
static int hooks_argument(const struct parser *p, const char *a)
{
  const char *eq;
  const struct option *o;
  if (!p->cmd || !(p->cmd->bit & CMD_HOOKS) || p->c->nrest < 1)
    return 0;
  if (a[1] != '-')
    return 1;                  /* short options after the addon */
  eq = strchr(a, '=');
  o = find_long(a, eq ? (size_t)(eq - a) : strlen(a));
  return !o || o->kind == K_VERSION;
}

static int parse_arg(struct parser *p)
{
  const char *a = p->argv[p->i];
  if (p->dashdash || a[0] != '-' || !a[1])
    return operand(p, a);
  if (!strcmp(a, "--")) {
    p->dashdash = 1;
    return -1;
  }
  if (hooks_argument(p, a)) {
    p->c->hook_args[p->c->nhook++] = a;
    return -1;
  }
  return a[1] == '-' ? long_option(p, a) : short_options(p, a);
}

/* Every option given applies to the command, and the operands fit. */
static int check_command(struct parser *p)
{
  const struct command *cmd = p->cmd;
  /* upgrade --dry-run is plan: it takes the options of both */
  unsigned bits = cmd->bit | (cmd->bit == CMD_UPGRADE && p->c->dry_run
                              ? CMD_PLAN : 0);
  size_t i;
  for (i = 0; i < NOPTIONS; i++)
    if (p->c->given[i] && !(options[i].cmds & bits)) {
      snprintf(p->err, sizeof p->err, "%s does not apply to %s (see "
               "'uphook %s --help')", options[i].name, cmd->name, cmd->name);
      return 2;
    }
  if (p->c->nrest < cmd->min && !p->c->help) {
    snprintf(p->err, sizeof p->err, "%s needs %s", cmd->name, cmd->args);
    return 2;
  }
  if (cmd->max >= 0 && p->c->nrest > cmd->max) {
    snprintf(p->err, sizeof p->err, "%s takes %s, got '%s' too", cmd->name,
             cmd->max ? cmd->args : "no operands", p->c->rest[cmd->max]);
    return 2;
  }
  return -1;
}

/* `help [command [addon]]`: the usage, a command's, or an addon's; -1
 * when it is an addon's (then the command is the one named). */
static int help_command(struct parser *p)
{
  struct uh_cli *c = p->c;
  const struct command *cmd;
  if (c->nrest == 0) {
    print_usage(stdout);
    return 0;
  }
  if (!(cmd = find_command(c->rest[0])))
    return usage(p, "unknown command '%s'", c->rest[0]);
  if (c->nrest == 1) {
    print_command_help(cmd);
    return 0;
  }
  if (!(cmd->bit & CMD_HOOKS))
    return usage(p, "help takes an addon only after upgrade or plan, not "
                 "after %s", cmd->name);
  p->cmd = cmd;                /* help upgrade dns: the hook's help */
  c->command = cmd->name;
  c->rest[0] = c->rest[1];
  c->nrest = 1;
  c->help = 1;
  return -1;
}

/* What the parsed line asks for: -1 to run, else an exit code. */
static int settle(struct parser *p)
{
  struct uh_cli *c = p->c;
  int rc;
  if (c->given[VERSION_OPTION]) {
    c->command = "version";
    return -1;
  }
  if (!p->cmd) {
    if (c->help) {
      print_usage(stdout);
      return 0;
    }
    print_usage(stderr);
    return 2;
  }
  if (p->cmd->bit == CMD_HELP && c->help) {
    print_command_help(p->cmd);
    return 0;
  }
  if (p->cmd->bit == CMD_HELP && c->nrest <= 2
      && (rc = help_command(p)) >= 0)
    return rc;
  if ((rc = check_command(p)) >= 0)
    return rc;
  if (c->help && !((p->cmd->bit & CMD_HOOKS) && c->nrest == 1)) {
    print_command_help(p->cmd);
    return 0;
  }
  if (c->dry_run && p->cmd->bit == CMD_UPGRADE)
    c->command = "plan";       /* upgrade --dry-run is plan */
  c->json = c->output && !strcmp(c->output, "json");
  return -1;
}

/* --output json anywhere before `--`: usage errors answer in JSON too. */
static int wants_json(int argc, char **argv)
{
  int i;
  for (i = 1; i < argc && strcmp(argv[i], "--"); i++)
    if (!strcmp(argv[i], "--output=json") || (!strcmp(argv[i], "--output")
        && i + 1 < argc && !strcmp(argv[i + 1], "json")))
      return 1;
  return 0;
}

/* Parse into c (allocated); -1 to run, else an exit code, with p->err
 * holding the usage error when there is one. */
static int parse_line(struct uh_cli *c, struct parser *p, int argc,
                      char **argv)
{
  int rc = -1;
  memset(c, 0, sizeof *c);
  memset(p, 0, sizeof *p);
  c->timeout = UH_DEFAULT_TIMEOUT;
  c->lock_wait = 10;
  c->memory_limit = 256;
  c->state_quota = 16;
  c->rest = calloc((size_t)argc + 1, sizeof *c->rest);
  c->hook_args = calloc((size_t)argc + 1, sizeof *c->hook_args);
  if (!c->rest || !c->hook_args)
    return usage(p, "%s", "out of memory");
  p->c = c;
  p->argc = argc;
  p->argv = argv;
  for (p->i = 1; p->i < argc && rc < 0; p->i++)
    rc = parse_arg(p);
  return rc < 0 ? settle(p) : rc;
}

int uh_cli_parse(struct uh_cli *c, int argc, char **argv)
{
  struct parser p;
  int rc = parse_line(c, &p, argc, argv);
  if (rc < 0)
    return -1;
  if (rc == 2 && p.err[0]) {
    c->json = wants_json(argc, argv);
    uh_cli_fail(c, 2, NULL, p.err);
    if (!c->json)
      fprintf(stderr, "Run 'uphook %s%s--help' for usage.\n",
              p.cmd ? p.cmd->name : "", p.cmd ? " " : "");
  }
  uh_cli_free(c);
  return rc;
}

/* cli.split(command, args) -> {hook_args = {...}, reset_params = bool,
 * yes = bool, dry_run = bool} | nil, err: what `uphook <command> ADDON
 * <args...>` gives the engine, for the test harness, which takes the
 * same command line as the CLI. */
static int cli_split(lua_State *L)
{
  const char *cmd = luaL_checkstring(L, 1);
  int n, i, rc;
  struct uh_cli c;
  struct parser p;
  char **argv;
  luaL_checktype(L, 2, LUA_TTABLE);
  n = (int)luaL_len(L, 2);
  luaL_argcheck(L, n < 4096, 2, "too many arguments");
  argv = lua_newuserdatauv(L, sizeof *argv * (size_t)(n + 4), 0);
  argv[0] = "uphook";
  argv[1] = (char *)cmd;
  argv[2] = "addon";
  for (i = 1; i <= n; i++) {
    lua_rawgeti(L, 2, i);
    argv[i + 2] = (char *)luaL_checkstring(L, -1);  /* kept by the table */
    lua_pop(L, 1);
  }
  argv[n + 3] = NULL;
  rc = parse_line(&c, &p, n + 3, argv);
  if (rc >= 0 || strcmp(c.command, cmd)) {
    uh_cli_free(&c);
    luaL_pushfail(L);
    lua_pushstring(L, p.err[0] ? p.err : "not an upgrade command line");
    return 2;
  }
  lua_createtable(L, 0, 4);
  lua_createtable(L, c.nhook, 0);
  for (i = 0; i < c.nhook; i++) {
    lua_pushstring(L, c.hook_args[i]);
    lua_rawseti(L, -2, i + 1);
  }
  lua_setfield(L, -2, "hook_args");
  lua_pushboolean(L, c.reset_params);
  lua_setfield(L, -2, "reset_params");
  lua_pushboolean(L, c.yes);
  lua_setfield(L, -2, "yes");
  uh_cli_free(&c);
  return 1;
}

void uh_cli_free(struct uh_cli *c)
{
  free(c->rest);
  free(c->hook_args);
  free(c->colon_buf);
  c->rest = NULL;
  c->hook_args = NULL;
  c->colon_buf = NULL;
}

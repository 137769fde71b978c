/* Command-line parsing and dispatch (see cli.c). */
#ifndef UH_CLI_H
#define UH_CLI_H

#define UH_CLI_MAX_ADDONS 32
#define UH_CLI_MAX_OPTIONS 64

struct uh_cli {
  const char *command;
  const char *addons[UH_CLI_MAX_ADDONS];
  int naddons;
  const char *kubeconfig, *offline, *state_dir, *output, *junit, *filter;
  const char *ca_file, *helm;
  double timeout, lock_wait;
  long memory_limit;           /* MiB */
  long state_quota;            /* MiB: what state: may hold */
  long jobs;
  int verbosity, plan_fetch, reset_params, yes, allow_data_loss, dry_run,
      full;
  int accept_current;          /* recover --accept-current */
  int help;                    /* --help after an addon: the hook's help */
  int json;                    /* --output json anywhere on the line */
  unsigned char given[UH_CLI_MAX_OPTIONS];  /* options[i] was given */
  const char **rest;           /* uphook's operands (the addon, paths) */
  int nrest;
  const char **hook_args;      /* after the addon: the hook's arguments */
  int nhook;
  char *colon_buf;             /* NAME:ARG1:ARG2 split (cli_run.c) */
};

/* Parse argv.  Returns -1 when the command should run, else the exit
 * code after printing help or a usage error. */
int uh_cli_parse(struct uh_cli *cli, int argc, char **argv);
/* Run a parsed command; returns the exit code. */
int uh_cli_run(struct uh_cli *cli, const char *version);
void uh_cli_free(struct uh_cli *cli);

/* Was the long option `name` ("--timeout") given? */
int uh_cli_given(const struct uh_cli *cli, const char *name);

/* End a run that stops in C: in human mode `msg` on stderr (stdout for
 * exit 3, the exact "Upgrade is not supported by" line); with --output
 * json an error event and the run's one result event on stdout.
 * Returns code. */
int uh_cli_fail(const struct uh_cli *cli, int code, const char *addon,
                const char *msg);

struct lua_State;
int luaopen_uphook_cli(struct lua_State *L);

#endif

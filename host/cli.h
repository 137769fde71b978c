/* Command-line parsing and dispatch (see cli.c). */
#ifndef UH_CLI_H
#define UH_CLI_H

#define UH_CLI_MAX_ADDONS 32

struct uh_cli {
  const char *command;
  const char *addons[UH_CLI_MAX_ADDONS];
  int naddons;
  const char *kubeconfig, *offline, *state_dir, *output, *junit, *filter;
  const char *ca_file;
  double timeout, lock_wait;
  long memory_limit;           /* MiB */
  int verbosity, plan_fetch, jobs;
  const char **rest;           /* operands after the command */
  int nrest;
};

/* Parse argv.  Returns -1 when the command should run, else the exit
 * code after printing help or a usage error. */
int uh_cli_parse(struct uh_cli *cli, int argc, char **argv);
/* Run a parsed command; returns the exit code. */
int uh_cli_run(struct uh_cli *cli, const char *version);
void uh_cli_free(struct uh_cli *cli);

const char *uh_usage_text(void);

#endif

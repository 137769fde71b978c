/* Running a parsed command: addon lookup, the legacy `upgrade` script,
 * and the hand-off to lua/cmd/cli.lua. */
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

static const char *env_or(const char *name, const char *dflt)
{
  const char *v = getenv(name);
  return v && *v ? v : dflt;
}

static void setstr(lua_State *L, const char *k, const char *v)
{
  if (v) {
    lua_pushstring(L, v);
    lua_setfield(L, -2, k);
  }
}

static void push_list(lua_State *L, const char *const *v, int n)
{
  int i;
  lua_createtable(L, n, 0);
  for (i = 0; i < n; i++) {
    lua_pushstring(L, v[i]);
    lua_rawseti(L, -2, i + 1);
  }
}

static void push_addon(lua_State *L, const struct uh_addon *a)
{
  char path[4096];
  int kind = uh_addon_hook(a, path, sizeof path);
  lua_createtable(L, 0, 8);
  setstr(L, "name", a->name);
  setstr(L, "repo", a->repo);
  setstr(L, "dir", a->dir);
  setstr(L, "version", a->version);
  setstr(L, "check_status", a->check_status);
  setstr(L, "description", a->description);
  setstr(L, "hook", kind == UH_HOOK_LUA ? path : NULL);
  setstr(L, "script", kind == UH_HOOK_EXEC ? path : NULL);
}

static void setbool(lua_State *L, const char *k, int v)
{
  lua_pushboolean(L, v);
  lua_setfield(L, -2, k);
}

/* The flags and the terminals. */
static void push_flags(lua_State *L, const struct uh_cli *c)
{
  const char *term = getenv("TERM");
  setbool(L, "plan_fetch", c->plan_fetch);
  setbool(L, "full", c->full);
  setbool(L, "reset_params", c->reset_params);
  setbool(L, "yes", c->yes);
  setbool(L, "allow_data_loss", c->allow_data_loss);
  setbool(L, "dry_run", c->dry_run);
  setbool(L, "accept_current", c->accept_current);
  setbool(L, "help", c->help);
  setbool(L, "timeout_given", uh_cli_given(c, "--timeout"));
  setbool(L, "tty", isatty(1));
  setbool(L, "err_tty", isatty(2));
  setbool(L, "in_tty", isatty(0));
  /* escape codes: a terminal that is not TERM=dumb, and no NO_COLOR */
  setbool(L, "term_dumb", term && !strcmp(term, "dumb"));
  setbool(L, "no_color", getenv("NO_COLOR") != NULL);
}

static void push_options(lua_State *L, const struct uh_cli *c,
                         const char *version)
{
  lua_createtable(L, 0, 24);
  setstr(L, "command", c->command);
  setstr(L, "version", version);
  setstr(L, "kubeconfig", c->kubeconfig);
  setstr(L, "offline", c->offline);
  setstr(L, "state_dir", c->state_dir);
  setstr(L, "output", c->output ? c->output : "human");
  setstr(L, "junit", c->junit);
  setstr(L, "filter", c->filter);
  setstr(L, "ca_file", c->ca_file);
  setstr(L, "helm", c->helm);
  setstr(L, "snap_data", env_or("SNAP_DATA", "/var/snap/microk8s/current"));
  setstr(L, "snap_common", env_or("SNAP_COMMON",
                                  "/var/snap/microk8s/common"));
  lua_pushnumber(L, c->timeout);
  lua_setfield(L, -2, "timeout");
  lua_pushnumber(L, c->lock_wait);
  lua_setfield(L, -2, "lock_wait");
  lua_pushinteger(L, c->memory_limit);
  lua_setfield(L, -2, "memory_limit");
  lua_pushinteger(L, (lua_Integer)c->state_quota << 20);
  lua_setfield(L, -2, "state_quota");
  lua_pushinteger(L, c->verbosity);
  lua_setfield(L, -2, "verbosity");
  if (c->jobs > 0) {
    lua_pushinteger(L, c->jobs);
    lua_setfield(L, -2, "jobs");
  }
  push_flags(L, c);
  push_list(L, c->rest, c->nrest);
  lua_setfield(L, -2, "operands");
  push_list(L, c->addons, c->naddons);    /* for the commands uphook names */
  lua_setfield(L, -2, "addons_dirs");
}

/* MicroK8s's addon forms, as canonical/microk8s@d099c907:scripts/wrappers/
 * common/utils.py (parse_xable_addon_args) reads them: NAME:ARG1:ARG2
 * gives the hook ARG1 ARG2 (and excludes arguments after it); several
 * addon names are several addons, which upgrade takes one at a time.
 * Splits c->rest[0] in place (into a copy); -1 to go on, else exit 2. */
static int addon_forms(struct uh_cli *c, const struct uh_repos *r)
{
  struct uh_addon a;
  char err[1024], msg[1200], *colon;
  int i, all = c->nhook > 0;
  for (i = -1; all && i < c->nhook; i++) {
    const char *s = i < 0 ? c->rest[0] : c->hook_args[i];
    char name[256];
    snprintf(name, sizeof name, "%.*s", (int)strcspn(s, ":"), s);
    all = *name && uh_repos_find(r, name, &a, err, sizeof err) != -1;
  }
  if (all) {
    snprintf(msg, sizeof msg, "%s takes one addon at a time: run 'uphook %s "
             "%s', then the next", c->command, c->command, c->rest[0]);
    return uh_cli_fail(c, 2, NULL, msg);
  }
  if (!strchr(c->rest[0], ':'))
    return -1;
  if (c->nhook > 0) {
    snprintf(msg, sizeof msg, "arguments come either after the colon "
             "(%s) or after the addon name, not both", c->rest[0]);
    return uh_cli_fail(c, 2, NULL, msg);
  }
  if (!(c->colon_buf = strdup(c->rest[0])))
    return uh_cli_fail(c, 2, NULL, "out of memory");
  colon = strchr(c->colon_buf, ':');
  c->rest[0] = c->colon_buf;
  while (colon) {              /* "dns:" gives one empty argument */
    *colon = '\0';
    c->hook_args[c->nhook++] = colon + 1;
    colon = strchr(colon + 1, ':');
  }
  return -1;
}

/* Find the addon named by the first operand; push it into opts.  An
 * addon with an executable `upgrade` script runs it in our place, from
 * lua/cmd/cli.lua (under the node lock); one with neither has no upgrade. */
static int lookup(lua_State *L, struct uh_cli *c, struct uh_repos *r)
{
  struct uh_addon a;
  char err[1024], path[4096], msg[1400];
  int kind, rc;
  int plain = !strcmp(c->command, "recover") || !strcmp(c->command, "fixture")
              || !strcmp(c->command, "history");
  if (!plain && (rc = addon_forms(c, r)) >= 0)
    return rc;
  if (uh_repos_find(r, c->rest[0], &a, err, sizeof err) < 0)
    return uh_cli_fail(c, 2, c->rest[0], err);
  push_addon(L, &a);
  lua_setfield(L, -2, "addon");
  kind = uh_addon_hook(&a, path, sizeof path);
  if (kind == UH_HOOK_LUA || plain)       /* with or without a hook */
    return -1;
  if (kind == UH_HOOK_NONE) {
    snprintf(msg, sizeof msg, "Upgrade is not supported by %s", a.name);
    return uh_cli_fail(c, 3, a.name, msg);
  }
  if (c->help) {
    printf("The upgrade of %s is a script (%s): 'uphook upgrade %s "
           "[args...]' runs it with those arguments; uphook knows no "
           "parameters of it.\n", a.name, path, a.name);
    return 0;
  }
  if (strcmp(c->command, "upgrade") == 0)
    return -1;
  snprintf(msg, sizeof msg, "cannot plan %s: its upgrade is a script, not "
           "an upgrade.lua hook", a.name);
  return uh_cli_fail(c, 4, a.name, msg);
}

/* The addons of repositories, as opts[field] (and their warnings as
 * opts[warnings]): the --addons folders, then every <common>/addons/<repo>. */
static int push_repos_of(lua_State *L, struct uh_cli *c, const char *const *dirs,
                         int ndirs, const char *common, const char *field,
                         const char *warnings, struct uh_repos **out)
{
  char err[1024];
  size_t i;
  *out = uh_repos_load(dirs, ndirs, common, err, sizeof err);
  if (!*out)
    return uh_cli_fail(c, 2, NULL, err);
  lua_createtable(L, (int)uh_repos_count(*out), 0);
  for (i = 0; i < uh_repos_count(*out); i++) {
    push_addon(L, uh_repos_at(*out, i));
    lua_rawseti(L, -2, (int)i + 1);
  }
  lua_setfield(L, -2, field);
  lua_createtable(L, 0, 0);
  for (i = 0; i < uh_repos_nwarnings(*out); i++) {
    lua_pushstring(L, uh_repos_warning(*out, i));
    lua_rawseti(L, -2, (int)i + 1);
  }
  lua_setfield(L, -2, warnings);
  return -1;
}

static int push_repos(lua_State *L, struct uh_cli *c,
                      struct uh_repos **out)
{
  return push_repos_of(L, c, c->addons, c->naddons,
                       env_or("SNAP_COMMON", "/var/snap/microk8s/common"),
                       "addons", "warnings", out);
}

/* doctor: the snap's own copies of the repositories, $SNAP/addons/<repo>
 * (a refresh replaces them; the clones in $SNAP_COMMON stay), as
 * opts.bundled with opts.snap. */
static int push_bundled(lua_State *L, struct uh_cli *c)
{
  struct uh_repos *b;
  const char *snap = env_or("SNAP", "/snap/microk8s/current");
  int rc = push_repos_of(L, c, NULL, 0, snap, "bundled", "bundled_warnings",
                         &b);
  setstr(L, "snap", snap);
  if (b)
    uh_repos_free(b);
  return rc;
}

static int needs_repos(const char *cmd)
{
  return !strcmp(cmd, "upgrade") || !strcmp(cmd, "plan")
         || !strcmp(cmd, "recover") || !strcmp(cmd, "list")
         || !strcmp(cmd, "doctor") || !strcmp(cmd, "fixture")
         || !strcmp(cmd, "history");
}

/* A --offline fixture or --kubeconfig file that cannot be read is a
 * usage error (exit 2), before anything runs; an offline world kept in
 * --state-dir needs no fixture. */
static int files_given(struct uh_cli *c)
{
  char msg[4400], world[4200];
  const char *bad = NULL, *what = NULL;
  if (c->offline && access(c->offline, R_OK) != 0) {
    snprintf(world, sizeof world, "%s/offline/cluster.yaml",
             c->state_dir ? c->state_dir : "");
    if (!c->state_dir || access(world, R_OK) != 0)
      bad = c->offline, what = "--offline";
  }
  if (!bad && c->kubeconfig && access(c->kubeconfig, R_OK) != 0)
    bad = c->kubeconfig, what = "--kubeconfig";
  if (!bad)
    return -1;
  snprintf(msg, sizeof msg, "%s %s: %s", what, bad, strerror(errno));
  return uh_cli_fail(c, 2, NULL, msg);
}

int uh_cli_run(struct uh_cli *c, const char *version)
{
  struct uh_repos *repos = NULL;
  lua_State *L = uh_host_newstate(uh_families);
  int rc = -1;
  if (!L) {
    fputs("uphook: cannot create a Lua state\n", stderr);
    return 4;
  }
  push_options(L, c, version);
  if (needs_repos(c->command) && (rc = files_given(c)) >= 0) {
    lua_close(L);
    return rc;
  }
  if (needs_repos(c->command)) {
    rc = push_repos(L, c, &repos);
    if (rc < 0 && !strcmp(c->command, "doctor"))
      rc = push_bundled(L, c);
    else if (rc < 0 && strcmp(c->command, "list"))
      rc = lookup(L, c, repos);
  }
  push_list(L, c->hook_args, c->nhook);
  lua_setfield(L, -2, "hook_args");
  if (rc < 0) {
    lua_getglobal(L, "require");
    lua_pushliteral(L, "uphook.cmd.cli");
    lua_call(L, 1, 1);
    lua_getfield(L, -1, "main");
    lua_pushvalue(L, -3);
    if (uh_host_call(L, 1, 1) != LUA_OK) {
      fprintf(stderr, "uphook: internal error: %s\n", lua_tostring(L, -1));
      rc = 4;
    } else {
      rc = (int)luaL_optinteger(L, -1, 4);
    }
  }
  if (repos)
    uh_repos_free(repos);
  lua_close(L);
  return rc;
}

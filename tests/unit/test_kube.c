/* uphook.c.kube outside a cluster (run, now, sleep, connect errors), and
 * a test-only uphook entry with uphook.c.kube registered:
 *
 *   test_kube                      the unit tests below
 *   test_kube --uphook ARGS...     uphook ARGS... with the kube family
 *   test_kube --lua FILE ARGS...   run FILE in the trusted state (arg)
 *
 * The entry defines its own uh_families (the archive's families.o is
 * then not linked), so tests/cli/live_test.sh can run before
 * host/families.c registers uphook.c.kube. */
#include "unit.h"
#include "cli.h"
#include "families.h"
#include "fs.h"
#include "hash.h"
#include "host.h"
#include "http.h"
#include "kube.h"
#include "supervise.h"
#include "sys.h"
#include "yaml.h"
#if __has_include("argsfile.h")
#include "argsfile.h"
#define HAVE_ARGSFILE 1
#endif
#if __has_include("journal.h")
#include "journal.h"
#define HAVE_JOURNAL 1
#endif
#if __has_include("json.h")
#include "json.h"
#define HAVE_JSON 1
#endif
#include <signal.h>
#include <stdlib.h>
#include <lauxlib.h>

const struct uh_family uh_families[] = {
#ifdef HAVE_ARGSFILE
  { "uphook.c.argsfile", luaopen_uphook_argsfile },
#endif
  { "uphook.c.fs", luaopen_uphook_fs },
  { "uphook.c.hash", luaopen_uphook_hash },
  { "uphook.c.http", luaopen_uphook_http },
#ifdef HAVE_JOURNAL
  { "uphook.c.journal", luaopen_uphook_journal },
#endif
#ifdef HAVE_JSON
  { "uphook.c.json", luaopen_uphook_json },
#endif
  { "uphook.c.kube", luaopen_uphook_kube },
  { "uphook.c.sandbox", luaopen_uphook_sandbox },
  { "uphook.c.sys", luaopen_uphook_sys },
  { "uphook.c.yaml", luaopen_uphook_yaml },
  { NULL, NULL }
};

static lua_State *L;

/* host/main.c's, which this entry replaces */
const char *uh_usage_text(void)
{
  return "test_kube --uphook: uphook with uphook.c.kube (tests only)\n";
}

/* Run a chunk; its results must be true (or it fails the check). */
static int lua_ok(const char *chunk)
{
  int ok;
  if (luaL_loadstring(L, chunk) != LUA_OK || uh_host_call(L, 0, 1)) {
    fprintf(stderr, "  %s\n", lua_tostring(L, -1));
    lua_pop(L, 1);
    return 0;
  }
  ok = lua_toboolean(L, -1);
  if (!ok)
    fprintf(stderr, "  chunk returned false: %s\n", chunk);
  lua_pop(L, 1);
  return ok;
}

static void test_run(void)
{
  CHECK(lua_ok("local k = require 'uphook.c.kube'\n"
               "return k.run{'true'} == 0 and k.run{'false'} == 1 and\n"
               "  k.run{'sh', '-c', 'exit 7'} == 7"));
  CHECK(lua_ok("local k = require 'uphook.c.kube'\n"
               "local c, e = k.run{'/nonexistent/snapctl', 'restart'}\n"
               "return c == nil and e:find('/nonexistent/snapctl', 1, true)"));
  CHECK(lua_ok("local k = require 'uphook.c.kube'\n"
               "return not pcall(k.run, {}) and not pcall(k.run, {1, {}})"));
}

static void test_clock(void)
{
  CHECK(lua_ok("local k = require 'uphook.c.kube'\n"
               "local t = k.now(); k.sleep(0.05); local d = k.now() - t\n"
               "return d >= 0.05 and d < 1"));
}

static void test_connect_errors(void)
{
  CHECK(lua_ok("local k = require 'uphook.c.kube'\n"
               "local c, e = k.connect{kubeconfig = '/nonexistent/kc'}\n"
               "return c == nil and e:find('/nonexistent/kc', 1, true)"));
  CHECK(lua_ok("local k = require 'uphook.c.kube'\n"
               "local c, e = k.connect{snap_data = '/nonexistent',\n"
               "  home = '/nonexistent', kubeconfig_env = ''}\n"
               "return c == nil and e:find('no kubeconfig found', 1, true)"));
  CHECK(lua_ok("local k = require 'uphook.c.kube'\n"
               "return not pcall(k.connect, {kubeconfig = {}})"));
}

static int run_lua_file(int argc, char **argv)
{
  int rc;
  if (luaL_loadfile(L, argv[2]) != LUA_OK) {
    fprintf(stderr, "%s\n", lua_tostring(L, -1));
    return 1;
  }
  lua_createtable(L, argc, 0);
  for (int i = 2; i < argc; i++) {
    lua_pushstring(L, argv[i]);
    lua_rawseti(L, -2, i - 2);
  }
  lua_setglobal(L, "arg");
  rc = uh_host_call(L, 0, 1);
  if (rc != LUA_OK) {
    fprintf(stderr, "%s\n", lua_tostring(L, -1));
    return 1;
  }
  return lua_isinteger(L, -1) ? (int)lua_tointeger(L, -1) : 0;
}

int main(int argc, char **argv)
{
  if (argc > 1 && strcmp(argv[1], "--uphook") == 0) {
    struct uh_cli cli;
    int rc = uh_cli_parse(&cli, argc - 1, argv + 1);
    if (rc >= 0)
      return rc;
    signal(SIGPIPE, SIG_IGN);
    rc = uh_cli_run(&cli, "0.1.0-test");
    uh_cli_free(&cli);
    return rc;
  }
  L = uh_host_newstate(uh_families);
  if (argc > 2 && strcmp(argv[1], "--lua") == 0)
    return run_lua_file(argc, argv);
  RUN(test_run);
  RUN(test_clock);
  RUN(test_connect_errors);
  lua_close(L);
  return UNIT_END();
}

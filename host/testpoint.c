/* uphook.c.testpoint: what the test suites need of the very binary a
 * user runs, kept out of the engine's families: each point acts only
 * when a test sets its environment variable (docs/internals.md, "C
 * families").
 *   crash(code)      dies at once, as a power cut would, leaving the
 *                    journal for `uphook recover`; the engine calls it
 *                    after the Nth change under UPHOOK_CRASH_AFTER=N
 *                    (tests/cli/crash_test.sh)
 *   event_log(line)  appends an --output json event to the file
 *                    UPHOOK_TEST_EVENT_LOG names, for tests/run.sh's
 *                    schema check (host/json.c) */
#include <unistd.h>
#include <lua.h>
#include <lauxlib.h>
#include "json.h"
#include "testpoint.h"

static int testpoint_crash(lua_State *L)
{
  _exit((int)luaL_optinteger(L, 1, 99));
}

static int testpoint_event_log(lua_State *L)
{
  size_t n;
  const char *s = luaL_checklstring(L, 1, &n);
  uh_json_event_log(s, n);
  return 0;
}

static const luaL_Reg testpoint_funcs[] = {
  { "crash", testpoint_crash },
  { "event_log", testpoint_event_log },
  { NULL, NULL }
};

int luaopen_uphook_testpoint(lua_State *L)
{
  luaL_newlib(L, testpoint_funcs);
  return 1;
}

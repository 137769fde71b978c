/* uphook.c.kube outside a cluster: connect errors name the file.  The
 * client against a real API server is tested by tests/cli/live_test.sh
 * (tests/lua/live_backend_test.lua, over the fake in tests/fakes). */
#include "unit.h"
#include "families.h"
#include "host.h"

static lua_State *L;

#define lua_ok(chunk) unit_lua_true(L, (chunk))

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

/* The process and clock services moved to uphook.c.sys (host/osutil.c). */
static void test_sys_run(void)
{
  CHECK(lua_ok("local s = require 'uphook.c.sys'\n"
               "return s.run{'true'} == 0 and s.run{'false'} == 1 and\n"
               "  s.run{'sh', '-c', 'exit 7'} == 7 and\n"
               "  s.run{'sh', '-c', 'kill -9 $$'} == 137"));
  CHECK(lua_ok("local s = require 'uphook.c.sys'\n"
               "local c, e = s.run{'/nonexistent/snapctl', 'restart'}\n"
               "return c == nil and e:find('/nonexistent/snapctl', 1, true)"));
  CHECK(lua_ok("local s = require 'uphook.c.sys'\n"
               "return not pcall(s.run, {}) and not pcall(s.run, {1, {}})"));
}

static void test_sys_clock(void)
{
  CHECK(lua_ok("local s = require 'uphook.c.sys'\n"
               "local t = s.now(); s.sleep(0.05); local d = s.now() - t\n"
               "return d >= 0.05 and not pcall(s.sleep, -1)"));
}

int main(void)
{
  L = uh_host_newstate(uh_families);
  RUN(test_connect_errors);
  RUN(test_sys_run);
  RUN(test_sys_clock);
  lua_close(L);
  return UNIT_END();
}

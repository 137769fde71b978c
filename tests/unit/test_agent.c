/* uphook.c.agent against cluster-agent test servers (tests/fakes/agent.py)
 * on random loopback addresses, port 25000, TLS by a test cluster CA:
 * parallel configure requests, the token and CA files, and every kind of
 * failure named with its node and address.  Also the wiped arena. */
#include "unit.h"
#include "arena.h"
#include "families.h"
#include "host.h"
#include "osutil.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NAGENTS 5
static lua_State *L;
static char dir[64];
static char addr[8][32];        /* [1] this node, [2..] the others */
static pid_t agents[NAGENTS];

#define lua_ok(chunk) unit_lua_true(L, (chunk))

static int sh(const char *cmd)
{
  const char *argv[] = { "sh", "-c", cmd, NULL };
  return uh_run(argv);
}

/* Certificates: nodes 2-4 good, 5 signed by another CA, 6 with the SAN
 * of another address; node 7 has no agent at all. */
static int make_nodes(void)
{
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "set -e; d=%s; ca='python3 tests/fakes/cluster_ca.py'\n"
           "$ca ca $d/ca; $ca ca $d/other-ca\n"
           "$ca node $d/ca $d/this %s TOKEN-good\n"
           "for i in 2 3 4; do eval a=\\$A$i; $ca node $d/ca $d/n$i $a TOKEN-good; done\n"
           "$ca node $d/other-ca $d/n5 $A5 TOKEN-good\n"
           "$ca node $d/ca $d/n6 $A7 TOKEN-good\n"
           "for i in 2 3 4 5 6; do mkdir -p $d/n$i/args; "
           "printf -- '--cluster-dns=10.152.183.10\\n' > $d/n$i/args/kubelet; done",
           dir, addr[1]);
  return sh(cmd);
}

static int start_agents(void)
{
  char sd[128], ready[160], line[64];
  for (int i = 0; i < NAGENTS; i++) {
    snprintf(sd, sizeof sd, "%s/n%d", dir, i + 2);
    snprintf(ready, sizeof ready, "%s/ready", sd);
    if ((agents[i] = fork()) == 0) {
      if (!freopen(ready, "w", stdout))
        _exit(127);
      execlp("python3", "python3", "tests/fakes/agent.py", "--snap-data", sd,
             "--address", addr[i + 2], "--quiet", (char *)NULL);
      _exit(127);
    }
    for (int t = 0; t < 100; t++) {
      FILE *f = fopen(ready, "r");
      int up = f && fgets(line, sizeof line, f) && !strncmp(line, "ready", 5);
      if (f)
        fclose(f);
      if (up)
        break;
      if (t == 99)
        return -1;
      usleep(50000);
    }
  }
  return 0;
}

/* Globals for the chunks: DIR, A1..A7, open(sd) -> a client, body(dns). */
static void lua_setup(void)
{
  char name[8];
  lua_pushstring(L, dir);
  lua_setglobal(L, "DIR");
  for (int i = 1; i < 8; i++) {
    snprintf(name, sizeof name, "A%d", i);
    lua_pushstring(L, addr[i]);
    lua_setglobal(L, name);
  }
  LUA_RUN(L, UNIT_LUA_ERR
    "agent = require 'uphook.c.agent'\n"
    "json = require 'uphook.c.json'\n"
    "function read(p) local f = io.open(p); if not f then return nil end\n"
    "  local s = f:read('a'); f:close(); return s end\n"
    "function write(p, s) local f = assert(io.open(p, 'w')); f:write(s); f:close() end\n"
    "function body(dns) return { service = { { name = 'kubelet',\n"
    "  arguments_update = { { ['--cluster-dns'] = dns } } } } } end\n"
    "function req(i, b) return { node = 'n' .. i, address = _G['A' .. i],\n"
    "  body = b or { service = json.array({}) } } end\n"
    "function faults(i, rules) write(DIR .. '/n' .. i .. '/agent-faults.json',\n"
    "  json.encode(rules)) end\n"
    "function log(i) local out = {}\n"
    "  for l in (read(DIR .. '/n' .. i .. '/agent.log') or ''):gmatch('[^\\n]+') do\n"
    "    out[#out + 1] = json.decode(l) end return out end\n"
    "function msg(x) return x.error and x.error.message end\n"
    "this = agent.open { snap_data = DIR .. '/this' }\n");
}

static void test_parallel_configure(void)
{
  CHECK(lua_ok(
    "local r = this:configure({ req(2, body('10.152.183.20')), req(3,\n"
    "  body('10.152.183.20')), req(4, body('10.152.183.20')) }, 10)\n"
    "for i = 1, 3 do assert(r[i].ok, r[i].message) end\n"
    "for i = 2, 4 do assert(read(DIR .. '/n' .. i .. '/args/kubelet') ==\n"
    "  '--cluster-dns=10.152.183.20\\n', i) end\n"
    "return #r == 3"));
  /* all three arrive before the first is answered: they ran in parallel */
  CHECK(lua_ok(
    "for i = 2, 4 do faults(i, { { match = 'change', action = 'hang',\n"
    "  seconds = 0.6 } }) end\n"
    "local r = this:configure({ req(2, body('10.152.183.30')), req(3,\n"
    "  body('10.152.183.30')), req(4, body('10.152.183.30')) }, 10)\n"
    "local last_in, first_out = 0, math.huge\n"
    "for i = 2, 4 do local l = log(i); l = l[#l]\n"
    "  last_in = math.max(last_in, l.received)\n"
    "  first_out = math.min(first_out, l.time) end\n"
    "return r[1].ok and r[2].ok and r[3].ok and last_in < first_out"));
}

static void test_body_and_token(void)
{
  /* the agent saw a valid token and exactly the services sent */
  CHECK(lua_ok(
    "local b = { service = { { name = 'kubelet', arguments_remove = { '--x' },\n"
    "  restart = true } } }\n"
    "local r = this:configure({ req(2, b) }, 10)\n"
    "local l = log(2); l = l[#l]\n"
    "assert(r[1].ok, msg(r[1]))\n"
    "return l.kind == 'restart' and l.applied[2].restart ==\n"
    "  'microk8s.daemon-kubelet' and read(DIR .. '/n2/restarts.log') ~= nil"));
  CHECK(lua_ok(
    "err(function() this:configure({ { node = 'n2', address = A2,\n"
    "  body = { callback = 'mine', service = {} } } }, 5) end, \"carries 'callback'\")\n"
    "err(function() this:configure({ { node = 'n2', address = A2 } }, 5) end,\n"
    "  'needs node, address and a body')\n"
    "err(function() this:configure({ req(2) }, 0) end, 'timeout must be positive')\n"
    "return true"));
  /* a wrong token: the agent's own refusal, naming node and address */
  CHECK(lua_ok(
    "os.execute('mkdir -p ' .. DIR .. '/wrong/credentials && cp -r ' .. DIR ..\n"
    "  '/this/certs ' .. DIR .. '/wrong/')\n"
    "write(DIR .. '/wrong/credentials/callback-token.txt', 'TOKEN-bad\\n')\n"
    "local a = agent.open { snap_data = DIR .. '/wrong' }\n"
    "local r = a:configure({ req(2) }, 10)[1]\n"
    "a:close()\n"
    "return not r.ok and r.error.reason == 'AgentError' and r.error.code == 500 and\n"
    "  r.error.message == 'node n2 (' .. A2 .. '): the cluster agent refused '\n"
    "  .. '(HTTP 500): Invalid token' and r.error.node == 'n2' and r.error.address == A2\n"
    "  and not r.error.message:find('TOKEN')"));
}

static void test_tls_and_network(void)
{
  CHECK(lua_ok(
    "local r = this:configure({ req(5), req(6), req(7), req(2) }, 5)\n"
    "assert(r[1].error.reason == 'TLSError' and r[1].error.message:find('node n5 (' .. A5\n"
    "  .. ')', 1, true) and r[1].error.message:find(DIR .. '/this/certs/ca.crt', 1,\n"
    "  true), r[1].error.message)\n"
    "assert(r[2].error.reason == 'TLSError' and r[2].error.message:find('n6'), r[2].error.message)\n"
    "assert(r[3].error.reason == 'Unreachable' and r[3].error.message:find('node n7 (' ..\n"
    "  A7 .. '): cannot reach the cluster agent at https://' .. A7 ..\n"
    "  ':25000/', 1, true), r[3].error.message)\n"
    "assert(r[4].ok, msg(r[4]))\n"
    "return #log(5) == 0 and #log(6) == 0"));
  CHECK(lua_ok(
    "faults(3, { { action = 'garbage' } })\n"
    "faults(4, { { action = 'hang', seconds = 3 } })\n"
    "local r = this:configure({ req(3), req(4) }, 0.5)\n"
    "assert(r[1].error.reason == 'BadAnswer' and r[1].error.code == 200 and\n"
    "  r[1].error.message:find('<html>not json', 1, true), r[1].error.message)\n"
    "assert(r[2].error.reason == 'Timeout' and r[2].error.message:find('node n4', 1, true)\n"
    "  and r[2].error.message:find('0.5 s', 1, true), r[2].error.message)\n"
    "faults(3, { { action = 'drop', count = -1 } })\n"
    "local d = this:configure({ req(3) }, 5)[1]\n"
    "assert(d.error.reason == 'BadAnswer' and d.error.message:find(\n"
    "  'ended without an answer', 1, true), d.error.message)\n"
    "faults(3, { { action = 'status', status_code = 404, body = 'nope' } })\n"
    "local r2 = this:configure({ req(3) }, 5)[1]\n"
    "return r2.error.reason == 'BadAnswer' and r2.error.code == 404 and\n"
    "  r2.error.message:find('HTTP 404', 1, true)"));
  CHECK(lua_ok(
    "local r = this:configure({ req(2), { node = 'n9', address = A2,\n"
    "  body = {} }, { node = 'nx', address = 'node-x.example', body = {} } }, 5)\n"
    "return r[1].ok and r[2].error.reason == 'BadAddress' and\n"
    "  r[2].error.message == 'node n9 (' .. A2 .. '): node n2 has the same address'\n"
    "  and r[3].error.reason == 'BadAddress' and\n"
    "  r[3].error.message:find(\"'node-x.example' is not an IP address\", 1, true)"));
}

static void test_local_files(void)
{
  CHECK(lua_ok(
    "os.execute('mkdir -p ' .. DIR .. '/bare/certs ' .. DIR .. '/empty/credentials')\n"
    "local a = agent.open { snap_data = DIR .. '/bare' }\n"
    "local r = a:configure({ req(2) }, 5)[1]\n"
    "assert(r.error.reason == 'NoCA' and r.error.message:find(DIR .. '/bare/certs/ca.crt',\n"
    "  1, true), r.error.message)\n"
    "os.execute('cp ' .. DIR .. '/this/certs/ca.crt ' .. DIR .. '/bare/certs/')\n"
    "r = agent.open({ snap_data = DIR .. '/bare' }):configure({ req(2) }, 5)[1]\n"
    "assert(r.error.reason == 'NoToken' and r.error.message:find('neither ' .. DIR ..\n"
    "  '/bare/credentials/callback-token.txt nor', 1, true), r.error.message)\n"
    "os.execute('cp -r ' .. DIR .. '/bare/certs ' .. DIR .. '/empty/')\n"
    "write(DIR .. '/empty/credentials/callback-token.txt', '  \\n')\n"
    "r = agent.open({ snap_data = DIR .. '/empty' }):configure({ req(2) }, 5)[1]\n"
    "return r.error.reason == 'NoToken' and r.error.code == 0 and r.error.message:find(DIR ..\n"
    "  '/empty/credentials/callback-token.txt is empty', 1, true)"));
  /* the legacy file: a token per "host:port" */
  CHECK(lua_ok(
    "os.remove(DIR .. '/empty/credentials/callback-token.txt')\n"
    "write(DIR .. '/empty/credentials/callback-tokens.txt', A3 .. ':25000 '\n"
    "  .. 'TOKEN-good\\n\\n' .. A4 .. ':25000 TOKEN-bad\\n')\n"
    "local r = agent.open({ snap_data = DIR .. '/empty' }):configure({ req(3),\n"
    "  req(4), req(2) }, 5)\n"
    "assert(r[1].ok, msg(r[1]))\n"
    "assert(r[2].error.reason == 'AgentError', r[2].error.message)\n"
    "return r[3].error.reason == 'NoToken' and r[3].error.message:find('no callback '\n"
    "  .. 'token for ' .. A2, 1, true)"));
}

/* The hook child is forked from the broker: the arena is zeros there. */
static void test_arena_wiped_on_fork(void)
{
  uh_arena a;
  char *p;
  pid_t pid;
  int st = -1;
  CHECK(uh_arena_open(&a, 4096) == UH_OK);
  CHECK((p = uh_arena_take(&a, 6)) != NULL);
  memcpy(p, "secret", 6);
  CHECK(uh_arena_take(&a, 5000) == NULL);
  if ((pid = fork()) == 0)
    _exit(memchr(p, 's', 6) ? 1 : 0);
  waitpid(pid, &st, 0);
  CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  CHECK_STR(p, "secret");
  uh_arena_free(&a);
  uh_arena_free(&a);
  CHECK(a.base == NULL);
}

int main(void)
{
  int rc;
  srand((unsigned)time(NULL) ^ (unsigned)getpid());
  snprintf(dir, sizeof dir, "/tmp/test_agent.XXXXXX");
  if (!mkdtemp(dir))
    return 1;
  {
    int r1 = 1 + rand() % 254, r2 = rand() % 255;
    for (int i = 1; i < 8; i++)
      snprintf(addr[i], sizeof addr[i], "127.%d.%d.%d", r1, r2, i);
    for (int i = 2; i < 8; i++)
      setenv((char[]){ 'A', (char)('0' + i), 0 }, addr[i], 1);
  }
  RUN(test_arena_wiped_on_fork);
  if (make_nodes() != 0 || start_agents() != 0) {
    printf("FAIL setting up the agents\n");
    unit_failed++;
  } else {
    L = uh_host_newstate(uh_families);
    lua_setup();
    RUN(test_parallel_configure);
    RUN(test_body_and_token);
    RUN(test_tls_and_network);
    RUN(test_local_files);
    lua_close(L);
  }
  for (int i = 0; i < NAGENTS; i++)
    if (agents[i] > 0) {
      kill(agents[i], SIGTERM);
      waitpid(agents[i], NULL, 0);
    }
  rc = UNIT_END();
  {
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    sh(cmd);
  }
  return rc;
}

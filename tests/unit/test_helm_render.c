/* helm.render (host/helm_render.c): the real Helm renders a chart
 * (build/helm/v3 and v4, from `make helm`; skipped with a message when
 * absent, a failure with CI=true), and fake "helm" scripts show what the
 * child is given: its environment, uid, capabilities and network; one
 * that sleeps is killed at the timeout, one that prints without end at
 * max_output, and one running when the broker is interrupted is killed
 * at once. */
#include "broker.h"
#include "helm.h"
#include "unit.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <lualib.h>
#include <lauxlib.h>

static lua_State *L;

#define TRUE(chunk) CHECK(unit_lua_true(L, chunk))

/* Lua helpers: a folder others can read (D), files in it, a chart */
static const char HELPERS[] =
  "D = os.tmpname() os.remove(D)\n"
  "assert(os.execute('mkdir -m 755 ' .. D .. ' ' .. D .. '/private'))\n"
  "assert(os.execute('chmod 700 ' .. D .. '/private'))\n"
  "assert(os.execute('mkdir -m 777 ' .. D .. '/drop'))\n"
  "function put(path, text, mode)\n"
  "  local f = assert(io.open(path, 'wb')) f:write(text) f:close()\n"
  "  if mode then assert(os.execute('chmod ' .. mode .. ' ' .. path)) end\n"
  "  return path\n"
  "end\n"
  "function fake(name, script)\n"
  "  return put(D .. '/' .. name, '#!/bin/sh\\n' .. script, '755')\n"
  "end\n"
  "function chart(name, templates)\n"
  "  local c = D .. '/private/' .. name\n"
  "  assert(os.execute('mkdir -p ' .. c .. '/templates'))\n"
  "  put(c .. '/Chart.yaml', 'apiVersion: v2\\nname: ' .. name ..\n"
  "      '\\nversion: 0.1.0\\n')\n"
  "  put(c .. '/values.yaml', 'replicas: 1\\n')\n"
  "  for n, text in pairs(templates) do\n"
  "    put(c .. '/templates/' .. n, text) end\n"
  "  assert(os.execute('tar czf ' .. c .. '.tgz -C ' .. D .. '/private '"
  "    .. name))\n"
  "  return c .. '.tgz'\n"
  "end\n";

/* The real Helm binaries `make helm` puts under build/helm (looked for
 * under $BUILD first: a sanitizer build's tree has none of its own). */
static int have_helm(const char *v, char *out, size_t n)
{
  const char *build = getenv("BUILD"), *ci = getenv("CI");
  char *abs;
  snprintf(out, n, "%s/helm/%s/helm", build && *build ? build : "build", v);
  if (access(out, X_OK) != 0)
    snprintf(out, n, "build/helm/%s/helm", v);
  if (access(out, X_OK) == 0 && (abs = realpath(out, NULL)) != NULL) {
    snprintf(out, n, "%s", abs);
    free(abs);
    return 1;
  }
  printf("skip: no Helm at %s (make helm)%s\n", out,
         ci && strcmp(ci, "true") == 0 ? ": a failure under CI=true" : "");
  if (ci && strcmp(ci, "true") == 0)
    unit_cur_failed = 1;
  return 0;
}

/* A chart renders with its values, release and namespace; `lookup`
 * reaches no cluster; the chart sits where only root may read it. */
static void render_with(const char *v)
{
  char helm[4096];
  if (!have_helm(v, helm, sizeof helm))
    return;
  lua_pushstring(L, helm);
  lua_setglobal(L, "HELM");
  TRUE("local tgz = chart('demo', { ['cm.yaml'] = [[\n"
       "apiVersion: v1\n"
       "kind: ConfigMap\n"
       "metadata:\n"
       "  name: {{ .Release.Name }}-cm\n"
       "  namespace: {{ .Release.Namespace }}\n"
       "data:\n"
       "  replicas: {{ .Values.replicas | quote }}\n"
       "  looked: {{ lookup \"v1\" \"Namespace\" \"\" \"kube-system\" | toJson"
       " | quote }}\n"
       "]] })\n"
       "local out, msg = helm.render{ helm = HELM, args = { 'template', 'r1',"
       " tgz, '--namespace', 'ns1' }, values = 'replicas: 3\\n',"
       " timeout = 120 }\n"
       "assert(out, msg)\n"
       "assert(out:find('name: r1-cm', 1, true), out)\n"
       "assert(out:find('namespace: ns1', 1, true), out)\n"
       "assert(out:find('replicas: \"3\"', 1, true), out)\n"
       "assert(out:find('looked: \"{}\"', 1, true), out)\n"
       "return true");
  /* a template error names the file and line */
  TRUE("local tgz = chart('broken', { ['bad.yaml'] = 'a: 1\\n"
       "b: {{ .Values.replicas | nosuchfunction }}\\n' })\n"
       "local out, msg = helm.render{ helm = HELM, args = { 'template', 'r1',"
       " tgz } }\n"
       "assert(out == nil and msg:find('broken/templates/bad.yaml:2', 1,"
       " true) and msg:find('nosuchfunction', 1, true), msg)\n"
       "return true");
}

static void t_render_v3(void)
{
  render_with("v3");
}

static void t_render_v4(void)
{
  render_with("v4");
}

/* Helm reached through a folder only root may enter (a checkout in a
 * 0700 home, or CI's mktemp copy): it still runs as 65534, which needs
 * only the file's own execute bit (the binary is opened as root). */
static void t_render_private_folder(void)
{
  char helm[4096], dir[] = "/tmp/uphook-helm-private.XXXXXX", link[4200];
  if (!have_helm("v3", helm, sizeof helm))
    return;
  if (getuid() != 0) {
    printf("skip: the private folder matters only as root\n");
    return;
  }
  CHECK(mkdtemp(dir) != NULL && chmod(dir, 0700) == 0);
  snprintf(link, sizeof link, "%s/helm", dir);
  CHECK(symlink(helm, link) == 0);
  lua_pushstring(L, link);
  lua_setglobal(L, "HELM");
  TRUE("local tgz = chart('private', { ['cm.yaml'] = 'kind: ConfigMap\\n' })\n"
       "local out, msg = helm.render{ helm = HELM, args = { 'template', 'r1',"
       " tgz } }\n"
       "assert(out and out:find('kind: ConfigMap', 1, true), msg)\n"
       "return true");
  unlink(link);
  rmdir(dir);
}

/* Misuse raises naming the field; a missing Helm is named where looked */
static void t_arguments(void)
{
  TRUE("local out, msg = helm.render{ helm = '/nonexistent/helm', args = {} }\n"
       "return out == nil and msg == 'Helm not found at /nonexistent/helm'");
  TRUE("local out, msg = helm.render{ helm = put(D .. '/noexec', 'x', '644'),"
       " args = {} }\n"
       "return out == nil and msg:find('cannot run Helm at ' .. D, 1, true)");
  TRUE("err(function() helm.render{ helm = 'helm', args = {} } end,"
       " 'helm: an absolute path expected')\n"
       "err(function() helm.render{ helm = '/x', args = { 1 } } end,"
       " 'args: a list of strings expected')\n"
       "err(function() helm.render{ helm = '/x', args = {},"
       " memory_limit = 1000 } end, 'memory_limit: at least 64 MiB')\n"
       "err(function() helm.render{ helm = '/x', args = {},"
       " timeout = -1 } end, 'timeout: seconds')\n"
       "err(function() helm.render('x') end, 'table expected')\n"
       "return true");
}

/* copies = n: n Helms at once, each with the same arguments, their
 * outputs a list in order; one that fails fails the call with its
 * message.  At once: each waits (30 s at most) until both have started,
 * which one after the other never would. */
static void t_copies(void)
{
  TRUE("assert(os.execute('mkdir -m 777 ' .. D .. '/pair'))\n"
       "local both = fake('both', 'touch \"$1/$$\"; i=0\\n"
       "while [ $(ls \"$1\" | wc -l) -lt 2 ] && [ $i -lt 300 ]; do\\n"
       "  sleep 0.1; i=$((i + 1)); done\\n"
       "echo \"seen $(ls \"$1\" | wc -l)\"\\n')\n"
       "local outs, msg = helm.render{ helm = both, args = { D .. '/pair' },"
       " copies = 2 }\n"
       "assert(type(outs) == 'table' and #outs == 2, msg)\n"
       "assert(outs[1] == 'seen 2\\n' and outs[2] == 'seen 2\\n',"
       " outs[1] .. outs[2])\n"
       "local one = assert(helm.render{ helm = fake('hi', 'echo hi\\n'),"
       " args = {}, copies = 1 })\n"
       "assert(#one == 1 and one[1] == 'hi\\n')\n"
       "local out, err = helm.render{ helm = fake('bad', 'echo broken >&2;"
       " exit 3\\n'), args = {}, copies = 2 }\n"
       "assert(out == nil and err == 'broken', err)\n"
       "return true");
  TRUE("err(function() helm.render{ helm = '/x', args = {}, copies = 5 }"
       " end, 'copies: from 1 to 4 expected')\n"
       "err(function() helm.render{ helm = '/x', args = {}, copies = 0 }"
       " end, 'copies: from 1 to 4 expected')\n"
       "return true");
}

/* A loopback listener the child is asked to reach. */
static int listener(int *port)
{
  struct sockaddr_in a;
  socklen_t n = sizeof a;
  int s = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof a) != 0
      || listen(s, 4) != 0 || getsockname(s, (struct sockaddr *)&a, &n))
    return -1;
  *port = ntohs(a.sin_port);
  return s;
}

/* The child's folder (its HOME's parent) is gone after the render. */
static int gone_after(const char *out)
{
  const char *p = strstr(out, "env HOME=");
  char dir[256];
  struct stat st;
  if (!p || sscanf(p, "env HOME=%200[^\n]", dir) != 1)
    return 0;
  *strrchr(dir, '/') = 0;
  return stat(dir, &st) != 0 && errno == ENOENT;
}

/* The fake prints what the child has; checked line by line. */
static const char PROBE[] =
  "local out, msg, note = helm.render{ helm = fake('probe', [[\n"
  "env | sort | sed 's/^/env /'\n"
  "echo uid $(id -u) gid $(id -g)\n"
  "grep -E '^(CapEff|CapPrm|CapBnd|NoNewPrivs)' /proc/self/status\n"
  "tail -n +3 /proc/net/dev | sed 's/^ */net /; s/:.*//'\n"
  "python3 -c 'import socket,sys\n"
  "try:\n"
  "  socket.create_connection((\"127.0.0.1\", int(sys.argv[1])), 2)\n"
  "  print(\"connect ok\")\n"
  "except OSError as e:\n"
  "  print(\"connect failed\", e)' \"$1\"\n"
  "ls \"$2\" >/dev/null 2>&1 && echo private readable\n"
  "echo args \"$@\"\n"
  "]]), args = { tostring(PORT), D .. '/private', '--x' },"
  " values = 'a: 1\\n' }\n"
  "assert(out, msg)\n"
  "NOTE = note\n"
  "return out\n";

static void t_child(void)
{
  int port = 0, s = listener(&port), c;
  const char *out;
  CHECK(s >= 0);
  setenv("UPHOOK_TEST_BROKER_SECRET", "must not reach Helm", 1);
  lua_pushinteger(L, port);
  lua_setglobal(L, "PORT");
  if (luaL_loadstring(L, PROBE) || lua_pcall(L, 0, 1, 0)) {
    fprintf(stderr, "  %s\n", lua_tostring(L, -1));
    unit_cur_failed = 1;
    lua_pop(L, 1);
    close(s);
    return;
  }
  out = lua_tostring(L, -1);
  printf("# the child saw:\n%s", out);
  CHECK(!strstr(out, "UPHOOK_TEST_BROKER_SECRET"));
  CHECK(strstr(out, "env KUBECONFIG=/dev/null\n"));
  CHECK(strstr(out, "env PATH=/usr/bin:/bin\n"));
  CHECK(strstr(out, "env HOME=/tmp/uphook.helm."));
  CHECK(strstr(out, "env HELM_CACHE_HOME=/tmp/uphook.helm."));
  CHECK(strstr(out, "env TMPDIR=/tmp/uphook.helm."));
  CHECK(geteuid() != 0 || strstr(out, "uid 65534 gid 65534\n"));
  CHECK(strstr(out, "CapEff:\t0000000000000000\n"));
  CHECK(strstr(out, "CapPrm:\t0000000000000000\n"));
  CHECK(strstr(out, "NoNewPrivs:\t1\n"));
  CHECK(geteuid() != 0 || strstr(out, "CapBnd:\t0000000000000000\n"));
  CHECK(geteuid() != 0 || !strstr(out, "private readable"));
  CHECK(strstr(out, "--x --values /tmp/uphook.helm."));
  c = accept(s, NULL, NULL);
  CHECK(c < 0 && (errno == EAGAIN || errno == EWOULDBLOCK));
  lua_getglobal(L, "NOTE");
  if (lua_isnil(L, -1)) {
    printf("# case seen: the child had a network namespace of its own\n");
    CHECK(strstr(out, "net lo\n") && !strstr(out, "net eth"));
    CHECK(strstr(out, "connect failed"));
  } else {
    printf("# case seen: no network namespace here: %s\n",
           lua_tostring(L, -1));
    CHECK(strstr(lua_tostring(L, -1), "ran with the host's network"));
  }
  CHECK(gone_after(out));
  lua_pop(L, 2);
  close(s);
  unsetenv("UPHOOK_TEST_BROKER_SECRET");
}

/* A Helm that sleeps (with a grandchild in its group) is killed at the
 * timeout: the call returns, the group is gone.  5 s: time enough for
 * the script to note its grandchild on a loaded machine. */
static void t_timeout(void)
{
  TRUE("local t0 = os.time()\n"
       "local out, msg = helm.render{ helm = fake('sleeper',"
       " 'sleep 600 & echo $! > \"$1\"/grandchild\\nexec sleep 600\\n'),"
       " args = { D .. '/drop' }, timeout = 5 }\n"
       "assert(out == nil and msg == 'Helm ran past its timeout (5 s) and"
       " was killed', msg)\n"
       "assert(os.time() - t0 < 60, 'returned long after the timeout')\n"
       "local f = assert(io.open(D .. '/drop/grandchild'))\n"
       "local pid = f:read('l') f:close()\n"
       "local state\n"
       "for _ = 1, 300 do   -- SIGKILL is sent; wait for the death, 30 s at most\n"
       "  local st = io.open('/proc/' .. pid .. '/stat')\n"
       "  state = st and st:read('a'):match('^%d+ %b() (%a)')\n"
       "  if st then st:close() end\n"
       "  if state == nil or state == 'Z' then return true end\n"
       "  os.execute('sleep 0.1')\n"
       "end\n"
       "return false, state");
}

/* One that prints without end is killed past max_output, on stdout or
 * on stderr; its output is not returned. */
static void t_output(void)
{
  TRUE("for _, redirect in ipairs{ '', ' >&2' } do\n"
       "  local out, msg = helm.render{ helm = fake('yes', 'exec yes' .."
       " redirect .. '\\n'), args = {}, max_output = 1 << 20 }\n"
       "  assert(out == nil and msg == 'Helm printed more than 1048576 bytes"
       " (max_output) and was killed', msg)\n"
       "end return true");
  /* under max_output: all of it, byte for byte */
  TRUE("local out = assert(helm.render{ helm = fake('some', 'head -c 300000"
       " /dev/zero | tr \"\\\\0\" x\\n'), args = {}, max_output = 300000 })\n"
       "return out == ('x'):rep(300000)");
}

/* memory_limit is RLIMIT_DATA: an allocation past it fails; the message
 * is the child's stderr */
static void t_memory(void)
{
  TRUE("local out, msg = helm.render{ helm = fake('hog', 'exec python3 -c"
       " \"x = bytearray(512 << 20)\"\\n'), args = {},"
       " memory_limit = 128 << 20 }\n"
       "return out == nil and msg:find('MemoryError', 1, true), msg");
}

static void on_signal(int sig)
{
  (void)sig;
  uh_interrupted = 1;   /* what host/main.c's handler does */
}

/* A SIGINT to the broker (sent by a helper process while Helm runs; the
 * handler sets uh_interrupted as host/main.c's does) stops a render at
 * once; one already interrupted starts no Helm. */
static void t_interrupt(void)
{
  struct sigaction sa;
  pid_t helper;
  int st;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigaction(SIGINT, &sa, NULL);
  if ((helper = fork()) == 0) {
    usleep(300000);
    kill(getppid(), SIGINT);
    _exit(0);
  }
  TRUE("local t0 = os.time()\n"
       "local out, msg = helm.render{ helm = fake('slow', 'exec sleep 600\\n'),"
       " args = {}, timeout = 300 }\n"
       "assert(out == nil and msg == 'Helm was stopped: uphook was"
       " interrupted', msg)\n"
       "return os.time() - t0 < 60");
  waitpid(helper, &st, 0);
  CHECK(uh_interrupted == 1);
  TRUE("local out, msg = helm.render{ helm = fake('slow', 'exec sleep 600\\n'),"
       " args = {}, timeout = 300 }\n"
       "return out == nil and msg:find('interrupted')");
  uh_interrupted = 0;
  signal(SIGINT, SIG_DFL);
}

int main(void)
{
  L = luaL_newstate();
  luaL_openlibs(L);
  luaL_requiref(L, "helm", luaopen_uphook_helm, 1);
  lua_pop(L, 1);
  if (!unit_lua(L, UNIT_LUA_ERR, "err") || !unit_lua(L, HELPERS, "helpers"))
    return 1;
  RUN(t_arguments);
  RUN(t_child);
  RUN(t_render_v3);
  RUN(t_render_v4);
  RUN(t_render_private_folder);
  RUN(t_timeout);
  RUN(t_output);
  RUN(t_memory);
  RUN(t_copies);
  RUN(t_interrupt);
  unit_lua(L, "os.execute('rm -rf ' .. D)", "cleanup");
  lua_close(L);
  return UNIT_END();
}

/* The broker side of the broker-child protocol, fed by a compromised
 * child.  host/broker.c is compiled into this file with kill() and
 * waitpid() redirected to fakes, so that no process is forked: the
 * "child" is a memfd holding the fuzz input as the bytes the broker reads,
 * and what the broker writes goes to /dev/null.
 *
 * The input's first byte picks the mode: even, the rest is the byte
 * stream as is; odd, the rest is a list of payloads (2-byte big-endian
 * length, then the bytes), each sent as one well-framed message, so the
 * fuzzer works on MessagePack messages rather than on frame lengths.
 *
 * Bit 1 of the first byte picks the hook's permissions: clear, it
 * declared none; set, it declared kube:kube-system, args:kubelet,
 * bin:tool, net:example.com and restart:kubelite.
 *
 * The broker runs child:loaded(handler), then child:run("upgrade", ...)
 * and child:run("verify", ...), as lua/engine/phases.lua does.  The handler is
 * the engine's: uphook.engine.prims dispatch over a run with a backend, file
 * system, journal and network whose changing methods check every change
 * against the declared permissions themselves (an oracle written here,
 * not the engine's own check).  Checked:
 *   - the broker never crashes and never leaks the child's descriptors;
 *   - the handler is only called with (string, table);
 *   - nothing but the addon's own state folder (which needs no
 *     permission) is changed without a permission, and with permissions
 *     only kube-system objects, args:kubelet, bin:tool, the state folder,
 *     kubelite and https://example.com are touched, and a transfer's
 *     redirect allow list holds only example.com;
 *   - a change is journaled before it is made;
 *   - a "protocol" outcome always killed the child, and every outcome is
 *     one of the documented kinds. */
#include <signal.h>
#include <sys/mman.h>
#include <sys/types.h>
#include "fuzz.h"
#include "families.h"
#include "host.h"
#include "luax.h"

#define FAKE_PID 0x3ffffff0
static int fake_killed, fake_reaped;

static int fake_kill(pid_t pid, int sig)
{
  if (pid != FAKE_PID)
    fuzz_fail("broker signalled pid %d", (int)pid);
  fake_killed = sig == SIGKILL;
  return 0;
}

static pid_t fake_waitpid(pid_t pid, int *st, int opt)
{
  if (pid != FAKE_PID)
    fuzz_fail("broker waited for pid %d", (int)pid);
  fake_reaped = 1;
  if (st)
    *st = 3 << 8;  /* exited with status 3, as a child that lost the broker */
  return pid;
}

#define kill fake_kill
#define waitpid fake_waitpid
#include "../../host/broker.c"
#undef kill
#undef waitpid

static const char driver_src[] =
  "local child, violation, declared = ...\n"
  "local prims = require 'uphook.engine.prims'\n"
  "local yaml = require 'uphook.c.yaml'\n"
  "local argsfile = require 'uphook.c.argsfile'\n"
  "local roots = { addon = '/nonexistent/addon', bin = '/nonexistent/bin',\n"
  "  args = '/nonexistent/args', state = '/nonexistent/state' }\n"
  "local journaled = 0\n"
  "local function allowed(ok, what)\n"
  "  if not declared then violation('changed the world: ' .. what) end\n"
  "  if not ok then violation('outside the permissions: ' .. what) end\n"
  "  if journaled == 0 then violation('not journaled first: ' .. what) end\n"
  "end\n"
  "local function nsok(kind, ns)\n"
  "  return ns == 'kube-system' and kind ~= 'Namespace'\n"
  "    and not tostring(kind):match('/Namespace$')\n"
  "end\n"
  "local store = {}\n"
  "local function key(kind, name, ns)\n"
  "  return tostring(kind):match('[^/]*$') .. '|' .. tostring(ns) .. '|'\n"
  "    .. tostring(name)\n"
  "end\n"
  "local backend = { name = 'mock' }\n"
  "function backend:get(kind, name, ns) return store[key(kind, name, ns)] end\n"
  "function backend:list() return {} end\n"
  "function backend:namespaced(_, kind) return kind ~= 'Namespace' end\n"
  "function backend:watch() return false end\n"
  "function backend:now() return 0 end\n"
  "function backend:sleep() end\n"
  "local function put(verb)\n"
  "  return function(_, obj, opts)\n"
  "    local md = type(obj) == 'table' and obj.metadata or {}\n"
  "    if verb == 'apply' and opts and opts.dry_run then return obj, 'created' end\n"
  "    allowed(nsok(obj.kind, md.namespace), verb .. ' ' .. tostring(obj.kind)\n"
  "      .. ' in ' .. tostring(md.namespace))\n"
  "    store[key(obj.kind, md.name, md.namespace)] = obj\n"
  "    return obj, 'created'\n"
  "  end\n"
  "end\n"
  "backend.apply, backend.create, backend.replace = put('apply'), put('create'),\n"
  "  put('replace')\n"
  "function backend:delete(kind, name, ns)\n"
  "  allowed(nsok(kind, ns), 'delete ' .. tostring(kind) .. ' in ' .. tostring(ns))\n"
  "  store[key(kind, name, ns)] = nil\n"
  "  return true\n"
  "end\n"
  "function backend:restart(name)\n"
  "  allowed(name == 'kubelite', 'restart ' .. tostring(name))\n"
  "end\n"
  "local function fileok(dir, rel, root, top)\n"
  "  return dir == roots[root] and tostring(rel):match('^[^/]+') == top\n"
  "end\n"
  "local function filechange(what, dir, rel, root, top)\n"
  "  if dir == roots.state then\n"   /* the addon's own: no permission */
  "    if journaled == 0 then violation('not journaled first: ' .. what) end\n"
  "    return true\n"
  "  end\n"
  "  allowed(fileok(dir, rel, root, top), what .. ' ' .. dir .. '/' .. rel)\n"
  "  return true\n"
  "end\n"
  "local fs = { read = function() return nil end, stat = function() return nil end,\n"
  "  hash = function() return nil, 'absent' end,\n"
  "  backup = function() return false end }\n"
  "function fs.write(dir, rel)\n"
  "  return filechange('write', dir, rel, 'args', 'kubelet')\n"
  "end\n"
  "function fs.remove(dir, rel)\n"
  "  return filechange('remove', dir, rel, 'args', 'kubelet')\n"
  "end\n"
  "function fs.install(_, dir, rel)\n"
  "  return filechange('install', dir, rel, 'bin', 'tool')\n"
  "end\n"
  "local function transfer(verb)\n"
  "  return function(_, t)\n"
  "    local host = tostring(t.url):match('^[Hh][Tt][Tt][Pp][Ss]://([^/:?#]+)')\n"
  "    local ok = host and host:lower() == 'example.com' and #t.hosts == 1\n"
  "      and t.hosts[1] == 'example.com' and #t.http_hosts == 0\n"
  "    if not declared then violation('a transfer: ' .. tostring(t.url)) end\n"
  "    if not ok then violation('outside the permissions: ' .. verb .. ' '\n"
  "      .. tostring(t.url)) end\n"
  "    return verb == 'head' and 200 or ''\n"
  "  end\n"
  "end\n"
  "local net = { fetch = transfer('fetch'), download = transfer('download'),\n"
  "  head = transfer('head') }\n"
  "local journal_lib = { open = function() return {\n"
  "  append = function() journaled = journaled + 1; return true end } end }\n"
  "local http = { checksum_for = function() return ('0'):rep(64) end,\n"
  "  allowed = require('uphook.c.http').allowed }\n"
  "local report = setmetatable({}, { __index = function() return function() end end })\n"
  "local perms = {}\n"
  "if declared then\n"
  "  for _, p in ipairs { 'kube:kube-system', 'args:kubelet', 'bin:tool',\n"
  "                       'net:example.com', 'restart:kubelite' } do\n"
  "    perms[p] = true\n"
  "  end\n"
  "end\n"
  "local c = { fs = fs, http = http, argsfile = argsfile, yaml = yaml,\n"
  "  journal = journal_lib, hash = { file = function() return nil, 'absent' end },\n"
  "  sys = { now = function() return 0 end },\n"
  "  broker = { interrupted = function() return false end } }\n"
  "local run = require('uphook.core.run').new { addon = 'fuzz', perms = perms,\n"
  "  phase = 'upgrade', backend = backend, net = net, c = c,\n"
  "  journal_path = '/nonexistent/journal', report = report,\n"
  "  cache_dir = '/nonexistent/cache', roots = roots, hostname = 'fuzz',\n"
  "  timeout = 0 }\n"
  "local function handler(name, args)\n"
  "  if type(name) ~= 'string' or type(args) ~= 'table' then\n"
  "    violation('handler called with ' .. type(name) .. ', ' .. type(args))\n"
  "  end\n"
  "  return prims.dispatch(run, name, args)\n"
  "end\n"
  "local kinds = { error = true, timeout = true, crash = true, protocol = true }\n"
  "local ok, v, kind = child:loaded(handler)\n"
  "if ok then\n"
  "  ok, v, kind = child:run('upgrade', { addon = 'fuzz' }, handler)\n"
  "  if ok then ok, v, kind = child:run('verify', { addon = 'fuzz' }, handler) end\n"
  "end\n"
  "if not ok and not kinds[kind] then violation('unknown kind ' .. tostring(kind)) end\n"
  "if not ok and type(v) ~= 'string' and kind ~= 'error' then\n"
  "  violation('a failure without a message')\n"
  "end\n"
  "child:close()\n"
  "return ok, kind\n";

static int violation(lua_State *L)
{
  fuzz_fail("%s", luaL_checkstring(L, 1));
  return 0;
}

/* The bytes the broker will read, in a memfd rewound to its start. */
static int input_fd(const uint8_t *d, size_t n)
{
  int fd = memfd_create("fuzz-child", MFD_CLOEXEC);
  size_t i = 0;
  if (fd < 0)
    fuzz_fail("memfd_create");
  if (n && (d[0] & 1)) {
    for (i = 1; i + 2 <= n;) {
      size_t pl = (size_t)d[i] << 8 | d[i + 1];
      unsigned char hdr[4];
      if (pl > n - i - 2)
        pl = n - i - 2;
      hdr[0] = (unsigned char)pl;
      hdr[1] = (unsigned char)(pl >> 8);
      hdr[2] = hdr[3] = 0;
      if (write(fd, hdr, 4) != 4
          || (pl && write(fd, d + i + 2, pl) != (ssize_t)pl))
        fuzz_fail("memfd write");
      i += 2 + pl;
    }
  } else if (n > 1 && write(fd, d + 1, n - 1) != (ssize_t)(n - 1)) {
    fuzz_fail("memfd write");
  }
  lseek(fd, 0, SEEK_SET);
  return fd;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  static lua_State *L;
  static int driver_ref;
  struct child *c;
  int rfd, wfd, ok;
  const char *kind;
  if (!L) {
    L = uh_host_newstate(uh_families);
    luaL_requiref(L, "uphook.c.broker", luaopen_uphook_broker, 0);
    lua_pop(L, 1);
    if (luaL_loadbufferx(L, driver_src, sizeof driver_src - 1, "=driver",
                         "t"))
      fuzz_fail("driver: %s", lua_tostring(L, -1));
    driver_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  }
  rfd = input_fd(data, size);
  wfd = open("/dev/null", O_WRONLY | O_CLOEXEC);
  if (wfd < 0)
    fuzz_fail("/dev/null");
  fake_killed = fake_reaped = 0;
  lua_settop(L, 0);
  lua_rawgeti(L, LUA_REGISTRYINDEX, driver_ref);
  c = lua_newuserdatauv(L, sizeof *c, 0);
  memset(c, 0, sizeof *c);
  c->pid = FAKE_PID;
  c->rfd = rfd;
  c->wfd = wfd;
  c->timeout = 60;
  c->deadline = uh_monotonic() + 60;
  luaL_setmetatable(L, CHILD_MT);
  lua_pushcfunction(L, violation);
  lua_pushboolean(L, size && (data[0] & 2));
  fuzz_lua_begin(L);
  ok = lua_pcall(L, 3, 2, 0);
  fuzz_lua_end(L);
  if (ok != LUA_OK) {
    const char *m = lua_tostring(L, -1);
    if (fuzz_lua_budget_hit)
      fuzz_fail("one input took over 50M Lua instructions");
    if (m && strstr(m, "not enough memory"))
      return 0;
    fuzz_fail("the broker raised: %s", m ? m : "?");
  }
  ok = lua_toboolean(L, 1);
  kind = lua_tostring(L, 2);
  if (!ok && kind && strcmp(kind, "protocol") == 0 && !fake_killed)
    fuzz_fail("a protocol error did not kill the child");
  if (!fake_reaped)
    fuzz_fail("the child was not reaped");
  if (fcntl(rfd, F_GETFD) != -1 || fcntl(wfd, F_GETFD) != -1)
    fuzz_fail("the child's descriptors were left open");
  fuzz_done(L);
  return 0;
}

/* host/mpack.c: round trips, limits, and hostile bytes. */
#include "mpack.h"
#include "luax.h"
#include "payload.h"
#include "rpc.h"
#include "unit.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/wait.h>
#include <lualib.h>
#include <lauxlib.h>

static int l_pack(lua_State *L)
{
  msgpack_sbuffer sb;
  char err[128];
  lua_settop(L, 1);
  msgpack_sbuffer_init(&sb);
  if (uh_mpack_pack(L, 1, &sb, err, sizeof err) != 0) {
    msgpack_sbuffer_destroy(&sb);
    lua_pushnil(L);
    lua_pushstring(L, err);
    return 2;
  }
  CHECK(lua_gettop(L) == 1);   /* stack left as it was */
  lua_pushlstring(L, sb.data ? sb.data : "", sb.size);
  msgpack_sbuffer_destroy(&sb);
  return 1;
}

static int l_unpack(lua_State *L)
{
  size_t n;
  const char *s = luaL_checklstring(L, 1, &n);
  char err[128];
  int top = lua_gettop(L);
  if (uh_mpack_unpack_push(L, s, n, err, sizeof err) != 0) {
    CHECK(lua_gettop(L) == top);
    lua_pushboolean(L, 0);
    lua_pushstring(L, err);
    return 2;
  }
  lua_pushboolean(L, 1);
  lua_insert(L, -2);
  return 2;
}

static lua_State *newstate(void)
{
  lua_State *L = luaL_newstate();
  luaL_openlibs(L);
  lua_register(L, "pack", l_pack);
  lua_register(L, "unpack", l_unpack);
  lua_newtable(L);
  uh_setnullarray(L);
  lua_setglobal(L, "uh");
  return L;
}

static const char *EQ =
  "function eq(a, b)\n"
  "  if type(a) ~= type(b) then return false end\n"
  "  if type(a) ~= 'table' then return a == b or (a ~= a and b ~= b) end\n"
  "  if uh.isarray(a) ~= uh.isarray(b) then return false end\n"
  "  for k, v in pairs(a) do if not eq(v, b[k]) then return false end end\n"
  "  for k in pairs(b) do if a[k] == nil then return false end end\n"
  "  return true end\n"
  "function rt(v) local s = assert(pack(v)); local ok, w = unpack(s)\n"
  "  assert(ok, w); return w, s end\n";

static void t_roundtrip(void)
{
  lua_State *L = newstate();
  CHECK(LUA_RUN(L, EQ));
  CHECK(LUA_RUN(L,
    "local vals = {true, false, 0, 1, -1, 127, 128, -32, -33, 255, 256,\n"
    "  65535, 65536, -32768, -32769, 2^31, math.maxinteger, math.mininteger,\n"
    "  4294967296, -4294967297, 1.5, -0.0, 1e300, math.huge, -math.huge,\n"
    "  '', 'a', 'a\\0b\\0', string.rep('x', 31), string.rep('y', 32),\n"
    "  string.rep('z', 255), string.rep('w', 256), string.rep('\\255', 70000),\n"
    "  {}, uh.array{}, {1, 2, 3}, {a = 1, [1] = 'one', [true] = false},\n"
    "  {n = uh.null, list = uh.array{uh.null, 1}}, {{{{}}}},\n"
    "  {[2] = 'sparse'}, {[1.5] = 'f'}, {[-1] = 'neg'},\n"
    "  {metadata = {name = 'x', labels = {app = 'y'}}, spec = {replicas = 3,\n"
    "   containers = uh.array{{name = 'c', args = uh.array{}}}}}}\n"
    "for i, v in ipairs(vals) do\n"
    "  local w = rt(v)\n"
    "  assert(eq(v, w), 'value ' .. i)\n"
    "  assert(math.type(v) == math.type(w), 'numtype ' .. i)\n"
    "end\n"
    "local w = rt(0/0); assert(w ~= w)\n"
    "assert(rt(nil) == uh.null and rt(uh.null) == uh.null)\n"
    /* decoded arrays carry the marker; keys 1..n encode as arrays */
    "assert(uh.isarray(rt({1, 2})) and getmetatable(rt({1,2})) ~= nil)\n"
    "assert(getmetatable(rt({})) == nil and next((rt({}))) == nil)\n"
    "assert(uh.isarray(rt(uh.array{})))\n"
    /* shared subtables are fine, only cycles are refused */
    "local s = {1}; local t = {a = s, b = s, c = {s}}; assert(eq(rt(t), t))\n"));
  lua_close(L);
}

static void t_refused(void)
{
  lua_State *L = newstate();
  CHECK(LUA_RUN(L, EQ));
  CHECK(LUA_RUN(L,
    "local function bad(v, pat) local s, e = pack(v)\n"
    "  assert(s == nil and e:find(pat), tostring(e)) end\n"
    "bad(print, 'cannot encode a function')\n"
    "bad({f = print}, 'function')\n"
    "bad({[{}] = 1}, 'table key')\n"
    "bad(coroutine.create(print), 'thread')\n"
    "bad(io.stdout, 'userdata')\n"
    "local c = {}; c.self = c; bad(c, 'cycle')\n"
    "local a = {}; a[1] = {a}; bad(a, 'cycle')\n"
    "local d = {}; local x = d; for _ = 1, 100 do x.n = {}; x = x.n end\n"
    "bad(d, 'nested deeper')\n"
    "local ok = {}; x = ok; for _ = 1, 62 do x.n = {}; x = x.n end\n"
    "assert(pack(ok))\n"));
  lua_close(L);
}

static void t_hostile_fixed(void)
{
  lua_State *L = newstate();
  CHECK(LUA_RUN(L,
    "local function bad(s, pat) local ok, e = unpack(s)\n"
    "  assert(not ok and e:find(pat), tostring(e)) end\n"
    "bad('', 'truncated')\n"
    "bad('\\xdd\\xff\\xff\\xff\\xff', 'array longer')\n"   /* 4G elements */
    "bad('\\xdf\\xff\\xff\\xff\\xff', 'map longer')\n"
    "bad('\\xdb\\xff\\xff\\xff\\xff', 'string longer')\n"
    "bad('\\xc6\\x00\\x00\\x00\\x05abc', 'string longer')\n"
    "bad(string.rep('\\x91', 100000) .. '\\x01', 'nesting too deep')\n"
    "bad(string.rep('\\x81\\xa1k', 1000) .. '\\x01', 'nesting too deep')\n"
    "bad('\\x81\\xc0\\x01', 'map key')\n"      /* nil key */
    "bad('\\x81\\x90\\x01', 'map key')\n"      /* table key */
    "bad('\\x81\\xcb\\x7f\\xf8\\0\\0\\0\\0\\0\\0\\x01', 'map key')\n"  /* NaN */
    "bad('\\xcf\\xff\\xff\\xff\\xff\\xff\\xff\\xff\\xff', 'out of range')\n"
    "bad('\\xc1', 'unsupported')\n"
    "bad('\\xd4\\x01\\x02', 'unsupported')\n"   /* ext */
    "bad('\\x01\\x02', 'trailing')\n"
    "bad('\\xcd\\x01', 'truncated')\n"
    "local ok, v = unpack('\\xc4\\x03a\\0b'); assert(ok and v == 'a\\0b')\n"
    "ok, v = unpack('\\xd0\\x80'); assert(ok and v == -128)\n"
    "ok, v = unpack('\\xd1\\xff\\xfe'); assert(ok and v == -2)\n"
    "ok, v = unpack('\\xd3\\x80\\0\\0\\0\\0\\0\\0\\0'); assert(ok and v == math.mininteger)\n"
    "ok, v = unpack('\\xcc\\xff'); assert(ok and v == 255)\n"
    "ok, v = unpack('\\xca\\x3f\\xc0\\0\\0'); assert(ok and v == 1.5)\n"
    "ok, v = unpack('\\x82\\x01\\x02\\x01\\x03'); assert(ok and v[1] == 3)\n"));
  lua_close(L);
}

/* Random and mutated inputs: never a crash, stack always balanced. */
static void t_fuzz(void)
{
  lua_State *L = newstate();
  msgpack_sbuffer sb;
  char err[128], buf[256];
  int i, j, top = lua_gettop(L), bad = 0;
  size_t n, cut;

  srand(12345);
  CHECK(LUA_RUN(L, EQ));
  CHECK(LUA_RUN(L, "SAMPLE = {kind = 'Deployment', spec = {replicas = 3, "
               "t = uh.array{1, -70000, 2.5, 'x\\0y', uh.null, true, {}}}}"));
  lua_getglobal(L, "SAMPLE");
  msgpack_sbuffer_init(&sb);
  CHECK(uh_mpack_pack(L, -1, &sb, err, sizeof err) == 0);
  lua_pop(L, 1);
  for (cut = 0; cut < sb.size; cut++)   /* every truncation fails cleanly */
    if (uh_mpack_unpack_push(L, sb.data, cut, err, sizeof err) == 0)
      bad++;
  CHECK(bad == 0);
  for (i = 0; i < 200000; i++) {
    if (i & 1) {
      n = (size_t)rand() % sizeof buf;
      for (j = 0; j < (int)n; j++)
        buf[j] = (char)rand();
    } else {
      n = sb.size < sizeof buf ? sb.size : sizeof buf;
      memcpy(buf, sb.data, n);
      for (j = 0; j < 1 + rand() % 4; j++)
        buf[(size_t)rand() % n] = (char)rand();
    }
    if (uh_mpack_unpack_push(L, buf, n, err, sizeof err) == 0)
      lua_pop(L, 1);
    if (lua_gettop(L) != top)
      bad++;
  }
  CHECK(bad == 0);
  msgpack_sbuffer_destroy(&sb);
  lua_close(L);
}

/* A reader of the pipe rfd in a process of its own: 0 when it gets one
 * frame holding exactly want[0..n) (want NULL: when it reads to the end,
 * whatever came), else 1. */
static pid_t pipe_reader(int rfd, int wfd, const char *want, size_t n)
{
  pid_t pid = fork();
  if (pid == 0) {
    lua_State *R = luaL_newstate();
    char err[128], buf[4096];
    size_t got;
    const char *s;
    close(wfd);
    if (!want) {
      while (read(rfd, buf, sizeof buf) > 0)
        ;
      _exit(0);
    }
    if (uh_rpc_recv(rfd, R, -1, NULL, err, sizeof err) != UH_RPC_OK)
      _exit(1);
    s = lua_tolstring(R, -1, &got);
    _exit(s && got == n && memcmp(s, want, n) == 0 ? 0 : 1);
  }
  return pid;
}

static int reaped_ok(pid_t pid)
{
  int st;
  return waitpid(pid, &st, 0) == pid && WIFEXITED(st)
         && WEXITSTATUS(st) == 0;
}

/* A payload (host/payload.h): the file's bytes, packed as the same str
 * as the string of them, its body left to the writer as the payload's
 * file, which the writer splices into the pipe once and closes; a file
 * that shrank before it was sent is an error that says so. */
static void t_payload(void)
{
  lua_State *L = newstate();
  enum { N = 200000 };
  static char bytes[N];
  FILE *f = tmpfile();
  int fd, i, pfd[2], *file;
  size_t n;
  pid_t pid;
  msgpack_sbuffer sb;
  uh_mpack_refs refs;
  char err[128];

  for (i = 0; i < N; i++)
    bytes[i] = (char)(i * 7 + i / 251);
  CHECK(f && fwrite(bytes, 1, N, f) == N && fflush(f) == 0);
  fd = fileno(f);
  CHECK(uh_payload_file(L, fd, N) == 0);
  file = uh_payload_of(L, -1, &n);
  CHECK(file && *file >= 0 && *file != fd && n == N);
  lua_setglobal(L, "P");
  lua_pushlstring(L, bytes, N);
  lua_setglobal(L, "S");
  CHECK(LUA_RUN(L, "assert(#P == #S and tostring(P) == S)\n"
                   "assert(type(P) == 'userdata' and pack(P) == pack(S))\n"
                   "assert(pack({P, 1}) == pack({S, 1}))"));
  lua_getglobal(L, "P");
  msgpack_sbuffer_init(&sb);
  CHECK(uh_mpack_pack_refs(L, -1, &sb, &refs, err, sizeof err) == 0);
  CHECK(refs.n == 1 && refs.ref[0].p == NULL && refs.ref[0].fd == file
        && refs.ref[0].n == N);
  msgpack_sbuffer_destroy(&sb);

  CHECK(pipe(pfd) == 0);
  pid = pipe_reader(pfd[0], pfd[1], bytes, N);
  CHECK(uh_rpc_send(pfd[1], L, -1, err, sizeof err) == UH_RPC_OK);
  CHECK(reaped_ok(pid) && *file == -1);    /* received whole; sent once */
  CHECK(uh_rpc_send(pfd[1], L, -1, err, sizeof err) == UH_RPC_ERR);
  CHECK(strstr(err, "could not be sent") != NULL);
  close(pfd[0]);
  close(pfd[1]);

  CHECK(uh_payload_file(L, fd, N) == 0 && ftruncate(fd, N / 2) == 0);
  CHECK(pipe(pfd) == 0);
  pid = pipe_reader(pfd[0], pfd[1], NULL, 0);
  CHECK(uh_rpc_send(pfd[1], L, -1, err, sizeof err) == UH_RPC_ERR);
  CHECK(strstr(err, "shrank while it was being sent") != NULL);
  close(pfd[1]);
  CHECK(reaped_ok(pid));
  close(pfd[0]);
  lua_pushinteger(L, 1);
  CHECK(uh_payload_of(L, -1, &n) == NULL);
  fclose(f);
  lua_close(L);
}

/* Where splice(2) cannot go (to a file that is no pipe), the payload is
 * copied through a buffer: the same bytes, and the file closed. */
static void t_payload_no_splice(void)
{
  lua_State *L = newstate();
  enum { N = 150000 };
  static char bytes[N], back[N];
  FILE *f = tmpfile(), *out = tmpfile();
  int i, *file;
  size_t n;
  for (i = 0; i < N; i++)
    bytes[i] = (char)(i * 13 + i / 97);
  CHECK(f && out && fwrite(bytes, 1, N, f) == N && fflush(f) == 0);
  CHECK(uh_payload_file(L, fileno(f), N) == 0);
  file = uh_payload_of(L, -1, &n);
  CHECK(uh_payload_send(file, n, fileno(out)) == 0 && *file == -1);
  CHECK(pread(fileno(out), back, N, 0) == N && memcmp(back, bytes, N) == 0);
  fclose(f);
  fclose(out);
  lua_close(L);
}

int main(void)
{
  RUN(t_roundtrip);
  RUN(t_refused);
  RUN(t_hostile_fixed);
  RUN(t_payload);
  RUN(t_payload_no_splice);
  RUN(t_fuzz);
  return UNIT_END();
}

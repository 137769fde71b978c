/* uphook.c.http against the loopback HTTPS server
 * (tests/fakes/https_server.py): download, fetch, store, head,
 * checksum_for, and every refusal the issue lists.  Each failure must
 * name the URL and leave no file in the cache. */
#include "unit.h"
#include "http.h"
#include <arpa/inet.h>
#include "osutil.h"
#include <errno.h>
#include <ftw.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <jansson.h>
#include <lualib.h>
#include <openssl/evp.h>

static lua_State *L;
static pid_t server;
static char root[] = "/tmp/uphook-http-test-XXXXXX";

/* ---- C helpers exposed to the Lua snippets ---- */

static void hexof(const unsigned char *d, char *out)
{
  for (int i = 0; i < 32; i++)
    snprintf(out + 2 * i, 3, "%02x", d[i]);
}

static int l_sha256(lua_State *l)
{
  size_t n;
  const char *s = luaL_checklstring(l, 1, &n);
  unsigned char d[32];
  char hex[65];
  EVP_Digest(s, n, d, NULL, EVP_sha256(), NULL);
  hexof(d, hex);
  lua_pushstring(l, hex);
  return 1;
}

/* sha256 of the server's pattern: n bytes, byte i = i & 0xff */
static int l_pattern_sha(lua_State *l)
{
  lua_Integer n = luaL_checkinteger(l, 1);
  unsigned char block[256], d[32];
  char hex[65];
  EVP_MD_CTX *md = EVP_MD_CTX_new();
  for (int i = 0; i < 256; i++)
    block[i] = (unsigned char)i;
  EVP_DigestInit_ex(md, EVP_sha256(), NULL);
  for (lua_Integer k = 0; k < n; k += 256)
    EVP_DigestUpdate(md, block, n - k < 256 ? (size_t)(n - k) : 256);
  EVP_DigestFinal_ex(md, d, NULL);
  EVP_MD_CTX_free(md);
  hexof(d, hex);
  lua_pushstring(l, hex);
  return 1;
}

static lua_State *walk_L;
static size_t walk_skip;

static int walk_one(const char *p, const struct stat *st, int flag,
                    struct FTW *f)
{
  (void)st;
  (void)f;
  if (flag == FTW_F || flag == FTW_SL) {
    lua_pushstring(walk_L, p + walk_skip);
    lua_rawseti(walk_L, -2, (lua_Integer)lua_rawlen(walk_L, -2) + 1);
  }
  return 0;
}

/* files(dir) -> list of every non-directory below dir (relative) */
static int l_files(lua_State *l)
{
  const char *dir = luaL_checkstring(l, 1);
  lua_newtable(l);
  walk_L = l;
  walk_skip = strlen(dir) + 1;
  nftw(dir, walk_one, 16, FTW_PHYS);
  return 1;
}

static int l_now(lua_State *l)
{
  lua_pushnumber(l, uh_monotonic());
  return 1;
}

/* capture(fd, fn) -> what fn wrote on fd (1 or 2), fn's 2 results */
static int l_capture(lua_State *l)
{
  char path[] = "/tmp/uphook-http-out-XXXXXX", buf[65536];
  int which = (int)luaL_checkinteger(l, 1);
  int fd = mkstemp(path), saved = dup(which);
  ssize_t n;
  fflush(stdout);
  dup2(fd, which);
  lua_settop(l, 2);
  lua_call(l, 0, 2);
  fflush(stdout);
  fflush(stderr);
  dup2(saved, which);
  close(saved);
  n = pread(fd, buf, sizeof buf, 0);
  close(fd);
  unlink(path);
  lua_pushlstring(l, buf, n > 0 ? (size_t)n : 0);
  lua_insert(l, -3);
  return 3;
}

/* ---- the server ---- */

static int start_server(void)
{
  int p[2];
  char line[4096];
  size_t got = 0;
  json_t *j;
  if (pipe(p) != 0 || (server = fork()) < 0)
    return 0;
  if (server == 0) {
    dup2(p[1], 1);
    close(p[0]);
    close(p[1]);
    execlp("python3", "python3", "tests/fakes/https_server.py", (char *)NULL);
    _exit(127);
  }
  close(p[1]);
  while (got < sizeof line - 1) {
    ssize_t n = read(p[0], line + got, 1);
    if (n <= 0 || line[got] == '\n')
      break;
    got += (size_t)n;
  }
  close(p[0]);
  line[got] = '\0';
  if (!(j = json_loads(line, 0, NULL))) {
    fprintf(stderr, "server said: %s\n", line);
    return 0;
  }
  lua_pushfstring(L, "https://127.0.0.1:%d", (int)json_integer_value(
                  json_object_get(j, "https")));
  lua_setglobal(L, "BASE");
  lua_pushfstring(L, "http://127.0.0.1:%d", (int)json_integer_value(
                  json_object_get(j, "http")));
  lua_setglobal(L, "PLAIN");
  lua_pushfstring(L, "https://127.0.0.1:%d", (int)json_integer_value(
                  json_object_get(j, "self_signed")));
  lua_setglobal(L, "SELF");
  lua_pushfstring(L, "https://127.0.0.1:%d", (int)json_integer_value(
                  json_object_get(j, "wrong_host")));
  lua_setglobal(L, "WRONG");
  lua_pushstring(L, json_string_value(json_object_get(j, "ca")));
  lua_setglobal(L, "CA");
  json_decref(j);
  return 1;
}

static void stop_server(void)
{
  if (server > 0) {
    kill(server, SIGTERM);
    waitpid(server, NULL, 0);
  }
}

static const char prelude[] =
  "HOSTS = {['127.0.0.1'] = true}\n"
  "local n = 0\n"
  "function fresh() n = n + 1; CACHE = ROOT .. '/cache' .. n; return CACHE end\n"
  "function url(p) return p:sub(1, 1) == '/' and BASE .. p or p end\n"
  "function opts(p, extra)\n"
  "  local o = {url = url(p), hosts = HOSTS, ca_file = CA, deadline = 20}\n"
  "  for k, v in pairs(extra or {}) do o[k] = v end\n"
  "  return o\n"
  "end\n"
  "function dopts(p, sum, extra)\n"
  "  local o = opts(p, extra)\n"
  "  o.sha256 = sum; o.cache_dir = o.cache_dir or CACHE\n"
  "  return o\n"
  "end\n"
  "function requests()\n"
  "  local s = assert(http.fetch(opts('/stats')))\n"
  "  return tonumber(s:match('\"requests\": (%d+)'))\n"
  "end\n"
  /* fails(fn, o, needle...): nil + a message holding every needle, and
   * nothing at all left in the cache (tmp/ cleaned) */
  "function fails(fn, o, ...)\n"
  "  local r, msg = fn(o)\n"
  "  assert(r == nil, 'expected a failure for ' .. tostring(o.url))\n"
  "  assert(type(msg) == 'string', 'no message')\n"
  "  if os.getenv('VERBOSE') then io.stderr:write('  msg: ', msg, '\\n') end\n"
  "  for _, s in ipairs({o.url, ...}) do\n"
  "    assert(msg:find(s, 1, true), ('message %q lacks %q'):format(msg, s))\n"
  "  end\n"
  "  local left = files(o.cache_dir or CACHE)\n"
  "  assert(#left == 0, 'left behind: ' .. table.concat(left, ' '))\n"
  "  return msg\n"
  "end\n";

static int lua_run(const char *chunk)
{
  if (luaL_dostring(L, chunk) == LUA_OK)
    return 1;
  fprintf(stderr, "  lua: %s\n", lua_tostring(L, -1));
  lua_pop(L, 1);
  return 0;
}
#define LUA(code) CHECK(lua_run(code))

static int setup(void)
{
  static const luaL_Reg helpers[] = {
    { "sha256", l_sha256 }, { "pattern_sha", l_pattern_sha },
    { "files", l_files }, { "now", l_now },
    { "capture", l_capture }, { NULL, NULL }
  };
  if (!mkdtemp(root))
    return 0;
  L = luaL_newstate();
  luaL_openlibs(L);
  luaL_requiref(L, "uphook.c.http", luaopen_uphook_http, 0);
  lua_setglobal(L, "http");
  lua_pushglobaltable(L);
  luaL_setfuncs(L, helpers, 0);
  lua_pop(L, 1);
  lua_pushstring(L, root);
  lua_setglobal(L, "ROOT");
  return start_server() && lua_run(prelude);
}

/* ---- checksum_for (pure) ---- */

static void test_checksum_for(void)
{
  char out[65];
  const char *a = "A8AF099BF2E878609558DBF69D8F88F4A31040A8CF84B549A0CFA912F12FFC3F";
  const char *al = "a8af099bf2e878609558dbf69d8f88f4a31040a8cf84b549a0cfa912f12ffc3f";
  char buf[512];
  snprintf(buf, sizeof buf, "%s  tool.bin\r\n", a);
  CHECK(uh_checksum_for(buf, strlen(buf), "tool.bin", 8, out) == UH_OK);
  CHECK_STR(out, al);
  snprintf(buf, sizeof buf, "# comment\n%s *dist/tool.bin\n", al);
  CHECK(uh_checksum_for(buf, strlen(buf), "tool.bin", 8, out) == UH_OK);
  snprintf(buf, sizeof buf, "SHA256 (./tool.bin) = %s\n", al);
  CHECK(uh_checksum_for(buf, strlen(buf), "tool.bin", 8, out) == UH_OK);
  snprintf(buf, sizeof buf, "%s\n", al);                       /* bare */
  CHECK(uh_checksum_for(buf, strlen(buf), "x", 1, out) == UH_OK);
  snprintf(buf, sizeof buf, "%s  -\n", al);
  CHECK(uh_checksum_for(buf, strlen(buf), "x", 1, out) == UH_OK);
  snprintf(buf, sizeof buf, "\\%s  a\\\\b\n", al);              /* escaped */
  CHECK(uh_checksum_for(buf, strlen(buf), "a\\b", 3, out) == UH_OK);
  snprintf(buf, sizeof buf, "%s  tool.bin.sig\n%s  other\n", al, al);
  CHECK(uh_checksum_for(buf, strlen(buf), "tool.bin", 8, out) == UH_ENOENT);
  snprintf(buf, sizeof buf, "%s  a/t\n%.63s0  b/t\n", al, al);   /* conflict */
  CHECK(uh_checksum_for(buf, strlen(buf), "t", 1, out) == UH_EPARSE);
  snprintf(buf, sizeof buf, "%s  a/t\n%.63s0  t\n", al, al);     /* exact wins */
  CHECK(uh_checksum_for(buf, strlen(buf), "t", 1, out) == UH_OK);
  CHECK(out[63] == '0');
  snprintf(buf, sizeof buf, "%s0  t\n%.60s  t\n", al, al);       /* bad hex */
  CHECK(uh_checksum_for(buf, strlen(buf), "t", 1, out) == UH_ENOENT);
  CHECK(uh_checksum_for(buf, 10, "t", 1, out) == UH_ENOENT);    /* cut */
  CHECK(uh_checksum_for("", 0, "", 0, out) == UH_ENOENT);
  LUA("assert(http.checksum_for('SHA256 (t) = ' .. ('Ab'):rep(32), 't')"
      " == ('ab'):rep(32))\n"
      "local r, m = http.checksum_for('nothing', 'tool.bin')\n"
      "assert(r == nil and m:find('tool.bin', 1, true))");
}

/* ---- success paths ---- */

static void test_download_and_cache_hit(void)
{
  LUA("fresh()\n"
      "local sum = pattern_sha(300000)\n"
      "local r = assert(http.download(dopts('/file/300000', sum)))\n"
      "assert(r.cached == false and r.bytes == 300000 and r.sha256 == sum)\n"
      "assert(r.path == CACHE .. '/sha256/' .. sum, r.path)\n"
      "local f = assert(io.open(r.path, 'rb')); local s = f:read('a'); f:close()\n"
      "assert(#s == 300000 and sha256(s) == sum)\n"
      "local left = files(CACHE)\n"
      "assert(#left == 1 and left[1] == 'sha256/' .. sum, table.concat(left, ' '))\n"
      "local before = requests()\n"
      "local r2 = assert(http.download(dopts('/file/300000', sum:upper())))\n"
      "assert(r2.cached == true and r2.path == r.path and r2.bytes == 300000)\n"
      "assert(requests() == before, 'a cache hit made a request')");
}

/* docs/security.md "Trusted cache": a cached file is hashed again each time
 * it is used; one whose bytes changed (the cache was written behind uphook's
 * back) is removed and downloaded again, and http.cached (the mock's check)
 * says the same */
static void test_cache_verified_when_used(void)
{
  LUA("fresh()\n"
      "local sum = pattern_sha(1000)\n"
      "local r = assert(http.download(dopts('/file/1000', sum)))\n"
      "assert(http.cached(CACHE, sum) == r.path)\n"
      "local f = assert(io.open(r.path, 'wb')); f:write('tampered'); f:close()\n"
      "local before = requests()\n"
      "local r2 = assert(http.download(dopts('/file/1000', sum)))\n"
      "assert(r2.cached == false, 'the tampered file was used')\n"
      "assert(requests() == before + 1, 'not downloaded again')\n"
      "f = assert(io.open(r2.path, 'rb')); local s = f:read('a'); f:close()\n"
      "assert(sha256(s) == sum)\n"
      "f = assert(io.open(r.path, 'wb')); f:write('again'); f:close()\n"
      "assert(http.cached(CACHE, sum) == nil)\n"
      "assert(#files(CACHE) == 0, 'the bad file stayed')\n"
      "local ok = pcall(http.cached, CACHE, sum:upper())\n"
      "assert(not ok, 'upper case accepted')");
}

static void test_download_via_checksum_files(void)
{
  LUA("fresh()\n"
      "for _, kind in ipairs({'gnu', 'bsd'}) do\n"
      "  local text = assert(http.fetch(opts('/sums/' .. kind)))\n"
      "  for _, n in ipairs({1000, 65536}) do\n"
      "    local name = ('tool-%d.bin'):format(n)\n"
      "    local sum = assert(http.checksum_for(text, name))\n"
      "    assert(sum == pattern_sha(n), kind .. ' ' .. name)\n"
      "    local r = assert(http.download(dopts('/dl/' .. name, sum)))\n"
      "    assert(r.bytes == n)\n"
      "  end\n"
      "end");
}

static void test_store_shares_the_cache(void)
{
  LUA("fresh()\n"
      "local body = ('mock binary\\n'):rep(1000)\n"
      "local sum = sha256(body)\n"
      "local r = assert(http.store{body = body, sha256 = sum, cache_dir = CACHE,"
      "  url = 'https://example.com/tool'})\n"
      "assert(r.cached == false and r.bytes == #body)\n"
      "assert(r.path == CACHE .. '/sha256/' .. sum)\n"
      "local r2 = assert(http.store{body = body, sha256 = sum, cache_dir = CACHE})\n"
      "assert(r2.cached and r2.path == r.path)\n"
      /* a stored file is a cache hit for download: no transfer */
      "local before = requests()\n"
      "local r3 = assert(http.download(dopts('/file/5', sum)))\n"
      "assert(r3.cached and r3.path == r.path and requests() == before)\n"
      /* store{file=} reads a file the same way */
      "fresh()\n"
      "local r4 = assert(http.store{file = r.path, sha256 = sum, cache_dir = CACHE})\n"
      "assert(r4.bytes == #body and not r4.cached)\n"
      /* failures: clean, naming the url, showing both sums */
      "fresh()\n"
      "local bad = ('0'):rep(64)\n"
      "fails(http.store, {body = body, sha256 = bad, cache_dir = CACHE,"
      "  url = 'https://example.com/tool'}, 'sha256 mismatch for',"
      "  'expected ' .. bad, 'got ' .. sum)\n"
      "fails(http.store, {file = ROOT .. '/missing', sha256 = bad,"
      "  cache_dir = CACHE}, 'No such file')\n"
      "fails(http.store, {body = body, sha256 = sum, cache_dir = CACHE,"
      "  url = 'u', max_bytes = 10}, 'max_bytes')");
}

static void test_fetch_and_head(void)
{
  LUA("local s = assert(http.fetch(opts('/file/1000')))\n"
      "assert(#s == 1000 and sha256(s) == pattern_sha(1000))\n"
      "assert(http.fetch(opts('/file/1000', {sha256 = pattern_sha(1000)})))\n"
      "local o = opts('/file/1000', {sha256 = pattern_sha(999)})\n"
      "fails(http.fetch, o, 'sha256 mismatch', pattern_sha(999), pattern_sha(1000))\n"
      "fails(http.fetch, opts('/chunked/70000', {max_bytes = 65536}), 'max_bytes')\n"
      "fails(http.fetch, opts('/file/' .. (16 * 1048576 + 1)), 'max_bytes (16777216)')\n"
      "assert(#assert(http.fetch(opts('/redirect/chain/2'))) == 100)\n"
      "assert(http.head(opts('/file/100')) == 200)\n"
      "assert(http.head(opts('/status/404')) == 404)\n"
      "assert(http.head(opts('/redirect/chain/3')) == 200)\n"
      "local r, m = http.head(opts('/redirect/file'))\n"
      "assert(r == nil and m:find('file:///etc/passwd', 1, true), m)");
}

static void test_plain_http_when_declared(void)
{
  LUA("fresh()\n"
      "local h = {['127.0.0.1'] = true}\n"
      "local r = assert(http.download(dopts(PLAIN .. '/file/100',"
      "  pattern_sha(100), {hosts = {}, http_hosts = h})))\n"
      "assert(r.bytes == 100)\n"
      "fresh()\n"
      "assert(http.download(dopts('/redirect/http', pattern_sha(100),"
      "  {http_hosts = h})))\n"
      "fresh()\n"
      /* a declared host that is this node is not reached by its name
       * (docs/security.md "Node-local addresses"):
       * test_local_addresses_refused */
      "fails(http.download, dopts('/redirect/localhost', pattern_sha(100),"
      "  {hosts = {'127.0.0.1', 'localhost'}}), '(loopback)')");
}

static void test_gzip_bomb_never_expands(void)
{
  LUA("fresh()\n"
      "local raw = assert(http.fetch(opts('/bomb', {max_bytes = 2 * 1048576})))\n"
      "assert(#raw < 2 * 1048576 and raw:sub(1, 2) == '\\31\\139')\n"
      "local r = assert(http.download(dopts('/bomb', sha256(raw),"
      "  {max_bytes = 2 * 1048576})))\n"
      "assert(r.bytes == #raw)");
}

static void test_progress_json(void)
{
  LUA("fresh()\n"
      "local out, r = capture(1, function()\n"
      "  return http.download(dopts('/file/200000', pattern_sha(200000),"
      "    {progress = 'json'}))\n"
      "end)\n"
      "assert(r and r.bytes == 200000)\n"
      "assert(out:find('{\"event\":\"progress\",\"url\":\"' .. BASE"
      "  .. '/file/200000\",\"bytes\":200000,\"total\":200000}', 1, true), out)\n"
      "fresh()\n"
      "local out2 = capture(1, function()\n"
      "  return http.download(dopts('/file/200', pattern_sha(200)))\n"
      "end)\n"
      "assert(out2 == '', out2)\n"
      /* tty: a redrawn bar on stderr, closed by a newline */
      "local err, r3 = capture(2, function()\n"
      "  return http.download(dopts('/slow', pattern_sha(1), {deadline = 1,"
      "    progress = 'tty'}))\n"
      "end)\n"
      "assert(r3 == nil and err:find('\\r\\27%[K') and err:find('ETA', 1, true)"
      "  and err:find('/slow', 1, true) and err:sub(-1) == '\\n', err)");
}

/* ---- failures: clean, naming the URL, nothing left in the cache ---- */

static void test_http_errors(void)
{
  LUA("fresh()\n"
      "local s = pattern_sha(100)\n"
      "fails(http.download, dopts('/status/404', s), 'HTTP 404')\n"
      "fails(http.download, dopts('/status/500', s), 'HTTP 500')\n"
      "fails(http.download, dopts('/redirect/http', s, {http_hosts = {'127.0.0.1:1'}}),"
      "  'redirect from ' .. BASE .. '/redirect/http to ' .. PLAIN .. '/file/100')\n"
      "fails(http.download, dopts('/nowhere', s), 'HTTP 404')\n"
      "fails(http.download, dopts('/truncated', s), 'transfer closed')\n"
      "fails(http.download, dopts('/redirect/chain/1', ('0'):rep(64)),"
      "  'sha256 mismatch for ' .. BASE .. '/redirect/chain/1: expected '"
      "  .. ('0'):rep(64) .. ', got ' .. s)\n"
      "fails(http.fetch, opts('/status/403'), 'HTTP 403')\n"
      "fails(http.fetch, opts('/status/404', {max_bytes = 4}), 'HTTP 404')");
}

static void test_limits(void)
{
  LUA("fresh()\n"
      "local s = pattern_sha(200000)\n"
      "fails(http.download, dopts('/chunked/200000', s, {max_bytes = 100000}),"
      "  'exceeds max_bytes (100000)')\n"
      "fails(http.download, dopts('/file/200000', s, {max_bytes = 100000}),"
      "  'max_bytes')\n"
      "assert(http.download(dopts('/chunked/200000', s, {max_bytes = 200000})))\n"
      "fresh()\n"
      "fails(http.download, dopts('/bomb', s, {max_bytes = 500000}), 'max_bytes')\n"
      "local t0 = now()\n"
      "fails(http.download, dopts('/slow', s, {deadline = 1}), 'timed out')\n"
      "assert(now() - t0 < 3, 'the deadline did not hold')\n"
      "fails(http.download, dopts('/file/100', s, {deadline = 0}),"
      "  'deadline passed')\n"
      "fails(http.fetch, opts('/slow', {deadline = 0.5}), 'timed out')");
}

static void test_redirects_refused(void)
{
  LUA("fresh()\n"
      "local s = pattern_sha(100)\n"
      "local function refused(p, target, ...)\n"
      "  return fails(http.download, dopts(p, s), target, ...)\n"
      "end\n"
      "refused('/redirect/http', 'redirect from ' .. BASE .. '/redirect/http to '"
      "  .. PLAIN .. '/file/100 refused', 'net:http://127.0.0.1')\n"
      "refused('/redirect/file', 'to file:///etc/passwd refused',"
      "  'scheme file')\n"
      "refused('/redirect/ftp', 'ftp://127.0.0.1/x', 'scheme ftp')\n"
      "refused('/redirect/otherhost', 'https://localhost.example:',"
      "  'host localhost.example is not declared')\n"
      "refused('/redirect/localhost', 'https://localhost:', 'host localhost')\n"
      "refused('/redirect/loop', 'more than 5 redirects')\n"
      "refused('/redirect/chain/6', 'more than 5 redirects')\n"
      "assert(http.download(dopts('/redirect/chain/5', s)))\n"
      "fresh()\n"
      /* the first URL obeys the same rules */
      "fails(http.download, dopts(PLAIN .. '/file/100', s), 'net:http://')\n"
      "fails(http.download, dopts('file:///etc/passwd', s), 'scheme file')\n"
      "fails(http.download, dopts('https://example.com/x', s),"
      "  'host example.com is not declared')\n"
      "fails(http.download, dopts('https://127.0.0.1@example.com/x', s),"
      "  'host example.com')\n"
      "fails(http.fetch, opts('/redirect/otherhost'), 'localhost.example')\n"
      "fails(http.fetch, opts('not a url'), 'not an absolute URL')");
}

static void test_bad_certificates(void)
{
  LUA("fresh()\n"
      "local s = pattern_sha(100)\n"
      "fails(http.download, dopts(SELF .. '/file/100', s), 'certificate')\n"
      "fails(http.download, dopts(WRONG .. '/file/100', s), '127.0.0.1')\n"
      "fails(http.download, dopts('/file/100', s, {ca_file = ROOT .. '/none.pem'}))\n"
      /* the system bundle does not know the test CA */
      "local o = dopts('/file/100', s); o.ca_file = nil\n"
      "fails(http.download, o, 'certificate')");
}

static void test_misuse_raises(void)
{
  LUA("fresh()\n"
      "local s = pattern_sha(100)\n"
      "local function raises(o, needle)\n"
      "  local ok, e = pcall(http.download, o)\n"
      "  assert(not ok and e:find(needle, 1, true), tostring(e))\n"
      "end\n"
      "raises(dopts('/file/100', s, {bogus = 1}), \"unknown option 'bogus'\")\n"
      "raises(dopts('/file/100', nil), \"'sha256' is required\")\n"
      "raises(dopts('/file/100', 'abc'), '64 hex digits')\n"
      "raises(dopts('/file/100', s, {cache_dir = 'rel'}), 'absolute')\n"
      "raises(dopts('/file/100', s, {progress = 'bar'}), 'progress')\n"
      "raises(dopts('/file/100', s, {max_bytes = -1}), 'max_bytes')\n"
      "raises(dopts('/file/100', s, {hosts = 'x'}), 'hosts')\n"
      "assert(not pcall(http.download, 'x'))\n"
      "assert(not pcall(http.store, {sha256 = s, cache_dir = CACHE}))");
}

/* docs/security.md "Node-local addresses": which addresses a hook's
 * transfer may not reach unless its permission names them; private ranges
 * stay allowed */
static int refused(const char *text)
{
  struct sockaddr_in in;
  struct sockaddr_in6 in6;
  memset(&in, 0, sizeof in);
  memset(&in6, 0, sizeof in6);
  if (inet_pton(AF_INET, text, &in.sin_addr) == 1) {
    in.sin_family = AF_INET;
    return uh_net_refused_class((struct sockaddr *)&in) != NULL;
  }
  CHECK(inet_pton(AF_INET6, text, &in6.sin6_addr) == 1);
  in6.sin6_family = AF_INET6;
  return uh_net_refused_class((struct sockaddr *)&in6) != NULL;
}

static void test_addresses_classified(void)
{
  static const char *const no[] = { "127.0.0.1", "127.1.2.3", "0.0.0.0",
    "169.254.169.254", "169.254.170.2", "169.254.0.1", "100.100.100.200",
    "::1", "::", "fe80::1", "febf::1", "::ffff:127.0.0.1",
    "::ffff:169.254.169.254", "fd00:ec2::254", NULL };
  static const char *const yes[] = { "10.0.0.1", "172.16.0.1", "192.168.1.1",
    "100.64.0.1", "8.8.8.8", "128.0.0.1", "169.253.255.255", "fd00::1",
    "fc00::1", "fec0::1", "2001:db8::1", "::ffff:10.0.0.1", NULL };
  for (int i = 0; no[i]; i++)
    if (!refused(no[i])) {
      fprintf(stderr, "  %s should be refused\n", no[i]);
      CHECK(0);
    }
  for (int i = 0; yes[i]; i++)
    if (refused(yes[i])) {
      fprintf(stderr, "  %s should be allowed\n", yes[i]);
      CHECK(0);
    }
}

/* docs/security.md "Node-local addresses", end to end: a declared name that
 * resolves to this node is refused in libcurl's open-socket callback, before
 * any socket exists (http.connects counts them); names pinned with the
 * test-only UPHOOK_TEST_RESOLVE reach the metadata and link-local refusals
 * without a DNS query; only the literal, declared address connects */
static void test_local_addresses_refused(void)
{
  char pins[256];
  const char *port;
  lua_getglobal(L, "BASE");
  port = strrchr(lua_tostring(L, -1), ':') + 1;
  snprintf(pins, sizeof pins, "metadata.test:%s:169.254.169.254 "
           "ll6.test:%s:[fe80::1]", port, port);
  lua_pop(L, 1);
  setenv("UPHOOK_TEST_RESOLVE", pins, 1);
  unsetenv("https_proxy");
  unsetenv("HTTPS_PROXY");
  unsetenv("all_proxy");
  unsetenv("ALL_PROXY");
  LUA("fresh()\n"
      "local s = pattern_sha(100)\n"
      "local port = BASE:match(':(%d+)$')\n"
      "local H = {['127.0.0.1'] = true, localhost = true,\n"
      "  ['metadata.test'] = true, ['ll6.test'] = true}\n"
      "local function o(u) local x = dopts(u, s); x.hosts = H; return x end\n"
      "local before = requests()\n"
      "local c0, r0 = http.connects()\n"
      "local m = fails(http.download, o('https://localhost:' .. port\n"
      "  .. '/file/100'), 'localhost resolves to ', ' (loopback)')\n"
      "assert(m:find('(net:127.0.0.1)', 1, true)\n"
      "  or m:find('(net:[::1])', 1, true), m)\n"
      "fails(http.download, o('https://metadata.test:' .. port .. '/file/100'),\n"
      "  'resolves to 169.254.169.254 (link-local', '(net:169.254.169.254)')\n"
      "fails(http.download, o('https://ll6.test:' .. port .. '/x'),\n"
      "  'resolves to fe80::1 (link-local)', '(net:[fe80::1])')\n"
      "local c1, r1 = http.connects()\n"
      "assert(c1 == c0 and r1 >= r0 + 3, ('%d connects, %d refusals')\n"
      "  :format(c1 - c0, r1 - r0))\n"
      "assert(requests() == before, 'a refused request reached the server')\n"
      /* a redirect to a declared name of this node: the first hop (the
       * literal 127.0.0.1 the permission names) reaches the server, the
       * second is refused */
      "before = requests()\n"
      "c0, r0 = http.connects()\n"
      "fails(http.download, o('/redirect/localhost'),\n"
      "  'localhost resolves to ')\n"
      "c1, r1 = http.connects()\n"
      /* (the first hop may reuse the connection of requests()) */
      "assert(c1 - c0 <= 1 and r1 >= r0 + 1, (c1 - c0) .. ' connects')\n"
      "assert(requests() == before + 1)\n"
      "assert(http.download(o('/file/100')))");
  unsetenv("UPHOOK_TEST_RESOLVE");
}

/* docs/security.md "HTTPS downgrade on redirect": https that redirects to
 * http is refused unless net:http://<the target> is declared (host, or
 * host:port) */
static void test_redirect_downgrade(void)
{
  LUA("fresh()\n"
      "local s = pattern_sha(100)\n"
      "local pp = PLAIN:match(':(%d+)$')\n"
      "fails(http.download, dopts('/redirect/http', s), 'plain http to '\n"
      "  .. '127.0.0.1 is not declared')\n"
      "fails(http.download, dopts('/redirect/http', s,\n"
      "  {http_hosts = {'127.0.0.1:1'}}), 'plain http to 127.0.0.1')\n"
      "fails(http.download, dopts('/redirect/http', s,\n"
      "  {hosts = {'127.0.0.1', '127.0.0.1:' .. pp}}), 'plain http')\n"
      "assert(http.download(dopts('/redirect/http', s,\n"
      "  {http_hosts = {'127.0.0.1:' .. pp}})))");
}

static int rm_one(const char *p, const struct stat *st, int flag,
                  struct FTW *f)
{
  (void)st;
  (void)flag;
  (void)f;
  remove(p);
  return 0;
}

int main(void)
{
  int rc;
  if (!setup()) {
    fprintf(stderr, "test server did not start\n");
    stop_server();
    printf("0 passed, 1 failed\n");
    return 1;
  }
  RUN(test_checksum_for);
  RUN(test_download_and_cache_hit);
  RUN(test_cache_verified_when_used);
  RUN(test_download_via_checksum_files);
  RUN(test_store_shares_the_cache);
  RUN(test_fetch_and_head);
  RUN(test_plain_http_when_declared);
  RUN(test_gzip_bomb_never_expands);
  RUN(test_progress_json);
  RUN(test_http_errors);
  RUN(test_limits);
  RUN(test_redirects_refused);
  RUN(test_addresses_classified);
  RUN(test_local_addresses_refused);
  RUN(test_redirect_downgrade);
  RUN(test_bad_certificates);
  RUN(test_misuse_raises);
  lua_close(L);
  stop_server();
  rc = UNIT_END();
  nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
  return rc;
}

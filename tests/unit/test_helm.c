/* uphook.c.helm's codecs and chart reading (host/helm.c,
 * host/helm_chart.c): known vectors, round trips, the gunzip bound, a
 * chart packed by tar, and hostile archives made by Python's tarfile. */
#include "helm.h"
#include "unit.h"

#include <stdlib.h>
#include <lualib.h>
#include <lauxlib.h>

static lua_State *L;

#define TRUE(chunk) CHECK(unit_lua_true(L, chunk))

/* RFC 4648 section 10, both ways; white space skipped; bad text refused */
static void t_b64_vectors(void)
{
  TRUE("local v = { [''] = '', f = 'Zg==', fo = 'Zm8=', foo = 'Zm9v',\n"
       "  foob = 'Zm9vYg==', fooba = 'Zm9vYmE=', foobar = 'Zm9vYmFy' }\n"
       "for plain, enc in pairs(v) do\n"
       "  assert(helm.b64encode(plain) == enc, plain)\n"
       "  assert(helm.b64decode(enc) == plain, enc)\n"
       "end\n"
       "return helm.b64decode('Zm9v\\nYmFy\\n') == 'foobar'");
  TRUE("for _, bad in ipairs{ 'Zm9', 'Zm9v!', 'Zg=', 'Z===' } do\n"
       "  local s, msg = helm.b64decode(bad)\n"
       "  assert(s == nil and msg:find('not base64', 1, true), bad)\n"
       "end return true");
  TRUE("local t = {} for i = 0, 255 do t[#t + 1] = string.char(i) end\n"
       "local s = table.concat(t):rep(100)\n"
       "local e = helm.b64encode(s)\n"
       "return not e:find('\\n') and helm.b64decode(e) == s");
  TRUE("return not pcall(helm.b64encode) and not pcall(helm.b64decode, {})");
}

/* a member made by Python's gzip (mtime 0): read back; ours read by the
 * system's gzip; several members one stream */
static void t_gzip_vectors(void)
{
  TRUE("local z = '\\x1f\\x8b\\x08\\x00\\x00\\x00\\x00\\x00\\x02\\x03\\xcb\\x48"
       "\\xcd\\xc9\\xc9\\xd7\\x51\\xc8\\x48\\xcd\\xc9\\xe5\\x02\\x00"
       "\\x69\\x61\\x0f\\xd7\\x0c\\x00\\x00\\x00'\n"
       "assert(helm.gunzip(z) == 'hello, helm\\n')\n"
       "return helm.gunzip(z .. z) == 'hello, helm\\nhello, helm\\n'");
  TRUE("local p = os.tmpname()\n"
       "local f = assert(io.open(p, 'wb'))\n"
       "f:write(helm.gzip(('release record '):rep(1000))) f:close()\n"
       "local h = assert(io.popen('gzip -dc < ' .. p))\n"
       "local out = h:read('a') h:close() os.remove(p)\n"
       "return out == ('release record '):rep(1000)");
  TRUE("local t = {} for i = 1, 200000 do t[i] = string.char(i * 7 % 256)"
       " end local s = table.concat(t)\n"
       "for _, level in ipairs{ 0, 1, 9 } do\n"
       "  assert(helm.gunzip(helm.gzip(s, level)) == s)\n"
       "end\n"
       "return helm.gunzip(helm.gzip('')) == ''");
  TRUE("return not pcall(helm.gzip, 'x', 10) and not pcall(helm.gzip)");
}

/* gunzip stops at its bound; broken input is an answer, not a crash */
static void t_gunzip_bound(void)
{
  TRUE("local z = helm.gzip(('\\0'):rep(10 << 20))\n"
       "assert(#z < 20000)\n"
       "local s, msg = helm.gunzip(z, 1000)\n"
       "assert(s == nil and msg:find('more than 1000 bytes', 1, true), msg)\n"
       "assert(#helm.gunzip(z, 10 << 20) == 10 << 20)\n"
       "s, msg = helm.gunzip(z, (10 << 20) - 1)\n"
       "return s == nil");
  TRUE("local z = helm.gzip(('abc'):rep(5000))\n"
       "for _, bad in ipairs{ '', 'not gzip at all', z:sub(1, #z - 6),\n"
       "                      z .. 'trailing' } do\n"
       "  local s, msg = helm.gunzip(bad)\n"
       "  assert(s == nil and msg:find('^gunzip: '), #bad)\n"
       "end return true");
}

/* A chart as tar packs it: names without the top folder, bytes exact */
static void t_chart_tar(void)
{
  TRUE("local d = os.tmpname() os.remove(d)\n"
       "assert(os.execute('mkdir -p ' .. d .. '/demo/templates'))\n"
       "local function put(n, s) local f = assert(io.open(d .. '/demo/'"
       " .. n, 'wb')) f:write(s) f:close() end\n"
       "put('Chart.yaml', 'apiVersion: v2\\nname: demo\\nversion: 1.2.3\\n')\n"
       "put('values.yaml', 'replicas: 1\\n')\n"
       "put('templates/cm.yaml', 'kind: ConfigMap\\0binary\\255')\n"
       "assert(os.execute('tar czf ' .. d .. '/demo-1.2.3.tgz -C ' .. d"
       " .. ' demo'))\n"
       "local c = assert(helm.chart(d .. '/demo-1.2.3.tgz'))\n"
       "os.execute('rm -rf ' .. d)\n"
       "local n = 0 for _ in pairs(c.files) do n = n + 1 end\n"
       "return n == 3 and c.files['Chart.yaml']:find('version: 1.2.3')\n"
       "  and c.files['values.yaml'] == 'replicas: 1\\n'\n"
       "  and c.files['templates/cm.yaml'] == 'kind: ConfigMap\\0binary\\255'");
  TRUE("local c, msg = helm.chart('/nonexistent/x.tgz')\n"
       "assert(c == nil and msg:find('/nonexistent/x.tgz', 1, true))\n"
       "c, msg = helm.chart('/tmp')\n"
       "assert(c == nil and msg:find('not a regular file'))\n"
       "local p = os.tmpname()\n"
       "local f = io.open(p, 'wb') f:write(helm.gzip('not a tar')) f:close()\n"
       "c, msg = helm.chart(p) os.remove(p)\n"
       "return c == nil and msg:find('^chart ')");
}

/* Each hostile archive is refused whole, naming its entry (Python's
 * tarfile writes what tar would refuse to). */
static const char HOSTILE_PY[] =
  "import io, sys, tarfile\n"
  "out = sys.argv[1]\n"
  "def make(name, entries, level=1):\n"
  "    with tarfile.open(f'{out}/{name}.tgz', 'w:gz', compresslevel=level)"
  " as t:\n"
  "        for e in entries:\n"
  "            ti = tarfile.TarInfo(e[0]); data = b''\n"
  "            if e[1] == 'file': data = e[2]; ti.size = len(data)\n"
  "            elif e[1] == 'sym': ti.type = tarfile.SYMTYPE; ti.linkname = e[2]\n"
  "            elif e[1] == 'hard': ti.type = tarfile.LNKTYPE; ti.linkname = e[2]\n"
  "            elif e[1] == 'fifo': ti.type = tarfile.FIFOTYPE\n"
  "            t.addfile(ti, io.BytesIO(data))\n"
  "ok = ('c/Chart.yaml', 'file', b'name: c\\n')\n"
  "make('dotdot', [ok, ('c/../../etc/evil', 'file', b'x')])\n"
  "make('absolute', [ok, ('/etc/evil', 'file', b'x')])\n"
  "make('symlink', [ok, ('c/templates/x.yaml', 'sym', '/etc/shadow')])\n"
  "make('hardlink', [ok, ('c/templates/x.yaml', 'hard', 'c/Chart.yaml')])\n"
  "make('fifo', [ok, ('c/templates/p', 'fifo')])\n"
  "make('toplevel', [ok, ('Chart.yaml', 'file', b'x')])\n"
  "make('hugefile', [ok, ('c/big', 'file', bytes(6 << 20))])\n"
  "make('hugechart', [ok] + [(f'c/f{i}', 'file', bytes(5 << 20))"
  " for i in range(21)])\n"
  "make('entries', [ok] + [(f'c/t/{i}', 'file', b'') for i in range(10001)])\n";

static void t_chart_hostile(void)
{
  lua_pushstring(L, HOSTILE_PY);
  lua_setglobal(L, "HOSTILE_PY");
  TRUE("local d = os.tmpname() os.remove(d) assert(os.execute('mkdir ' .. d))\n"
       "local f = assert(io.open(d .. '/make.py', 'w')) f:write(HOSTILE_PY)"
       " f:close()\n"
       "assert(os.execute('python3 ' .. d .. '/make.py ' .. d))\n"
       "local want = {\n"
       "  dotdot = \"'c/../../etc/evil' has a '..' component\",\n"
       "  absolute = \"'/etc/evil' has an absolute name\",\n"
       "  symlink = \"'c/templates/x.yaml' is a link\",\n"
       "  hardlink = \"'c/templates/x.yaml' is a link\",\n"
       "  fifo = \"'c/templates/p' is not a regular file\",\n"
       "  toplevel = \"'Chart.yaml' lies outside the chart's top folder\",\n"
       "  hugefile = \"'c/big' is larger than 5 MiB\",\n"
       "  hugechart = \"'c/f19' takes the chart past 100 MiB\",\n"
       "  entries = 'past the limit of 10000 entries',\n"
       "}\n"
       "local bad = {}\n"
       "for name, text in pairs(want) do\n"
       "  local c, msg = helm.chart(d .. '/' .. name .. '.tgz')\n"
       "  if c ~= nil or not msg:find(text, 1, true) then\n"
       "    bad[#bad + 1] = name .. ': ' .. tostring(msg) end\n"
       "end\n"
       "os.execute('rm -rf ' .. d)\n"
       "assert(#bad == 0, table.concat(bad, '; '))\n"
       "return true");
}

int main(void)
{
  L = luaL_newstate();
  luaL_openlibs(L);
  luaL_requiref(L, "helm", luaopen_uphook_helm, 1);
  lua_pop(L, 1);
  RUN(t_b64_vectors);
  RUN(t_gzip_vectors);
  RUN(t_gunzip_bound);
  RUN(t_chart_tar);
  RUN(t_chart_hostile);
  lua_close(L);
  return UNIT_END();
}

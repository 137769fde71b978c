/* uphook.c.yaml: Kubernetes scalar rules, limits, errors, the C API and
 * a decode/encode/decode round trip of every file of tests/data/corpus. */
#include <ftw.h>
#include <stdlib.h>
#include <time.h>

#include <lauxlib.h>
#include <lualib.h>

#include "luax.h"
#include "unit.h"
#include "yaml.h"

static lua_State *L;

/* Lua helpers every snippet can use: yaml, eq (deep, with array marks),
 * err(fn, pattern) -> message. */
static const char helpers[] =
  "yaml = ...\n"
  "function eq(a, b)\n"
  "  if type(a) ~= 'table' or type(b) ~= 'table' then\n"
  "    if a ~= a and b ~= b then return true end\n"
  "    return a == b and math.type(a) == math.type(b)\n"
  "  end\n"
  "  if yaml.isarray(a) ~= yaml.isarray(b) then return false end\n"
  "  if getmetatable(a) ~= getmetatable(b) then return false end\n"
  "  for k, v in pairs(a) do if not eq(v, b[k]) then return false end end\n"
  "  for k in pairs(b) do if a[k] == nil then return false end end\n"
  "  return true\n"
  "end\n"
  UNIT_LUA_ERR;

#define LUA(chunk) LUA_CHECK(L, chunk)


static void test_booleans_and_nulls(void)
{
  LUA("local d = yaml.decode('a: yes\\nb: on\\nc: \"yes\"\\nd: y\\ne: NO\\n"
      "f: off\\ng: True\\nh: ~\\ni: \\nj: \"\"\\nk: null\\nl: Null\\n"
      "m: \\'on\\'\\nnn: nope\\n')\n"
      "assert(d.a == true and d.b == true and d.c == 'yes' and d.d == true)\n"
      "assert(d.e == false and d.f == false and d.g == true)\n"
      "assert(d.h == yaml.null and d.i == yaml.null and d.j == '')\n"
      "assert(d.k == yaml.null and d.l == yaml.null and d.m == 'on')\n"
      "assert(d.nn == 'nope')\n"
      "assert(yaml.decode('~') == yaml.null and yaml.decode('') == yaml.null)");
}

static void test_numbers(void)
{
  LUA("local d = yaml.decode('a: 0755\\nb: 1e3\\nc: 0x1F\\nd: 0b101\\n"
      "e: 1_000\\nf: 1.5\\ng: .inf\\nh: -.inf\\ni: .nan\\nj: 08\\n"
      "k: 9223372036854775807\\nl: 9223372036854775808\\nm: -0755\\n"
      "nn: +12\\no: 0o17\\np: 1e400\\nq: 2024-01-02\\nr: .5\\ns: 1.\\n"
      "t: -9223372036854775808\\nu: 0x\\nv: 12abc\\nw: \"12\"\\n')\n"
      "assert(d.a == 493 and math.type(d.a) == 'integer')\n"
      "assert(d.b == 1000 and math.type(d.b) == 'float')\n"
      "assert(d.c == 31 and d.d == 5 and d.e == 1000 and d.f == 1.5)\n"
      "assert(d.g == math.huge and d.h == -math.huge and d.i ~= d.i)\n"
      "assert(d.j == 8 and math.type(d.j) == 'float')\n"
      "assert(d.k == math.maxinteger and math.type(d.l) == 'float')\n"
      "assert(d.m == -493 and d.nn == 12 and d.o == 15 and d.p == '1e400')\n"
      "assert(d.q == '2024-01-02' and d.r == 0.5 and d.s == 1.0)\n"
      "assert(d.t == math.mininteger and d.u == '0x' and d.v == '12abc')\n"
      "assert(d.w == '12')");
}

static void test_tags_and_blocks(void)
{
  LUA("local d = yaml.decode('a: !!str 123\\nb: !!int \"12\"\\n"
      "c: !!float 1\\nd: !custom 5\\ne: |\\n  line1\\n  line2\\n"
      "f: >\\n  yes\\n')\n"
      "assert(d.a == '123' and d.b == 12 and d.c == 1.0)\n"
      "assert(math.type(d.c) == 'float' and d.d == '5')\n"
      "assert(d.e == 'line1\\nline2\\n' and d.f == 'yes\\n')\n"
      "err(function() yaml.decode('a: !!int abc') end, 'line 1')\n"
      "err(function() yaml.decode('a: !!int abc') end, 'as a !!int')");
}

static void test_keys_become_strings(void)
{
  LUA("local d = yaml.decode('yes: 1\\ny: 2\\nn: 3\\n1: a\\n0x10: b\\n\"2\": c\\n')\n"
      "assert(d['1'] == 'a' and d['16'] == 'b')\n"
      "assert(d['2'] == 'c' and not yaml.isarray(d))\n"
      "assert(d['true'] == 2 and d['false'] == 3 and d.y == nil)\n"
      "err(function() yaml.decode('~: a') end, 'key is null')\n"
      "err(function() yaml.decode('[a]: b') end, 'collection')");
}

static void test_anchors_and_merge(void)
{
  LUA("local d = yaml.decode('base: &b {x: 1, l: [1, 2]}\\n"
      "use: *b\\nm:\\n  <<: *b\\n  yy: 2\\ns: &s hi\\nt: *s\\n"
      "q: {\"<<\": 3}\\n')\n"
      "assert(eq(d.base, d.use) and d.base ~= d.use)\n"
      "assert(d.base.l ~= d.use.l and yaml.isarray(d.use.l))\n"
      "assert(d.m.x == 1 and d.m.yy == 2 and d.m['<<'] == nil)\n"
      "assert(d.t == 'hi' and d.q['<<'] == 3)\n"
      "local l = yaml.decode('- &a {k: 1}\\n- &c {k: 2, j: 3}\\n"
      "- <<: [*a, *c]\\n')\n"
      "assert(l[3].k == 1 and l[3].j == 3)\n"
      "err(function() yaml.decode('a: *nope') end, \"unknown anchor 'nope'\")");
}

/* A collection's table is made at its end with room for its values
 * (host/yaml.c, yframe), or at once past PENDING values or at a merge
 * key: order, repeated keys and merges come out as they went in. */
static void test_tables_made_at_the_end(void)
{
  LUA("local t = {'l:'}\n"
      "for i = 1, 5000 do t[#t + 1] = '  - ' .. i end\n"
      "t[#t + 1] = 'm:'\n"
      "for i = 1, 3000 do t[#t + 1] = '  k' .. i .. ': ' .. i end\n"
      "local d = yaml.decode(table.concat(t, '\\n'))\n"
      "assert(#d.l == 5000 and yaml.isarray(d.l))\n"
      "for i = 1, 5000 do assert(d.l[i] == i) end\n"
      "for i = 1, 3000 do assert(d.m['k' .. i] == i) end\n"
      "d = yaml.decode('a: 1\\nb: 2\\na: 3\\n')\n"
      "assert(d.a == 3 and d.b == 2)\n"
      "d = yaml.decode('b: &b {x: 1, w: 2}\\nm: {x: 0, <<: *b, w: 9, z: 3}\\n')\n"
      "assert(d.m.x == 1 and d.m.w == 9 and d.m.z == 3 and d.m['<<'] == nil)\n"
      "d = yaml.decode('- []\\n- {}\\n- [[], [1, [2, {a: [3]}]]]\\n')\n"
      "assert(eq(d, yaml.decode('[[], {}, [[], [1, [2, {a: [3]}]]]]')))\n"
      "assert(yaml.isarray(d[1]) and not yaml.isarray(d[2]))");
}

static void test_sequences_and_documents(void)
{
  LUA("local d = yaml.decode('a: []\\nb: {}\\nc: [1, [], {}]\\n')\n"
      "assert(yaml.isarray(d.a) and #d.a == 0 and not yaml.isarray(d.b))\n"
      "assert(yaml.encode(d) == 'a: []\\nb: {}\\nc:\\n- 1\\n- []\\n- {}\\n')\n"
      "local all = yaml.decode_all('a: 1\\n---\\n---\\nb: 2\\n')\n"
      "assert(yaml.isarray(all) and #all == 3 and all[2] == yaml.null)\n"
      "assert(#yaml.decode_all('') == 0 and yaml.isarray(yaml.decode_all('')))\n"
      "err(function() yaml.decode('a: 1\\n---\\nb: 2\\n') end,"
      "  'line 2: expected a single document')\n"
      "local s = yaml.encode_all({{a = 1}, {b = 2}, yaml.null})\n"
      "assert(s == 'a: 1\\n---\\nb: 2\\n--- null\\n', s)\n"
      "assert(eq(yaml.decode_all(s), yaml.array{{a = 1}, {b = 2}, yaml.null}))");
}

static void test_encode_quoting(void)
{
  LUA("for _, s in ipairs{'yes', 'on', '1.0', '0755', 'null', '', '~',"
      "  '1e3', 'true', 'Y', 'n', 'OFF', '.inf', '-12', '0x1F', '1_000',"
      "  '<<', '2024-01-02', '- a', 'a: b', '#x', '@x', ' x', 'x ',"
      "  '*a', '&a', '!t', '%x', '{a}', '[a]', 'a\\tb'} do\n"
      "  local e = yaml.encode({v = s})\n"
      "  assert(yaml.decode(e).v == s, s .. ' -> ' .. e)\n"
      "  assert(yaml.decode(yaml.encode(s)) == s)\n"
      "  local k = yaml.encode({[s] = 1})\n"
      "  assert(yaml.decode(k)[s] == 1, k)\n"
      "end\n"
      "assert(yaml.encode({a = 'yes'}) == 'a: \"yes\"\\n')\n"
      "assert(yaml.encode({a = 'plain text'}) == 'a: plain text\\n')");
}

static void test_encode_multiline_and_numbers(void)
{
  LUA("local t = {a = 'line1\\nline2\\n', b = 'x\\ny', c = '  lead\\nz\\n',"
      "  d = 'trail  \\nz', e = 'a\\n\\n\\n'}\n"
      "local s = yaml.encode(t)\n"
      "assert(s:find('a: |\\n  line1\\n  line2\\n', 1, true), s)\n"
      "assert(s:find('b: |-\\n', 1, true), s)\n"
      "assert(eq(yaml.decode(s), t), s)\n"
      "for _, f in ipairs{1.0, 0.1, 1e300, -0.0, 1/3, 2^53, 1e-300,"
      "  math.huge, -math.huge, 5e-324, 123456789.125} do\n"
      "  local v = yaml.decode(yaml.encode({f = f})).f\n"
      "  assert(v == f and math.type(v) == 'float', tostring(f))\n"
      "end\n"
      "assert(yaml.encode({f = 1.0}) == 'f: 1.0\\n')\n"
      "assert(yaml.encode({f = 0.1}) == 'f: 0.1\\n')\n"
      "local n = yaml.decode(yaml.encode({f = 0/0})).f\n"
      "assert(n ~= n)\n"
      "assert(yaml.encode({i = math.mininteger}) == "
      "  'i: -9223372036854775808\\n')\n"
      "assert(yaml.encode(nil) == 'null\\n' and yaml.encode(true) == 'true\\n')\n"
      "assert(yaml.encode({z = 1, a = 2, m = {3, 4}}) == "
      "  'a: 2\\nm:\\n- 3\\n- 4\\nz: 1\\n')\n"
      "assert(yaml.encode({[2] = 'b', [1] = 'a'}) == '- a\\n- b\\n')\n"
      "assert(yaml.encode({[1] = 'a', [3] = 'c'}) == '1: a\\n3: c\\n')");
}

static void test_encode_errors(void)
{
  LUA("local t = {a = {b = {}}}\n"
      "t.a.b.c = t\n"
      "err(function() yaml.encode(t) end,"
      "  'cannot encode a table that contains itself at $.a.b.c')\n"
      "local l = {1, 2, {}}\n"
      "l[3][1] = l\n"
      "err(function() yaml.encode(l) end, 'contains itself at $[3][1]')\n"
      "local shared = {x = 1}\n"
      "assert(yaml.encode({a = shared, b = shared}) =="
      "  'a:\\n  x: 1\\nb:\\n  x: 1\\n')\n"
      "err(function() yaml.encode({a = {[true] = 1}}) end,"
      "  'cannot encode a boolean key at $.a')\n"
      "err(function() yaml.encode({a = {[1.5] = 1}}) end, 'number key')\n"
      "err(function() yaml.encode({f = print}) end,"
      "  'cannot encode a function at $.f')\n"
      "err(function() yaml.encode({l = {io.stdout}}) end,"
      "  'cannot encode a userdata at $.l[1]')\n"
      "err(function() yaml.encode({s = 'bad \\xff utf8'}) end,"
      "  'invalid UTF-8 in a string at $.s')\n"
      "err(function() yaml.encode({['\\xc3'] = 1}) end, 'invalid UTF-8')\n"
      "err(function() yaml.encode_all(5) end, 'table expected')\n"
      "local deep = {}\n"
      "local c = deep\n"
      "for i = 1, 300 do c.x = {}; c = c.x end\n"
      "err(function() yaml.encode(deep) end, 'nested too deep')");
}

static void test_parse_errors_name_lines(void)
{
  LUA("err(function() yaml.decode('a: b: c') end, 'line 1 column 5')\n"
      "err(function() yaml.decode('a:\\n  - b\\n c: d\\n') end, 'line 3')\n"
      "err(function() yaml.decode('a: [1, 2\\nb: 3\\n') end, 'line ')\n"
      "err(function() yaml.decode('a: \"unterminated\\n') end,"
      "  'found unexpected end of stream')\n"
      "err(function() yaml.decode('\\tx: 1') end, 'line 1')");
}

static void test_nesting_limit(void)
{
  LUA("local ok = string.rep('[', 256) .. string.rep(']', 256)\n"
      "assert(yaml.decode(ok))\n"
      "local bad = 'a:\\n  b: ' .. string.rep('[', 300)\n"
      "err(function() yaml.decode(bad) end,"
      "  'line 2: collections nested deeper than 256 levels')\n"
      "local m = string.rep('{a: ', 5000) .. '1' .. string.rep('}', 5000)\n"
      "err(function() yaml.decode(m) end, 'nested deeper')");
}

static void test_billion_laughs(void)
{
  const char *lol =
    "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
    "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
    "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
    "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
    "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]\n"
    "f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]\n"
    "g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]\n"
    "h: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g]\n"
    "i: &i [*h, *h, *h, *h, *h, *h, *h, *h, *h]\n";
  char err[256];
  int top = lua_gettop(L), kb0 = lua_gc(L, LUA_GCCOUNT, 0), rc;
  /* refused by the alias budget at line 6, before the expansion grows:
   * bounded work, whatever the machine's speed */
  rc = uh_yaml_decode_push(L, lol, strlen(lol), 0, err, sizeof err);
  CHECK(rc == UH_ELIMIT);
  CHECK(strstr(err, "billion laughs") != NULL);
  CHECK(strstr(err, "line 6") != NULL);
  CHECK(lua_gettop(L) == top);
  CHECK(lua_gc(L, LUA_GCCOUNT, 0) - kb0 < 64 * 1024);
}

static void test_c_api(void)
{
  char err[256];
  int top = lua_gettop(L);
  CHECK(uh_yaml_decode_push(L, "a: [1, 2]", 9, 0, err, sizeof err) == UH_OK);
  CHECK(lua_istable(L, -1) && lua_gettop(L) == top + 1);
  CHECK(uh_yaml_encode_push(L, -1, 0, err, sizeof err) == UH_OK);
  CHECK_STR(lua_tostring(L, -1), "a:\n- 1\n- 2\n");
  lua_pop(L, 2);
  CHECK(uh_yaml_decode_push(L, "a: b: c", 7, 1, err, sizeof err)
        == UH_EPARSE);
  CHECK(strstr(err, "line 1 column 5") != NULL);
  lua_newtable(L);
  lua_pushvalue(L, -1);
  lua_setfield(L, -2, "self");
  CHECK(uh_yaml_encode_push(L, -1, 0, err, sizeof err) == UH_EINVAL);
  CHECK(strstr(err, "contains itself at $.self") != NULL);
  lua_pop(L, 1);
  CHECK(lua_gettop(L) == top);
}

/* ---- corpus round trip ---- */

static int corpus_files, corpus_docs, corpus_bad;

static int round_trip(const char *path, const struct stat *st, int type,
                      struct FTW *ftw)
{
  static const char chunk[] =
    "local text = ...\n"
    "local a = yaml.decode_all(text)\n"
    "local b = yaml.decode_all(yaml.encode_all(a))\n"
    "assert(eq(a, b), 'round trip differs')\n"
    "return #a\n";
  size_t n = strlen(path);
  FILE *f;
  char *buf;
  (void)ftw;
  if (type != FTW_F || n < 5 || (strcmp(path + n - 5, ".yaml") &&
                                 strcmp(path + n - 4, ".yml")))
    return 0;
  if (!(f = fopen(path, "rb")) || !(buf = malloc((size_t)st->st_size + 1))) {
    corpus_bad++;
    return 0;
  }
  n = fread(buf, 1, (size_t)st->st_size, f);
  fclose(f);
  luaL_loadstring(L, chunk);
  lua_pushlstring(L, buf, n);
  free(buf);
  if (lua_pcall(L, 1, 1, 0)) {
    fprintf(stderr, "  %s: %s\n", path, lua_tostring(L, -1));
    corpus_bad++;
  } else {
    corpus_docs += (int)lua_tointeger(L, -1);
  }
  lua_pop(L, 1);
  corpus_files++;
  return 0;
}

static void test_corpus_round_trip(void)
{
  CHECK(nftw("tests/data/corpus", round_trip, 16, FTW_PHYS) == 0);
  printf("     corpus: %d files, %d documents round-tripped, %d failed\n",
         corpus_files, corpus_docs, corpus_bad);
  CHECK(corpus_files >= 48 && corpus_bad == 0);
}

int main(void)
{
  L = luaL_newstate();
  luaL_openlibs(L);
  luaL_requiref(L, "uphook.c.yaml", luaopen_uphook_yaml, 0);
  if (luaL_loadstring(L, helpers) || (lua_insert(L, -2), lua_pcall(L, 1, 0, 0))) {
    fprintf(stderr, "helpers: %s\n", lua_tostring(L, -1));
    return 1;
  }
  RUN(test_booleans_and_nulls);
  RUN(test_numbers);
  RUN(test_tags_and_blocks);
  RUN(test_keys_become_strings);
  RUN(test_anchors_and_merge);
  RUN(test_tables_made_at_the_end);
  RUN(test_sequences_and_documents);
  RUN(test_encode_quoting);
  RUN(test_encode_multiline_and_numbers);
  RUN(test_encode_errors);
  RUN(test_parse_errors_name_lines);
  RUN(test_nesting_limit);
  RUN(test_billion_laughs);
  RUN(test_c_api);
  RUN(test_corpus_round_trip);
  lua_close(L);
  return UNIT_END();
}

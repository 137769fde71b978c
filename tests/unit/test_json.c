/* uphook.c.json: null and arrays, integers vs reals, limits, errors with
 * paths, invalid UTF-8, the C API, and agreement with uphook.c.yaml. */
#include <stdlib.h>

#include <lauxlib.h>
#include <lualib.h>

#include "json.h"
#include "luax.h"
#include "unit.h"
#include "yaml.h"

static lua_State *L;

static const char helpers[] =
  "json, yaml = ...\n"
  UNIT_LUA_ERR;

#define LUA(chunk) LUA_CHECK(L, chunk)


static void test_decode_values(void)
{
  LUA("local d = json.decode('{\"a\": null, \"b\": [], \"c\": {}, \"i\": 3,"
      " \"r\": 3.0, \"e\": 1e3, \"t\": true, \"f\": false, \"s\": \"x\\\\u0000y\","
      " \"u\": \"\\\\u00e9\", \"l\": [1, null, \"z\"]}')\n"
      "assert(d.a == json.null and json.null == yaml.null)\n"
      "assert(json.isarray(d.b) and #d.b == 0 and not json.isarray(d.c))\n"
      "assert(math.type(d.i) == 'integer' and math.type(d.r) == 'float')\n"
      "assert(d.e == 1000 and d.t == true and d.f == false)\n"
      "assert(d.s == 'x\\0y' and d.u == '\\u{e9}')\n"
      "assert(#d.l == 3 and d.l[2] == json.null and d.l[3] == 'z')\n"
      "assert(json.decode('null') == json.null and json.decode('7') == 7)\n"
      "assert(json.decode('9223372036854775807') == math.maxinteger)");
}

static void test_encode_values(void)
{
  LUA("assert(json.encode({b = {}, a = json.array(), c = json.null}) =="
      "  '{\"a\":[],\"b\":{},\"c\":null}')\n"
      "assert(json.encode({1, 2, {x = 'y'}}) == '[1,2,{\"x\":\"y\"}]')\n"
      "assert(json.encode({z = 1, a = 2, m = 3}) == '{\"a\":2,\"m\":3,\"z\":1}')\n"
      "assert(json.encode({[1] = 'a', [3] = 'c'}) == '{\"1\":\"a\",\"3\":\"c\"}')\n"
      "assert(json.encode(3) == '3' and json.encode(3.0) == '3.0')\n"
      "assert(json.encode('a\"\\n\\0') == '\"a\\\\\"\\\\n\\\\u0000\"')\n"
      "assert(json.encode(nil) == 'null' and json.encode(true) == 'true')\n"
      "assert(json.encode({a = {1}}, {indent = 2}) =="
      "  '{\\n  \"a\": [\\n    1\\n  ]\\n}')\n"
      "for _, v in ipairs{0.1, 1/3, 1e300, -0.0, 2^53, 5e-324} do\n"
      "  local r = json.decode(json.encode(v))\n"
      "  assert(r == v and math.type(r) == 'float', tostring(v))\n"
      "end\n"
      "local shared = {1}\n"
      "assert(json.encode({a = shared, b = shared}) == '{\"a\":[1],\"b\":[1]}')");
}

static void test_encode_errors(void)
{
  LUA("local t = {a = {b = {}}}\n"
      "t.a.b.c = t\n"
      "err(function() json.encode(t) end,"
      "  'json: cannot encode a table that contains itself at $.a.b.c')\n"
      "err(function() json.encode({l = {1, {s = '\\xff'}}}) end,"
      "  'invalid UTF-8 in a string at $.l[2].s')\n"
      "err(function() json.encode({['\\xc3\\x28'] = 1}) end, 'invalid UTF-8')\n"
      "err(function() json.encode({a = {[true] = 1}}) end,"
      "  'cannot encode a boolean key at $.a')\n"
      "err(function() json.encode({f = print}) end,"
      "  'cannot encode a function at $.f')\n"
      "err(function() json.encode({n = 0/0}) end, 'NaN or infinity at $.n')\n"
      "err(function() json.encode({n = math.huge}) end, 'NaN or infinity')\n"
      "err(function() json.encode(1, {indent = 99}) end, 'indent')\n"
      "local deep = {}\n"
      "local c = deep\n"
      "for i = 1, 300 do c[1] = {}; c = c[1] end\n"
      "err(function() json.encode(deep) end, 'nested too deep')");
}

static void test_decode_errors(void)
{
  LUA("err(function() json.decode('{\"a\": 1,\\n \"b\": }') end,"
      "  'json: line 2 column')\n"
      "err(function() json.decode('') end, 'json: line 1')\n"
      "err(function() json.decode('[1] x') end, 'end of file expected')\n"
      "err(function() json.decode('\"\\xff\"') end, 'UTF-8')\n"
      "err(function() json.decode('123456789012345678901234') end,"
      "  'too big integer')\n"
      "local ok = string.rep('[', 256) .. string.rep(']', 256)\n"
      "assert(json.decode(ok))\n"
      "local bad = string.rep('[', 257) .. string.rep(']', 257)\n"
      "err(function() json.decode(bad) end, 'nested deeper than 256')\n"
      "local huge = string.rep('[', 100000)\n"
      "err(function() json.decode(huge) end, 'json: line 1')");
}

/* Past the first 16 levels the codec's frames grow, and a decoded
 * container leaves the parsed tree as soon as it is converted: values
 * deep down and beside the nesting come through whole, both ways. */
static void test_deep_values(void)
{
  LUA("local doc = {}\n"
      "local c = doc\n"
      "for i = 1, 100 do\n"
      "  c.n, c.s, c.l = i, 'v' .. i, json.array({i, {k = i}, json.array()})\n"
      "  c.sub = {}; c = c.sub\n"
      "end\n"
      "local back = json.decode(json.encode(doc))\n"
      "c = back\n"
      "for i = 1, 100 do\n"
      "  assert(c.n == i and c.s == 'v' .. i, i)\n"
      "  assert(c.l[1] == i and c.l[2].k == i and #c.l == 3, i)\n"
      "  assert(json.encode(c.l[3]) == '[]', i)\n"
      "  c = c.sub\n"
      "end\n"
      "assert(next(c) == nil)\n"
      "assert(json.encode(back) == json.encode(doc))\n"
      "local t = {}\n"
      "c = t\n"
      "for i = 1, 40 do c.a = {}; c = c.a end\n"
      "c.a = t\n"
      "err(function() json.encode(t) end, 'contains itself')");
}

static void test_yaml_agrees(void)
{
  LUA("local doc = yaml.decode('a: [1, 2.5, yes, ~, \"x\"]\\nb: {}\\nc: []\\n')\n"
      "local j = json.encode(doc)\n"
      "assert(j == '{\"a\":[1,2.5,true,null,\"x\"],\"b\":{},\"c\":[]}', j)\n"
      "assert(yaml.encode(json.decode(j)) == yaml.encode(doc))");
}

static void test_c_api(void)
{
  char err[256];
  int top = lua_gettop(L);
  CHECK(uh_json_decode_push(L, "{\"a\":[]}", 8, err, sizeof err) == UH_OK);
  CHECK(lua_gettop(L) == top + 1);
  CHECK(uh_json_encode_push(L, -1, err, sizeof err) == UH_OK);
  CHECK_STR(lua_tostring(L, -1), "{\"a\":[]}");
  lua_pop(L, 2);
  CHECK(uh_json_decode_push(L, "[1,", 3, err, sizeof err) == UH_EPARSE);
  CHECK(strstr(err, "json: line 1") != NULL);
  lua_pushfstring(L, "\xff");
  CHECK(uh_json_encode_push(L, -1, err, sizeof err) == UH_EINVAL);
  CHECK(strstr(err, "invalid UTF-8 in a string at $") != NULL);
  lua_pop(L, 1);
  CHECK(lua_gettop(L) == top);
}

int main(void)
{
  L = luaL_newstate();
  luaL_openlibs(L);
  luaL_loadstring(L, helpers);
  luaL_requiref(L, "uphook.c.json", luaopen_uphook_json, 0);
  luaL_requiref(L, "uphook.c.yaml", luaopen_uphook_yaml, 0);
  if (lua_pcall(L, 2, 0, 0)) {
    fprintf(stderr, "helpers: %s\n", lua_tostring(L, -1));
    return 1;
  }
  RUN(test_decode_values);
  RUN(test_encode_values);
  RUN(test_encode_errors);
  RUN(test_decode_errors);
  RUN(test_deep_values);
  RUN(test_yaml_agrees);
  RUN(test_c_api);
  lua_close(L);
  return UNIT_END();
}

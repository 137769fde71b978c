/* lua/core/semver.lua (stdlib semver) in a Lua state: the input is "version\nversion\n
 * range".  Checked: compare is antisymmetric and reflexive, format(parse
 * (v)) parses back to an equal version, and a valid range matches a
 * version exactly as its normalized form does.  Lua line coverage guides
 * libFuzzer, and a count hook bounds the work of one input (a
 * pathological pattern shows as a failure). */
#include "fuzz.h"

static const char check_src[] =
  "local semver, a, b, r = ...\n"
  "local pa, pb = semver.parse(a), semver.parse(b)\n"
  "if pa then\n"
  "  assert(semver.compare(a, a) == 0, 'compare(a, a) ~= 0')\n"
  "  local f = semver.format(pa)\n"
  "  local back = assert(semver.parse(f), 'format does not parse back: ' .. f)\n"
  "  assert(semver.compare(back, pa) == 0, 'format changed the version: ' .. f)\n"
  "end\n"
  "if pa and pb then\n"
  "  local x, y = semver.compare(a, b), semver.compare(b, a)\n"
  "  assert(x == -y, 'compare is not antisymmetric')\n"
  "  assert(semver.lt(a, b) == (x < 0) and semver.eq(a, b) == (x == 0), 'lt/eq')\n"
  "end\n"
  "if semver.valid_range(r) then\n"
  "  local nr = assert(semver.normalize_range(r))\n"
  "  local ok, err = semver.valid_range(nr)\n"
  "  -- desugaring may grow a range past the 256-byte bound, as in npm\n"
  "  assert(ok or err:find('longer than', 1, true),\n"
  "         'normalized range is invalid: ' .. nr)\n"
  "  if pa and ok then\n"
  "    assert(semver.satisfies(a, r) == semver.satisfies(a, nr),\n"
  "           'satisfies differs for the normalized range ' .. nr)\n"
  "  end\n"
  "else\n"
  "  assert(not pcall(semver.satisfies, '1.0.0', r), 'invalid range accepted')\n"
  "end\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  static int semver_ref, check_ref;
  lua_State *L = fuzz_state();
  const char *s = (const char *)data, *end = s + size, *p[3];
  size_t len[3];
  int i;
  if (!semver_ref) {
    fuzz_require_embedded(L, "uphook.core.semver");
    semver_ref = luaL_ref(L, LUA_REGISTRYINDEX);
    if (luaL_loadbufferx(L, check_src, sizeof check_src - 1, "=check", "t"))
      fuzz_fail("check chunk: %s", lua_tostring(L, -1));
    check_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  }
  for (i = 0; i < 3; i++) {
    const char *nl = memchr(s, '\n', (size_t)(end - s));
    p[i] = s;
    len[i] = (size_t)((nl ? nl : end) - s);
    s = nl ? nl + 1 : end;
  }
  lua_rawgeti(L, LUA_REGISTRYINDEX, check_ref);
  lua_rawgeti(L, LUA_REGISTRYINDEX, semver_ref);
  for (i = 0; i < 3; i++)
    lua_pushlstring(L, p[i], len[i]);
  fuzz_lua_begin(L);
  i = lua_pcall(L, 4, 0, 0);
  fuzz_lua_end(L);
  if (i != LUA_OK) {
    const char *m = lua_tostring(L, -1);
    if (fuzz_lua_budget_hit)
      fuzz_fail("over 50M instructions for one input");
    if (!m || !strstr(m, "not enough memory"))
      fuzz_fail("%s", m ? m : "(error object)");
  }
  fuzz_done(L);
  return 0;
}

/* uphook.c.journal: round trips, torn tails at every byte, corruption,
 * wrong magic and version, reopen after a crash. */
#include "journal.h"
#include "luax.h"
#include "unit.h"

#include <stdlib.h>
#include <unistd.h>
#include <lualib.h>
#include <lauxlib.h>

static char base[64];

static lua_State *newstate(void)
{
  lua_State *L = luaL_newstate();
  luaL_openlibs(L);
  luaL_requiref(L, "uphook.c.journal", luaopen_uphook_journal, 0);
  lua_pop(L, 1);
  lua_newtable(L);
  uh_setnullarray(L);
  lua_setglobal(L, "uh");
  lua_pushstring(L, base);
  lua_setglobal(L, "T");
  return L;
}

static const char *PRELUDE =
  "J = require 'uphook.c.journal'\n"
  "function put(p, s) local f = assert(io.open(p, 'wb')); f:write(s); f:close() end\n"
  "function get(p) local f = io.open(p, 'rb'); if not f then return nil end\n"
  "  local s = f:read('a'); f:close(); return s end\n"
  "function eq(a, b)\n"
  "  if type(a) ~= type(b) then return false end\n"
  "  if type(a) ~= 'table' then return a == b end\n"
  "  if uh.isarray(a) ~= uh.isarray(b) then return false end\n"
  "  for k, v in pairs(a) do if not eq(v, b[k]) then return false end end\n"
  "  for k in pairs(b) do if a[k] == nil then return false end end\n"
  "  return true end\n"
  "RECS = {\n"
  "  {op = 'write', path = 'args:kubelet', before = 'a\\0b\\0\\255', n = 1},\n"
  "  {op = 'apply', obj = {kind = 'Deployment', metadata = {name = 'x',\n"
  "    labels = {}}, spec = {args = uh.array{}, v = uh.null, f = 2.5}}},\n"
  "  {op = 'delete', list = uh.array{1, uh.null, 'three', {four = true}}},\n"
  "}\n";

static void t_roundtrip(void)
{
  lua_State *L = newstate();
  CHECK(LUA_RUN(L, PRELUDE));
  CHECK(LUA_RUN(L,
    "local p = T .. '/rt.journal'; os.remove(p)\n"
    "assert(J.replay(p) == nil)\n"                 /* absent */
    "local h = assert(J.open(p))\n"
    "assert(#get(p) == 16 and get(p):sub(1, 8) == 'UPHOOKJ1')\n"
    "local l, torn = J.replay(p); assert(#l == 0 and torn == false)\n"
    "for _, r in ipairs(RECS) do assert(h:append(r) == true) end\n"
    "local l2, torn2 = J.replay(p)\n"
    "assert(#l2 == 3 and torn2 == false and uh.isarray(l2))\n"
    "for i = 1, 3 do assert(eq(l2[i], RECS[i]), 'record ' .. i) end\n"
    "assert(not pcall(h.append, h, 'x'))\n"              /* not a table */
    "assert(not pcall(h.append, h, {f = print}))\n"      /* cannot encode */
    "local c = {}; c.c = c; assert(not pcall(h.append, h, c))\n"
    "assert(#J.replay(p) == 3)\n"                   /* misuse wrote nothing */
    /* a second writer is refused while the first holds the journal */
    "local h2, e = J.open(p); assert(h2 == nil and e:find(p, 1, true), e)\n"
    "h:close(); assert(not pcall(h.append, h, {}))\n"
    "h = assert(J.open(p)); h:append({n = 4}); h:close()\n"
    "assert(#J.replay(p) == 4)\n"
    "do local h3 <close> = assert(J.open(p)) end\n"     /* __close */
    "assert(J.open(p)):close()\n"
    "assert(J.remove(p) == true and J.remove(p) == false and get(p) == nil)\n"
    "assert(not pcall(J.open, 'relative'))\n"
    "local v, e2 = J.open(T .. '/no/dir/x'); assert(v == nil and e2:find('no/dir'))\n"));
  lua_close(L);
}

/* Several records in one append (changes sent at once): all replayed in
 * order; one that is no table or cannot be encoded writes none of them. */
static void t_append_many(void)
{
  lua_State *L = newstate();
  CHECK(LUA_RUN(L, PRELUDE));
  CHECK(LUA_RUN(L,
    "local p = T .. '/many.journal'; os.remove(p)\n"
    "local h = assert(J.open(p))\n"
    "assert(h:append(RECS[1], RECS[2], RECS[3]) == true)\n"
    "local l, torn = J.replay(p); assert(#l == 3 and torn == false)\n"
    "for i = 1, 3 do assert(eq(l[i], RECS[i]), 'record ' .. i) end\n"
    "local size = #get(p)\n"
    "assert(not pcall(h.append, h, {n = 1}, 'x'))\n"
    "local c = {}; c.c = c; assert(not pcall(h.append, h, {n = 1}, c))\n"
    "assert(#get(p) == size and #J.replay(p) == 3)\n"
    "h:append({n = 4}); assert(#J.replay(p) == 4)\n"
    "h:close(); assert(J.remove(p))\n"));
  lua_close(L);
}

/* Cut the file at every byte of the last record: two records, torn,
 * except at the exact boundary.  Then reopen cuts the tail and appends. */
static void t_truncation(void)
{
  lua_State *L = newstate();
  CHECK(LUA_RUN(L, PRELUDE));
  CHECK(LUA_RUN(L,
    "local p = T .. '/tr.journal'; os.remove(p)\n"
    "local h = assert(J.open(p)); h:append(RECS[1]); h:append(RECS[2])\n"
    "local two = #get(p); h:append(RECS[3]); h:close()\n"
    "local full = get(p); local q = T .. '/cut.journal'\n"
    "for cut = two, #full - 1 do\n"
    "  put(q, full:sub(1, cut))\n"
    "  local l, torn = assert(J.replay(q))\n"
    "  assert(#l == 2 and eq(l[2], RECS[2]), 'cut ' .. cut)\n"
    "  assert(torn == (cut > two), 'torn flag at ' .. cut)\n"
    "  local h2 = assert(J.open(q)); assert(#get(q) == two, 'open cuts at ' .. cut)\n"
    "  h2:append(RECS[3]); h2:close()\n"
    "  local l3, t3 = J.replay(q); assert(#l3 == 3 and not t3 and eq(l3[3], RECS[3]))\n"
    "end\n"
    "for cut = 0, 15 do\n"     /* a torn header: no records */
    "  put(q, full:sub(1, cut))\n"
    "  local l, torn = assert(J.replay(q)); assert(#l == 0 and torn == (cut > 0))\n"
    "  local h2 = assert(J.open(q)); h2:append(RECS[1]); h2:close()\n"
    "  assert(#J.replay(q) == 1)\n"
    "end\n"
    /* zeros after a crash extended the file: still a torn tail */
    "put(q, full .. string.rep('\\0', 100))\n"
    "local l, torn = J.replay(q); assert(#l == 3 and torn)\n"
    "put(q, full:sub(1, two) .. string.rep('\\0', 3000))\n"
    "l, torn = J.replay(q); assert(#l == 2 and torn)\n"
    "os.remove(p); os.remove(q)\n"));
  lua_close(L);
}

static void t_corruption(void)
{
  lua_State *L = newstate();
  CHECK(LUA_RUN(L, PRELUDE));
  CHECK(LUA_RUN(L,
    "local p = T .. '/co.journal'; os.remove(p)\n"
    "local h = assert(J.open(p)); h:append(RECS[1]); local one = #get(p)\n"
    "h:append(RECS[2]); local two = #get(p); h:append(RECS[3]); h:close()\n"
    "local full = get(p); local q = T .. '/bad.journal'\n"
    "local function flip(s, i) return s:sub(1, i - 1) ..\n"
    "  string.char(s:byte(i) ~ 0x20) .. s:sub(i + 1) end\n"
    /* a bad checksum in the last record: ignored as torn */
    "put(q, flip(full, #full - 1))\n"
    "local l, torn = J.replay(q); assert(#l == 2 and torn)\n"
    "put(q, flip(full, two + 6))\n"       /* the check bytes themselves */
    "l, torn = J.replay(q); assert(#l == 2 and torn)\n"
    /* in the middle: corruption, refused by replay and by open */
    "put(q, flip(full, one + 12))\n"
    "local v, e = J.replay(q); assert(v == nil and e:find('corrupt') and e:find(q, 1, true), e)\n"
    "v, e = J.open(q); assert(v == nil and e:find('corrupt'), e)\n"
    "put(q, flip(full, one + 2))\n"       /* a length field */
    "v, e = J.replay(q); assert(v == nil and e:find('corrupt'), e)\n"
    /* wrong magic, wrong version, something else entirely */
    "for _, s in ipairs{'XPHOOKJ1' .. full:sub(9), 'UPHOOKJ2' .. full:sub(9),\n"
    "                   'hello world, not a journal', 'UPHO-'} do\n"
    "  put(q, s); local v2, e2 = J.replay(q)\n"
    "  assert(v2 == nil and e2:find('magic') and e2:find(q, 1, true), e2)\n"
    "  v2, e2 = J.open(q); assert(v2 == nil and e2:find('magic'), e2)\n"
    "  assert(get(q) == s)\n"          /* open never rewrites a stranger */
    "end\n"
    "put(q, full:sub(1, 8) .. '\\0\\0\\0\\9' .. full:sub(13))\n"
    "v, e = J.replay(q); assert(v == nil and e:find('version 9'), e)\n"
    /* an older version is still read (every later uphook recovers it),
     * and never appended to */
    "put(q, full:sub(1, 8) .. '\\0\\0\\0\\1' .. full:sub(13))\n"
    "local l1, t1, ver = J.replay(q)\n"
    "assert(l1 and #l1 == 3 and not t1 and ver == 1, tostring(ver))\n"
    "v, e = J.open(q); assert(v == nil and e:find('version'), e)\n"
    "assert(select(3, J.replay(p)) == 2)\n"
    "v, e = J.open(q); assert(v == nil and e:find('version'), e)\n"
    "os.remove(p); os.remove(q)\n"));
  lua_close(L);
}

/* The C scanner on its own: garbage never reads out of bounds. */
static void t_scanner_fuzz(void)
{
  unsigned char buf[512];
  const unsigned char *pl;
  size_t n;
  uh_jscan s;
  int i, r, j;
  srand(7);
  uh_journal_make_header(buf);
  for (i = 0; i < 20000; i++) {
    s.len = UH_JOURNAL_HDRLEN + (size_t)rand() % (sizeof buf - UH_JOURNAL_HDRLEN);
    for (j = UH_JOURNAL_HDRLEN; j < (int)s.len; j++)
      buf[j] = (unsigned char)(rand() % 4 ? 0 : rand());
    s.buf = buf;
    s.off = UH_JOURNAL_HDRLEN;
    while ((r = uh_journal_next(&s, &pl, &n)) == UH_JREC)
      CHECK(pl + n <= buf + s.len);
    CHECK(s.off <= s.len);
  }
}

int main(void)
{
  int rc;
  memcpy(base, "/tmp/uh_test_jXXXXXX", 21);
  if (!mkdtemp(base))
    return 2;
  RUN(t_roundtrip);
  RUN(t_append_many);
  RUN(t_truncation);
  RUN(t_corruption);
  RUN(t_scanner_fuzz);
  rc = UNIT_END();
  rmdir(base);
  return rc;
}

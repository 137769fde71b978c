/* The hook child (docs/contract.md §8): a fresh Lua state whose
 * environment is built from the allow list below, confined before any
 * hook byte is parsed.
 * Everything that touches the world is a stub that asks the broker. */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <lua.h>
#include <lauxlib.h>
#include <lualib.h>
#include "embedded.h"
#include "hash.h"
#include <jansson.h>
#include "json.h"
#include "luax.h"
#include "rpc.h"
#include "child.h"
#include "testchild.h"
#include "osutil.h"
#include "yaml.h"

/* ---- The allow list: the whole surface a hook sees, as data. ---- */

static const char *const base_kept[] = {
  "assert", "error", "getmetatable", "ipairs", "next", "pairs", "pcall",
  "rawequal", "rawget", "rawlen", "rawset", "select", "tonumber",
  "tostring", "type", "xpcall", NULL
};
static const char *const string_kept[] = {
  "byte", "char", "find", "format", "gmatch", "gsub", "len", "lower",
  "match", "pack", "packsize", "rep", "reverse", "sub", "unpack", "upper",
  NULL
};
static const char *const table_kept[] = {
  "concat", "insert", "move", "pack", "remove", "sort", "unpack", NULL
};
static const char *const utf8_kept[] = {
  "char", "charpattern", "codepoint", "codes", "len", "offset", NULL
};
/* Coroutines are plain computation.  Debian's 5.4.4 segfaults on long
 * chains of nested coroutine.close; that crash stays in the confined
 * child, which the broker reports and rolls back (tests/hostile). */
static const char *const coroutine_kept[] = {
  "close", "create", "isyieldable", "resume", "running", "status", "wrap",
  "yield", NULL
};
static const char *const math_kept[] = {
  "abs", "ceil", "cos", "deg", "exp", "floor", "fmod", "huge", "log",
  "max", "maxinteger", "min", "mininteger", "modf", "pi", "rad", "random",
  "randomseed", "sin", "sqrt", "tan", "tointeger", "type", "ult", NULL
};

static const struct {
  const char *name;
  lua_CFunction open;
  const char *const *kept;
} libs_kept[] = {
  { "string", luaopen_string, string_kept },
  { "table", luaopen_table, table_kept },
  { "math", luaopen_math, math_kept },
  { "utf8", luaopen_utf8, utf8_kept },
  { "coroutine", luaopen_coroutine, coroutine_kept },
};

#define UH_PRIM(name, mutating) name,
#define UH_INTERNAL(name)
const char *const uh_child_rpc_prims[] = {
#include "prims.def"
  NULL
};
#undef UH_PRIM
#undef UH_INTERNAL

/* ---- Limits: memory and time. ---- */

struct alloc_ud { size_t used, limit; };

static void *counting_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
  struct alloc_ud *a = ud;
  void *p;
  if (!ptr)
    osize = 0;
  if (nsize == 0) {
    uh_big_realloc(ptr, osize, 0);
    a->used -= osize;
    return NULL;
  }
  if (nsize > osize && a->used + (nsize - osize) > a->limit)
    return NULL;
  p = uh_big_realloc(ptr, osize, nsize);   /* a big string: host/osutil.h */
  if (p)
    a->used = a->used - osize + nsize;
  if (p && a->used >= UH_BIG_HEAP)
    uh_big_heap();
  return p;
}

static const struct uh_child_conf *g_conf;
static int g_rfd, g_wfd;
static double g_deadline;   /* conf's, or a run's own (a test case's) */

/* Past the deadline the hook turns sticky: every instruction raises, so
 * no pcall in the hook can swallow the timeout. */
static void deadline_hook(lua_State *L, lua_Debug *ar)
{
  (void)ar;
  if (uh_monotonic() < g_deadline)
    return;
  lua_sethook(L, deadline_hook, LUA_MASKCOUNT, 1);
  if (g_conf->test)
    luaL_error(L, "timeout: the test case ran past %d s", (int)g_conf->timeout);
  luaL_error(L, "timeout: the hook ran past --timeout (%d s)",
             (int)g_conf->timeout);
}

/* ---- Replacements for functions that are unsafe as they are. ---- */

/* A reader function's pieces, concatenated under the hook's own limits. */
static void read_chunks(lua_State *L)
{
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  for (;;) {
    size_t n;
    const char *p;
    lua_pushvalue(L, 1);
    lua_call(L, 0, 1);
    if (lua_isnil(L, -1)) {
      lua_pop(L, 1);
      break;
    }
    if (!lua_isstring(L, -1))
      luaL_error(L, "reader function must return a string");
    p = lua_tolstring(L, -1, &n);
    if (n == 0) {
      lua_pop(L, 1);
      break;
    }
    luaL_addvalue(&b);
    (void)p;
  }
  luaL_pushresult(&b);
  lua_replace(L, 1);
}

static int sb_load(lua_State *L)
{
  size_t len;
  const char *s;
  if (lua_isfunction(L, 1))
    read_chunks(L);
  s = luaL_checklstring(L, 1, &len);
  const char *name = luaL_optstring(L, 2, "=(load)");
  int has_env = !lua_isnone(L, 4);
  /* Mode is always text: binary chunks are refused whatever is asked. */
  if (luaL_loadbufferx(L, s, len, name, "t") != LUA_OK) {
    luaL_pushfail(L);
    lua_insert(L, -2);
    return 2;
  }
  if (has_env) {
    lua_pushvalue(L, 4);
    if (!lua_setupvalue(L, -2, 1))
      lua_pop(L, 1);
  }
  return 1;
}

static int sb_setmetatable(lua_State *L)
{
  luaL_checktype(L, 1, LUA_TTABLE);
  if (lua_istable(L, 2) && lua_getfield(L, 2, "__gc") != LUA_TNIL)
    return luaL_argerror(L, 2, "__gc metamethods are not allowed in hooks");
  lua_settop(L, 2);
  lua_pushvalue(L, lua_upvalueindex(1));  /* the real setmetatable */
  lua_insert(L, 1);
  lua_call(L, 2, 1);
  return 1;
}

static int sb_collectgarbage(lua_State *L)
{
  const char *opt = luaL_optstring(L, 1, "count");
  luaL_argcheck(L, strcmp(opt, "count") == 0, 1,
                "only collectgarbage(\"count\") is allowed in hooks");
  lua_pushnumber(L, (lua_Number)lua_gc(L, LUA_GCCOUNT, 0)
                 + lua_gc(L, LUA_GCCOUNTB, 0) / 1024.0);
  return 1;
}

/* string.rep of empty strings loops n times in C; answer at once. */
static int sb_string_rep(lua_State *L)
{
  size_t l, lsep = 0;
  luaL_checklstring(L, 1, &l);
  luaL_checkinteger(L, 2);
  luaL_optlstring(L, 3, "", &lsep);
  if (l == 0 && lsep == 0) {
    lua_pushliteral(L, "");
    return 1;
  }
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, 1);
  return 1;
}

static int strict_index(lua_State *L)
{
  return luaL_error(L, "undeclared global '%s'", luaL_optstring(L, 2, "?"));
}

static int strict_newindex(lua_State *L)
{
  return luaL_error(L, "assignment to undeclared global '%s'",
                    luaL_optstring(L, 2, "?"));
}

/* ---- The RPC stubs. ---- */

/* The metatable of the error values primitives raise: tostring(err) is
 * err.message; the fields are plain data the hook may read. */
#define ERROR_MT "uphook.error"

static int error_tostring(lua_State *L)
{
  if (lua_istable(L, 1) && lua_getfield(L, 1, "message") == LUA_TSTRING)
    return 1;
  lua_pushliteral(L, "error");
  return 1;
}

static void new_error_mt(lua_State *L)
{
  luaL_newmetatable(L, ERROR_MT);
  lua_pushcfunction(L, error_tostring);
  lua_setfield(L, -2, "__tostring");
  lua_pop(L, 1);
}

/* Send {"call", name, {args...}} and wait for {"ret", ok, value}.  Top-
 * level nils travel as null and come back as nil. */
static int stub_call(lua_State *L)
{
  char err[256];
  int i, n = lua_gettop(L), ok;
  lua_createtable(L, 3, 0);
  lua_pushliteral(L, "call");
  lua_rawseti(L, -2, 1);
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_rawseti(L, -2, 2);
  lua_createtable(L, n, 0);
  for (i = 1; i <= n; i++) {
    if (lua_isnil(L, i))
      uh_pushnull(L);
    else
      lua_pushvalue(L, i);
    lua_rawseti(L, -2, i);
  }
  uh_markarray(L, -1);
  lua_rawseti(L, -2, 3);
  if (uh_rpc_send(g_wfd, L, -1, err, sizeof err) != UH_RPC_OK)
    return luaL_error(L, "%s: %s", lua_tostring(L, lua_upvalueindex(1)), err);
  lua_pop(L, 1);
  if (uh_rpc_recv(g_rfd, L, -1, NULL, err, sizeof err) != UH_RPC_OK)
    _exit(3);  /* the broker is gone or mad: nothing left to do */
  if (!lua_istable(L, -1) || lua_rawgeti(L, -1, 2) != LUA_TBOOLEAN)
    _exit(3);
  ok = lua_toboolean(L, -1);
  lua_rawgeti(L, -2, 3);
  if (!ok && lua_istable(L, -1)) {
    /* an error value {code, reason, message, ...} (lua/core/hookerror.lua) */
    luaL_setmetatable(L, ERROR_MT);
    return lua_error(L);
  }
  if (!ok) {
    luaL_where(L, 1);
    lua_insert(L, -2);
    lua_concat(L, 2);
    return lua_error(L);
  }
  /* value is a list of results */
  if (!lua_istable(L, -1))
    return 0;
  n = (int)lua_rawlen(L, -1);
  luaL_checkstack(L, n, "too many results");
  for (i = 1; i <= n; i++) {
    lua_rawgeti(L, -1 - (i - 1), i);
    if (uh_isnull(L, -1)) {
      lua_pop(L, 1);
      lua_pushnil(L);
    }
  }
  return n;
}

/* log.info(fmt, ...) formats here, in the hook, then asks the broker. */
static int stub_log(lua_State *L)
{
  int n = lua_gettop(L);
  lua_pushvalue(L, lua_upvalueindex(2));  /* string.format */
  lua_insert(L, 1);
  lua_call(L, n, 1);
  lua_pushvalue(L, lua_upvalueindex(1));  /* the rpc stub */
  lua_insert(L, 1);
  lua_call(L, 1, 0);
  return 0;
}

static void getsub(lua_State *L, int env, const char *family)
{
  if (lua_getfield(L, env, family) != LUA_TTABLE) {
    lua_pop(L, 1);
    lua_newtable(L);
    lua_pushvalue(L, -1);
    lua_setfield(L, env, family);
  }
}

static void add_stubs(lua_State *L, int env, int format_idx)
{
  const char *const *p;
  for (p = uh_child_rpc_prims; *p; p++) {
    const char *dot = strchr(*p, '.');
    lua_pushlstring(L, *p, (size_t)(dot - *p));
    getsub(L, env, lua_tostring(L, -1));
    lua_pushstring(L, *p);
    lua_pushcclosure(L, stub_call, 1);
    if (strncmp(*p, "log.", 4) == 0) {
      lua_pushvalue(L, format_idx);
      lua_pushcclosure(L, stub_log, 2);
    }
    lua_setfield(L, -2, dot + 1);
    lua_pop(L, 2);
  }
}

/* ---- require: the embedded stdlib, or a .lua file of the addon. ---- */

/* Engine modules the stdlib builds on: pure Lua that requires nothing
 * (stdlib/semver.lua hands on uphook.core.semver, stdlib/ip.lua uphook.core.ip,
 * stdlib/manifest.lua places values by uphook.core.yamlpos, as lint reads
 * them).  No other uphook.* module loads in the child. */
static const char *const engine_shared[] = { "uphook.core.semver", "uphook.core.ip",
                                             "uphook.core.yamlpos", NULL };

static const struct uh_embedded *child_module(const char *name)
{
  const char *const *p;
  if (strncmp(name, "uphook.", 7))
    return uh_embedded_find(name);
  if (g_conf->test && uh_testchild_module(name))
    return uh_testchild_module(name);
  for (p = engine_shared; *p; p++)
    if (strcmp(name, *p) == 0)
      return uh_embedded_find(name);
  return NULL;
}

static int sb_require(lua_State *L)
{
  const char *name = luaL_checkstring(L, 1);
  const struct uh_embedded *e;
  int mods;
  lua_settop(L, 1);
  lua_getfield(L, LUA_REGISTRYINDEX, "uphook.modules");
  mods = lua_gettop(L);                         /* [name, modules] */
  if (lua_getfield(L, mods, name) != LUA_TNIL)
    return 1;                                   /* cached */
  lua_pop(L, 1);
  e = child_module(name);
  if (e) {
    if (uh_embedded_load(L, e) != LUA_OK)
      return lua_error(L);
  } else {
    /* __uphook.require(name) -> source, chunkname (read by the broker) */
    lua_getfield(L, LUA_REGISTRYINDEX, "uphook.fetchmod");
    lua_pushstring(L, name);
    lua_call(L, 1, 2);                          /* [.., src, chunkname] */
    if (lua_isnil(L, -2))
      return luaL_error(L, "module '%s' not found: not in the uphook "
                        "standard library nor in the addon folder", name);
    if (luaL_loadbufferx(L, lua_tostring(L, -2), lua_rawlen(L, -2),
                         lua_tostring(L, -1), "t") != LUA_OK)
      return lua_error(L);
  }
  lua_pushstring(L, name);
  lua_call(L, 1 + (g_conf->test ? uh_testchild_args(L, name) : 0), 1);
  if (lua_isnil(L, -1)) {                       /* [.., module] */
    lua_pop(L, 1);
    lua_pushboolean(L, 1);
  }
  lua_pushvalue(L, -1);
  lua_setfield(L, mods, name);
  return 1;
}

/* ---- Building the environment from the allow list. ---- */

static void copy_kept(lua_State *L, int from, int to, const char *const *k)
{
  for (; *k; k++) {
    lua_getfield(L, from, *k);
    lua_setfield(L, to, *k);
  }
}

/* Each kept library as a fresh table of its kept functions.  [] -> [] */
static void open_kept_libs(lua_State *L, int env, int G)
{
  size_t i;
  for (i = 0; i < sizeof libs_kept / sizeof libs_kept[0]; i++) {
    luaL_requiref(L, libs_kept[i].name, libs_kept[i].open, 0);
    lua_newtable(L);                        /* [lib, clean] */
    copy_kept(L, -2, lua_gettop(L), libs_kept[i].kept);
    if (strcmp(libs_kept[i].name, "string") == 0) {
      lua_getfield(L, -2, "rep");
      lua_pushcclosure(L, sb_string_rep, 1);
      lua_setfield(L, -2, "rep");
      /* strings index the clean table; getmetatable("") hides the rest */
      lua_pushliteral(L, "");
      lua_getmetatable(L, -1);              /* [lib, clean, "", mt] */
      lua_pushvalue(L, -3);
      lua_setfield(L, -2, "__index");       /* mt.__index = clean */
      lua_pushliteral(L, "string");
      lua_setfield(L, -2, "__metatable");
      lua_pop(L, 2);                        /* [lib, clean] */
    }
    lua_setfield(L, env, libs_kept[i].name);  /* [lib] */
    lua_pop(L, 1);                          /* [] */
  }
  (void)G;
}

static void open_pure_libs(lua_State *L, int env)
{
  luaL_requiref(L, "yaml", luaopen_uphook_yaml, 0);
  lua_setfield(L, env, "yaml");
  luaL_requiref(L, "json", luaopen_uphook_json, 0);
  lua_setfield(L, env, "json");
  luaL_requiref(L, "uphook.hash", luaopen_uphook_hash, 0);
  lua_newtable(L);
  lua_getfield(L, -2, "sha256");
  lua_setfield(L, -2, "sha256");
  lua_setfield(L, env, "hash");
  lua_pop(L, 1);
}

/* The hook's globals, built fresh from the allow lists above (never by
 * filtering the real ones).  [] -> [] */
static void build_env(lua_State *L)
{
  int G, env;
  luaL_requiref(L, "_G", luaopen_base, 1);
  G = lua_gettop(L);                        /* [G] */
  lua_newtable(L);
  env = lua_gettop(L);                      /* [G, env] */
  copy_kept(L, G, env, base_kept);
  lua_pushliteral(L, LUA_VERSION);
  lua_setfield(L, env, "_VERSION");
  lua_pushcfunction(L, sb_load);
  lua_setfield(L, env, "load");
  lua_getfield(L, G, "setmetatable");
  lua_pushcclosure(L, sb_setmetatable, 1);
  lua_setfield(L, env, "setmetatable");
  lua_pushcfunction(L, sb_collectgarbage);
  lua_setfield(L, env, "collectgarbage");
  lua_pushcfunction(L, sb_require);
  lua_setfield(L, env, "require");
  lua_pushvalue(L, env);
  lua_setfield(L, env, "_G");
  open_kept_libs(L, env, G);
  open_pure_libs(L, env);
  lua_getfield(L, env, "string");
  lua_getfield(L, -1, "format");            /* [G, env, string, format] */
  if (g_conf->test)         /* a test file asks for environments only */
    uh_testchild_requests(L, stub_call);
  else
    add_stubs(L, env, lua_gettop(L));
  lua_pop(L, 2);                            /* [G, env] */
  /* the broker-side module reader, kept out of the hook's reach */
  lua_pushliteral(L, "__uphook.require");
  lua_pushcclosure(L, stub_call, 1);
  lua_setfield(L, LUA_REGISTRYINDEX, "uphook.fetchmod");
  lua_newtable(L);
  lua_setfield(L, LUA_REGISTRYINDEX, "uphook.modules");
  new_error_mt(L);
  /* strict globals */
  lua_createtable(L, 0, 2);                 /* [G, env, mt] */
  lua_pushcfunction(L, strict_index);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, strict_newindex);
  lua_setfield(L, -2, "__newindex");
  lua_setmetatable(L, env);                 /* [G, env] */
  /* the hook's environment becomes the state's only globals table */
  lua_pushvalue(L, env);
  lua_rawseti(L, LUA_REGISTRYINDEX, LUA_RIDX_GLOBALS);
  lua_settop(L, 0);                         /* [] */
}

/* ---- Running the hook. ---- */

static struct alloc_ud g_alloc;

/* Keep the message as it is; put the traceback aside for the report. */
static int msgh(lua_State *L)
{
  if (!lua_isstring(L, 1)) {
    /* an error value (or a table with a string `message`) reads as its
     * message; no metamethod of the hook runs here (tests/hostile:
     * cpu_error_object.lua) */
    if (lua_istable(L, 1) && lua_pushliteral(L, "message")
        && lua_rawget(L, 1) == LUA_TSTRING)
      ;
    else
      lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
    lua_replace(L, 1);
    lua_settop(L, 1);
  }
  luaL_traceback(L, L, NULL, 1);
  lua_setfield(L, LUA_REGISTRYINDEX, "uphook.trace");
  lua_settop(L, 1);
  return 1;
}

static int noop(lua_State *L)
{
  (void)L;
  return 0;
}

/* Call the function with the nargs arguments above it and replace them
 * all by the reply {tag, ok, value, trace}, where value is the list of
 * results or the error message: [fn, a1..an] -> [reply]. */
static void run_protected(lua_State *L, int nargs, const char *tag)
{
  int base = lua_gettop(L) - nargs - 1, status, i, n;
  lua_pushcfunction(L, msgh);
  lua_insert(L, base + 1);                  /* [msgh, fn, a1..an] */
  status = lua_pcall(L, nargs, LUA_MULTRET, base + 1);
  lua_remove(L, base + 1);                  /* [r1..rn] or [err] */
  if (status == LUA_ERRMEM)
    g_alloc.limit += 8u << 20;  /* headroom to report it */
  n = lua_gettop(L) - base;
  lua_createtable(L, 4, 0);                 /* [r1..rn, reply] */
  lua_pushstring(L, tag);
  lua_rawseti(L, -2, 1);
  lua_pushboolean(L, status == LUA_OK);
  lua_rawseti(L, -2, 2);
  if (status == LUA_OK) {
    lua_createtable(L, n, 0);               /* [r1..rn, reply, value] */
    for (i = 1; i <= n; i++) {
      lua_pushvalue(L, base + i);
      if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        uh_pushnull(L);
      }
      lua_rawseti(L, -2, i);
    }
    uh_markarray(L, -1);
  } else if (status == LUA_ERRMEM) {
    lua_pushfstring(L, "memory limit: the hook used more than "
                    "--memory-limit (%d MiB)",
                    (int)(g_conf->mem_limit >> 20));
  } else {
    lua_getfield(L, LUA_REGISTRYINDEX, "uphook.trace");
    lua_rawseti(L, -2, 4);                  /* reply[4] = trace */
    lua_pushvalue(L, base + 1);             /* [err, reply, err] */
  }
  lua_rawseti(L, -2, 3);                    /* reply[3] = value */
  lua_insert(L, base + 1);                  /* [reply, r1..rn] */
  lua_settop(L, base + 1);                  /* [reply] */
}

static void send_or_die(lua_State *L)
{
  char err[256];
  if (uh_rpc_send(g_wfd, L, -1, err, sizeof err) != UH_RPC_OK) {
    /* e.g. a result holding a function: say so instead */
    lua_pop(L, 1);
    lua_createtable(L, 3, 0);
    lua_pushliteral(L, "done");
    lua_rawseti(L, -2, 1);
    lua_pushboolean(L, 0);
    lua_rawseti(L, -2, 2);
    lua_pushfstring(L, "cannot return this value to uphook: %s", err);
    lua_rawseti(L, -2, 3);
    if (uh_rpc_send(g_wfd, L, -1, err, sizeof err) != UH_RPC_OK)
      _exit(3);
  }
  lua_pop(L, 1);
}

static int load_hook(lua_State *L)
{
  if (luaL_loadbufferx(L, g_conf->src, g_conf->len, g_conf->chunkname, "t")
      != LUA_OK)
    return lua_error(L);
  if (g_conf->test)
    return uh_testchild_load(L);
  lua_call(L, 0, 1);
  if (!lua_istable(L, -1))
    return luaL_error(L, "the hook must return a table, got %s",
                      luaL_typename(L, -1));
  lua_pushvalue(L, -1);
  lua_setfield(L, LUA_REGISTRYINDEX, "uphook.hook");
  lua_pushcfunction(L, uh_child_describe);
  lua_insert(L, -2);
  lua_call(L, 1, 1);
  return 1;
}

/* {"run", phase, ctx[, deadline]}: call hook[phase](ctx), by `deadline`
 * when one is given (a test case's own). */
static void run_phase(lua_State *L, int msg)
{
  if (lua_rawgeti(L, msg, 4) == LUA_TNUMBER)
    g_deadline = lua_tonumber(L, -1);
  lua_pop(L, 1);
  lua_getfield(L, LUA_REGISTRYINDEX, "uphook.hook");
  lua_rawgeti(L, msg, 2);
  lua_gettable(L, -2);
  lua_remove(L, -2);
  lua_rawgeti(L, msg, 3);
  lua_rawgeti(L, msg, 2);
  if (lua_type(L, -1) == LUA_TSTRING
      && strcmp(lua_tostring(L, -1), "__params") == 0) {
    lua_pushcfunction(L, uh_child_check_params);
    lua_replace(L, -4);
  }
  lua_pop(L, 1);
  if (!lua_isfunction(L, -2)) {
    lua_pop(L, 2);
    lua_pushcfunction(L, noop);  /* an absent phase does nothing */
    lua_pushnil(L);
  }
  run_protected(L, 1, "done");
  send_or_die(L);
}

/* {"reset", source, chunkname, memory_limit, deadline, timeout}: the
 * next hook run in this (already confined) process gets a new state.
 * Only `uphook test` sends it; the strings are copied out of the state
 * that is about to be closed. */
static struct uh_child_conf g_next;
static char *g_next_src, *g_next_name;

static void take_reset(lua_State *L, int msg)
{
  size_t n;
  const char *s;
  free(g_next_src);
  free(g_next_name);
  lua_rawgeti(L, msg, 2);
  s = luaL_checklstring(L, -1, &n);
  g_next_src = malloc(n + 1);
  lua_rawgeti(L, msg, 3);
  g_next_name = strdup(luaL_optstring(L, -1, "=hook"));
  if (!g_next_src || !g_next_name)
    _exit(4);
  memcpy(g_next_src, s, n + 1);
  g_next = *g_conf;
  g_next.src = g_next_src;
  g_next.len = n;
  g_next.chunkname = g_next_name;
  lua_rawgeti(L, msg, 4);
  g_next.mem_limit = (size_t)luaL_optinteger(L, -1, 256 << 20);
  lua_rawgeti(L, msg, 5);
  g_next.deadline = luaL_optnumber(L, -1, uh_monotonic() + UH_DEFAULT_TIMEOUT);
  lua_rawgeti(L, msg, 6);
  g_next.timeout = luaL_optnumber(L, -1, UH_DEFAULT_TIMEOUT);
}

static int confined;

/* One hook run: returns (to uh_child_main) only when a reset came. */
static int child_main(lua_State *L)
{
  char err[256];
  build_env(L);
  if (!confined) {
    /* jansson seeds its hash from /dev/urandom on first use: do it now,
     * while the child may still open files */
    json_object_seed(0);
    /* and OpenSSL reads its configuration on the first digest: hash.sha256
     * in a hook killed the child by SIGSYS unless the parent had hashed */
    {
      unsigned char d[32];
      (void)uh_sha256_raw("", 0, d);
    }
    if (!g_conf->unconfined) {
      if (uh_confine_enter(g_rfd, g_wfd, &g_conf->lim, err, sizeof err))
        _exit(5);
      g_rfd = 3;
      g_wfd = 4;
    }
    confined = 1;
  }
  g_deadline = g_conf->deadline;
  lua_sethook(L, deadline_hook, LUA_MASKCOUNT, 1000);
  lua_pushcfunction(L, load_hook);
  run_protected(L, 0, "loaded");
  send_or_die(L);
  for (;;) {
    const char *verb;
    if (uh_rpc_recv(g_rfd, L, -1, NULL, err, sizeof err) != UH_RPC_OK)
      _exit(0);
    if (!lua_istable(L, -1) || lua_rawgeti(L, -1, 1) != LUA_TSTRING)
      _exit(3);
    verb = lua_tostring(L, -1);
    lua_pop(L, 1);
    if (strcmp(verb, "run") == 0) {
      run_phase(L, lua_gettop(L));
    } else if (strcmp(verb, "reset") == 0) {
      take_reset(L, lua_gettop(L));
      return 0;
    } else {
      _exit(0);
    }
    lua_settop(L, 0);
  }
}

static int child_panic(lua_State *L)
{
  (void)L;
  _exit(4);
}

void uh_child_main(int rfd, int wfd, const struct uh_child_conf *conf)
{
  g_conf = conf;
  g_rfd = rfd;
  g_wfd = wfd;
  for (;;) {
    lua_State *L;
    g_alloc.used = 0;
    g_alloc.limit = g_conf->mem_limit;
    L = lua_newstate(counting_alloc, &g_alloc);
    if (!L)
      _exit(4);
    lua_atpanic(L, child_panic);
    lua_pushcfunction(L, child_main);
    if (lua_pcall(L, 0, 0, 0) != LUA_OK)
      _exit(4);
    lua_close(L);          /* a reset: the next run starts from nothing */
    g_conf = &g_next;
  }
}

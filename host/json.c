/* uphook.c.json: JSON <-> Lua through jansson.
 *
 * jansson parses (its own depth bound is 2048) and dumps (sorted keys);
 * the conversion between its tree and Lua is iterative, with open
 * containers kept as frames on the Lua stack and in a bounded array.
 * The jansson tree always belongs to a to-be-closed box, so an error
 * anywhere (ours or Lua's out-of-memory) frees it. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <fcntl.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <lauxlib.h>

#include "jansson_compat.h"
#include "json.h"
#include "luax.h"
#include "osutil.h"

typedef struct {
  json_t *root;
  char *out;
} jbox;

enum { J_ARR, J_OBJ };

typedef struct {
  int kind, tidx;
  const void *ptr;   /* encode: the Lua table, for the cycle check */
  json_t *node;      /* borrowed: owned by the root */
  size_t n, i;
  void *iter;        /* decode: object iterator (the next member) */
  void *cur;         /* decode: the member being converted */
} jframe;

/* The frames of the first levels are the context's own; deeper nesting
 * grows them into a userdata the context keeps (its user value). Every
 * call's context is garbage once it returns: a small one keeps the
 * collector's work, and the heap between collections, in proportion to
 * the documents (a kube.apply of 800 objects made 4 MiB of it a batch). */
enum { J_FRAMES = 16, J_CTX = 4 /* the context's stack index */ };

typedef struct {
  lua_State *L;
  jbox *box;
  int depth, cap;
  uh_err *codep;
  jframe *fr;
  jframe own[J_FRAMES];
} jctx;

static int jbox_close(lua_State *L)
{
  jbox *b = luaL_checkudata(L, 1, "uphook.json.box");
  json_decref(b->root);
  free(b->out);
  b->root = NULL, b->out = NULL;
  return 0;
}

/* Start a call: args 1..2 are the caller's, 3 is uh_err* or nil. */
static jctx *jctx_open(lua_State *L)
{
  jctx *c;
  lua_settop(L, 3);
  c = lua_newuserdatauv(L, sizeof *c, 1);  /* 4: J_CTX */
  memset(c, 0, sizeof *c);
  c->L = L;
  c->fr = c->own, c->cap = J_FRAMES;
  c->codep = lua_touserdata(L, 3);
  c->box = lua_newuserdatauv(L, sizeof(jbox), 0);  /* 5 */
  memset(c->box, 0, sizeof(jbox));
  uh_pushcloser(L, "uphook.json.box", jbox_close);
  lua_setmetatable(L, -2);
  lua_toclose(L, 5);
  return c;
}

_Noreturn static void jerror(jctx *c, uh_err code, const char *fmt, ...)
{
  va_list ap;
  if (c->codep)
    *c->codep = code;
  va_start(ap, fmt);
  lua_pushvfstring(c->L, fmt, ap);
  va_end(ap);
  lua_error(c->L);
  abort();  /* not reached: lua_error longjmps */
}

/* A new innermost frame (the callers check the depth bound first); a
 * frame pointer taken before this call may have moved. */
static jframe *push_frame(jctx *c)
{
  if (c->depth == c->cap) {
    int cap = c->cap * 2 < UH_JSON_MAX_DEPTH ? c->cap * 2 : UH_JSON_MAX_DEPTH;
    jframe *fr = lua_newuserdatauv(c->L, (size_t)cap * sizeof *fr, 0);
    memcpy(fr, c->fr, (size_t)c->depth * sizeof *fr);
    lua_setiuservalue(c->L, J_CTX, 1);
    c->fr = fr, c->cap = cap;
  }
  return &c->fr[c->depth++];
}

/* ---------------------------------------------------------------- */
/* decode                                                             */

/* Push v; a container becomes a new frame instead. */
static int dec_push(jctx *c, json_t *v)
{
  lua_State *L = c->L;
  jframe *f;
  luaL_checkstack(L, 4, "json");
  switch (json_typeof(v)) {
  case JSON_STRING:
    lua_pushlstring(L, json_string_value(v), json_string_length(v));
    return 0;
  case JSON_INTEGER:
    lua_pushinteger(L, (lua_Integer)json_integer_value(v));
    return 0;
  case JSON_REAL:
    lua_pushnumber(L, json_real_value(v));
    return 0;
  case JSON_TRUE:
  case JSON_FALSE:
    lua_pushboolean(L, json_is_true(v));
    return 0;
  case JSON_NULL:
    uh_pushnull(L);
    return 0;
  default:
    break;
  }
  if (c->depth >= UH_JSON_MAX_DEPTH)
    jerror(c, UH_ELIMIT, "json: arrays/objects nested deeper than %d "
           "levels", UH_JSON_MAX_DEPTH);
  f = push_frame(c);
  f->node = v, f->i = 0;
  if (json_is_array(v)) {
    f->kind = J_ARR;
    f->n = json_array_size(v);
    lua_createtable(L, (int)(f->n < 1u << 20 ? f->n : 0), 0);
    uh_markarray(L, -1);
  } else {
    f->kind = J_OBJ;
    f->n = json_object_size(v);
    f->iter = json_object_iter(v);
    lua_createtable(L, 0, (int)(f->n < 1u << 20 ? f->n : 0));
  }
  f->tidx = lua_gettop(L);
  return 1;
}

/* The finished value on top goes into the parent frame. */
static void dec_attach(jctx *c)
{
  jframe *f;
  if (c->depth == 0)
    return;
  f = &c->fr[c->depth - 1];
  if (f->kind == J_ARR)
    lua_rawseti(c->L, f->tidx, (lua_Integer)f->i);
  else
    lua_rawset(c->L, f->tidx);
}

/* A container just converted is freed from the tree (its parent's entry
 * becomes null), so that the tree shrinks as the Lua value grows: a big
 * answer (the LIST of 800 ConfigMaps, 0.8 MB of JSON, is a tree of 6.6 MB) does not exist
 * twice at its end (docs/bench.md). */
static void dec_release(jctx *c)
{
  jframe *f;
  if (c->depth == 0)
    return;
  f = &c->fr[c->depth - 1];
  if (f->kind == J_ARR)
    json_array_set_new(f->node, f->i - 1, json_null());
  else
    json_object_iter_set_new(f->node, f->cur, json_null());
}

static void dec_tree(jctx *c, json_t *root)
{
  lua_State *L = c->L;
  if (!dec_push(c, root))
    return;
  while (c->depth > 0) {
    jframe *f = &c->fr[c->depth - 1];
    json_t *v;
    if (f->i == f->n) {
      c->depth--;
      dec_attach(c);
      dec_release(c);
      continue;
    }
    f->i++;
    if (f->kind == J_ARR) {
      v = json_array_get(f->node, f->i - 1);
    } else {
      f->cur = f->iter;
      lua_pushlstring(L, json_object_iter_key(f->iter),
                      uh_json_iter_key_len(f->iter));
      v = json_object_iter_value(f->iter);
      f->iter = json_object_iter_next(f->node, f->iter);
    }
    if (!dec_push(c, v))
      dec_attach(c);
  }
}

/* decode_main(s, nil, uh_err*) -> value */
static int decode_main(lua_State *L)
{
  size_t n;
  const char *s = luaL_checklstring(L, 1, &n);
  json_error_t e;
  jctx *c = jctx_open(L);
  c->box->root = json_loadb(s, n, JSON_DECODE_ANY | JSON_ALLOW_NUL, &e);
  if (!c->box->root) {
    if (json_error_code(&e) == json_error_out_of_memory)
      jerror(c, UH_ENOMEM, "json: out of memory");
    jerror(c, UH_EPARSE, "json: line %d column %d: %s%s", e.line, e.column,
           json_error_code(&e) == json_error_invalid_utf8 ? "invalid UTF-8: "
                                                           : "", e.text);
  }
  dec_tree(c, c->box->root);
  return 1;
}

/* ---------------------------------------------------------------- */
/* encode                                                             */

/* Push "$.a[2]" naming the entry being encoded (Lua 1-based). */
static void push_path(jctx *c)
{
  lua_State *L = c->L;
  luaL_Buffer b;
  int j;
  luaL_buffinit(L, &b);
  luaL_addchar(&b, '$');
  for (j = 0; j < c->depth; j++) {
    jframe *f = &c->fr[j];
    if (f->kind == J_ARR)
      lua_pushfstring(L, "[%I]", (lua_Integer)f->i);
    else if (lua_type(L, f->tidx + 1) == LUA_TNUMBER)
      lua_pushfstring(L, "[%I]", lua_tointeger(L, f->tidx + 1));
    else if (lua_type(L, f->tidx + 1) == LUA_TSTRING)
      lua_pushfstring(L, ".%s", lua_tostring(L, f->tidx + 1));
    else
      lua_pushliteral(L, "");
    luaL_addvalue(&b);
  }
  luaL_pushresult(&b);
}

_Noreturn static void enc_error(jctx *c, uh_err code, const char *what)
{
  push_path(c);
  jerror(c, code, "json: %s at %s", what, lua_tostring(c->L, -1));
}

/* Put v (a new reference) into the parent frame, or make it the root. */
static void enc_attach(jctx *c, json_t *v)
{
  lua_State *L = c->L;
  jframe *f;
  int bad;
  if (c->depth == 0) {
    c->box->root = v;
    return;
  }
  f = &c->fr[c->depth - 1];
  if (f->kind == J_ARR) {
    bad = json_array_append_new(f->node, v);
  } else if (lua_type(L, f->tidx + 1) == LUA_TSTRING) {
    size_t n;
    const char *k = lua_tolstring(L, f->tidx + 1, &n);
    bad = uh_json_setn_new(f->node, k, n, v);
  } else {
    char buf[32];
    snprintf(buf, sizeof buf, LUA_INTEGER_FMT, lua_tointeger(L, f->tidx + 1));
    bad = json_object_set_new(f->node, buf, v);
  }
  if (bad)
    enc_error(c, UH_EINVAL, "invalid UTF-8 in a key (or out of memory)"
#ifdef UH_JANSSON_NO_KEYLEN
              " or a NUL byte in a key, which jansson < 2.14 cannot hold"
#endif
              );
}

/* The table on top becomes a frame holding a new, attached container. */
static void enc_open(jctx *c)
{
  lua_State *L = c->L;
  int t = lua_gettop(L), j;
  const void *p = lua_topointer(L, t);
  jframe *f;
  json_t *node;
  size_t n;
  for (j = 0; j < c->depth; j++)
    if (c->fr[j].ptr == p)
      enc_error(c, UH_EINVAL, "cannot encode a table that contains itself");
  if (c->depth >= UH_JSON_MAX_DEPTH)
    enc_error(c, UH_ELIMIT, "tables nested too deep");
  luaL_checkstack(L, 6, "json nesting");
  int arr = uh_isarray(L, t, &n);
  if (!(node = arr ? json_array() : json_object()))
    enc_error(c, UH_ENOMEM, "out of memory");
  enc_attach(c, node);
  f = push_frame(c);
  f->kind = arr ? J_ARR : J_OBJ;
  f->tidx = t, f->ptr = p, f->node = node, f->n = n, f->i = 0;
  lua_pushnil(L);  /* t + 1: the current key of an object */
}

/* Encode the value on top (popping it); a table becomes a frame. */
static void enc_value(jctx *c)
{
  lua_State *L = c->L;
  json_t *v = NULL;
  size_t n;
  const char *s;
  switch (lua_type(L, -1)) {
  case LUA_TNIL: v = json_null(); break;
  case LUA_TBOOLEAN: v = json_boolean(lua_toboolean(L, -1)); break;
  case LUA_TNUMBER:
    if (lua_isinteger(L, -1))
      v = json_integer((json_int_t)lua_tointeger(L, -1));
    else if (!isfinite(lua_tonumber(L, -1)))
      enc_error(c, UH_EINVAL, "cannot encode NaN or infinity");
    else
      v = json_real(lua_tonumber(L, -1));
    break;
  case LUA_TSTRING:
    s = lua_tolstring(L, -1, &n);
    if (!(v = json_stringn(s, n)))
      enc_error(c, UH_EINVAL, "invalid UTF-8 in a string");
    break;
  case LUA_TTABLE:
    enc_open(c);
    return;
  default:
    if (uh_isnull(L, -1)) {
      v = json_null();
      break;
    }
    lua_pushfstring(L, "cannot encode a %s", luaL_typename(L, -1));
    enc_error(c, UH_EINVAL, lua_tostring(L, -1));
  }
  if (!v)
    enc_error(c, UH_ENOMEM, "out of memory");
  enc_attach(c, v);
  lua_pop(L, 1);
}

/* Next entry of the innermost frame onto the stack; 0 when it is done. */
static int enc_next(jctx *c, jframe *f)
{
  lua_State *L = c->L;
  if (f->kind == J_ARR) {
    if (f->i == f->n)
      return 0;
    lua_rawgeti(L, f->tidx, (lua_Integer)++f->i);
    return 1;
  }
  lua_settop(L, f->tidx + 1);
  if (!lua_next(L, f->tidx))
    return 0;
  if (!lua_isinteger(L, -2) && lua_type(L, -2) != LUA_TSTRING) {
    lua_pushfstring(L, "cannot encode a %s key", luaL_typename(L, -2));
    c->depth--;  /* the path names the table, not the bad key */
    enc_error(c, UH_EINVAL, lua_tostring(L, -1));
  }
  return 1;
}

static void enc_tree(jctx *c)
{
  enc_value(c);
  while (c->depth > 0) {
    jframe *f = &c->fr[c->depth - 1];
    if (enc_next(c, f)) {
      enc_value(c);
    } else {
      lua_settop(c->L, f->tidx - 1);
      c->depth--;
    }
  }
}

/* encode_main(v, opts, uh_err*) -> string */
static int encode_main(lua_State *L)
{
  size_t flags = JSON_SORT_KEYS | JSON_ENCODE_ANY | JSON_COMPACT;
  jctx *c;
  lua_Integer indent = 0;
  if (lua_istable(L, 2)) {
    lua_getfield(L, 2, "indent");
    indent = luaL_optinteger(L, -1, 0);
    luaL_argcheck(L, indent >= 0 && indent <= 31, 2, "indent must be 0..31");
    lua_pop(L, 1);
  }
  if (indent > 0)
    flags = JSON_SORT_KEYS | JSON_ENCODE_ANY | JSON_INDENT(indent);
  c = jctx_open(L);
  lua_pushvalue(L, 1);
  enc_tree(c);
  if (!(c->box->out = json_dumps(c->box->root, flags)))
    jerror(c, UH_ENOMEM, "json: out of memory");
  lua_pushstring(L, c->box->out);
  return 1;
}

/* ---------------------------------------------------------------- */
/* C API and Lua bindings                                             */

static int pcall_codec(lua_State *L, lua_CFunction fn, char *err,
                       size_t errlen)
{
  uh_err code = UH_EPARSE;
  int st;
  lua_pushlightuserdata(L, &code);
  lua_pushcfunction(L, fn);
  lua_insert(L, -4);
  st = lua_pcall(L, 3, 1, 0);
  if (st == LUA_OK)
    return UH_OK;
  if (err && errlen)
    snprintf(err, errlen, "%s", lua_isstring(L, -1) ? lua_tostring(L, -1)
                                                   : "json: error");
  lua_pop(L, 1);
  return st == LUA_ERRMEM ? UH_ENOMEM : (int)code;
}

int uh_json_decode_push(lua_State *L, const char *s, size_t n,
                        char *err, size_t errlen)
{
  luaL_checkstack(L, 5, "json");
  lua_pushlstring(L, s, n);
  lua_pushnil(L);
  return pcall_codec(L, decode_main, err, errlen);
}

int uh_json_encode_push(lua_State *L, int idx, char *err, size_t errlen)
{
  idx = lua_absindex(L, idx);
  luaL_checkstack(L, 5, "json");
  lua_pushvalue(L, idx);
  lua_pushnil(L);
  return pcall_codec(L, encode_main, err, errlen);
}

static int json_decode(lua_State *L)
{
  luaL_checkstring(L, 1);
  lua_settop(L, 1);
  lua_pushnil(L);
  lua_pushnil(L);
  return decode_main(L);
}

/* encode(v [, {indent = n}]) */
static int json_encode(lua_State *L)
{
  luaL_checkany(L, 1);
  if (!lua_isnoneornil(L, 2))
    luaL_checktype(L, 2, LUA_TTABLE);
  lua_settop(L, 2);
  lua_pushnil(L);
  return encode_main(L);
}

void uh_json_event_log(const char *line, size_t n)
{
  const char *path = getenv("UPHOOK_TEST_EVENT_LOG");
  static double t0;      /* with the pid, names this run (pids wrap) */
  char head[64];
  int fd, h;
  if (!path || !*path)
    return;
  if ((fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644)) < 0)
    return;
  if (t0 == 0)
    t0 = uh_monotonic();
  h = snprintf(head, sizeof head, "%ld.%.6f ", (long)getpid(), t0);
  {
    char *buf = malloc((size_t)h + n + 1);
    if (buf) {            /* one write: lines of processes do not mix */
      memcpy(buf, head, (size_t)h);
      memcpy(buf + h, line, n);
      buf[(size_t)h + n] = '\n';
      uh_write_all(fd, buf, (size_t)h + n + 1);
      free(buf);
    }
  }
  close(fd);
}

void uh_json_event(json_t *ev)
{
  char *s = ev ? json_dumps(ev, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
  if (s) {
    puts(s);
    fflush(stdout);
    uh_json_event_log(s, strlen(s));
    free(s);
  }
  json_decref(ev);
}

static const luaL_Reg json_funcs[] = {
  {"decode", json_decode},
  {"encode", json_encode},
  {NULL, NULL}
};

int luaopen_uphook_json(lua_State *L)
{
  luaL_newlib(L, json_funcs);
  uh_setnullarray(L);
  return 1;
}

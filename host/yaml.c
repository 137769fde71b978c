/* uphook.c.yaml: YAML <-> Lua with libyaml's event parser and emitter.
 *
 * Scalars resolve as Kubernetes' YAML does (sigs.k8s.io/yaml over
 * go-yaml v2, YAML 1.1 booleans, octal 0755, timestamps stay strings)
 * and mapping keys become strings, as they do on the way to JSON.
 * Neither direction recurses in C: open collections live on the Lua
 * stack and a bounded frame array, so hostile input cannot overflow the
 * C stack, and aliases are charged against a node budget before they
 * are copied, so a billion laughs fails at once. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include "luax.h"
#include <yaml.h>  /* host/yaml.h: uphook API + libyaml */
#include "yaml_scalar.h"

#define TAG_PFX "tag:yaml.org,2002:"

/* ---------------------------------------------------------------- */
/* decoder                                                            */

enum { F_SEQ, F_MAP };

typedef struct {
  yaml_parser_t parser;
  yaml_event_t ev;
  int parser_live, ev_live, gc_stopped;
} ydbox;

/* An open collection. Its values wait on the Lua stack above its two
 * slots (the table's, nil until it is made, and the anchor's) and go
 * into a table made at its end with room for exactly them: no table
 * grows by rehashing (a manifest's maps hold a handful of keys each).
 * A merge key, or more than PENDING values, makes the table at once and
 * the rest go straight in (direct). */
typedef struct {
  int kind, haskey, merge, tidx, direct;
  lua_Integer n;   /* values (a sequence) or pairs (a mapping) so far */
  size_t nodes;
} yframe;

/* Per open collection: 256 levels of it stay below the Lua stack's
 * million slots (LUAI_MAXSTACK). */
#define PENDING 2048
/* texts of this many bytes or more are decoded with the collector
 * stopped (decode_main) */
#define GC_STOP_MIN ((size_t)1 << 20)

typedef struct {
  lua_State *L;
  ydbox *box;
  int all, anchors, counts, docs;
  lua_Integer ndocs;
  int depth;
  size_t alias_nodes;
  uh_err *codep;  /* where the C API wants the error class, or NULL */
  yframe fr[UH_YAML_MAX_DEPTH];
} ydec;

static int ydbox_close(lua_State *L)
{
  ydbox *b = luaL_checkudata(L, 1, "uphook.yaml.parser");
  if (b->ev_live)
    yaml_event_delete(&b->ev);
  if (b->parser_live)
    yaml_parser_delete(&b->parser);
  if (b->gc_stopped)
    lua_gc(L, LUA_GCRESTART);
  b->ev_live = b->parser_live = b->gc_stopped = 0;
  return 0;
}

static int line_of(ydec *d)
{
  return (int)d->box->ev.start_mark.line + 1;
}

_Noreturn static void dec_error(ydec *d, uh_err code, const char *fmt, ...)
{
  va_list ap;
  if (d->codep)
    *d->codep = code;
  va_start(ap, fmt);
  lua_pushvfstring(d->L, fmt, ap);
  va_end(ap);
  lua_error(d->L);
  abort();  /* not reached: lua_error longjmps */
}

/* Kubernetes turns every mapping key into a string on its way to JSON;
 * doing the same keeps {1: a, 2: b} a mapping when re-encoded. */
static void key_to_string(ydec *d)
{
  lua_State *L = d->L;
  char buf[64];
  switch (lua_type(L, -1)) {
  case LUA_TSTRING:
    return;
  case LUA_TBOOLEAN:
    lua_pushstring(L, lua_toboolean(L, -1) ? "true" : "false");
    break;
  case LUA_TNUMBER:
    if (lua_isinteger(L, -1))
      snprintf(buf, sizeof buf, LUA_INTEGER_FMT, lua_tointeger(L, -1));
    else
      snprintf(buf, sizeof buf, "%.17g", lua_tonumber(L, -1));
    lua_pushstring(L, buf);
    break;
  case LUA_TLIGHTUSERDATA:
    dec_error(d, UH_EPARSE, "yaml: line %d: a mapping key is null",
              line_of(d));
  default:
    dec_error(d, UH_EPARSE, "yaml: line %d: a mapping key is a collection"
              " (only scalar keys are supported)", line_of(d));
  }
  lua_replace(L, -2);
}

/* Merge the mapping on top (or each mapping of the list on top, the
 * first one winning) into frame f, as go-yaml v2 does, then pop it. */
static void merge_into(ydec *d, yframe *f)
{
  lua_State *L = d->L;
  lua_Integer i, n = 1;
  int list = uh_hasarraymt(L, -1), src = lua_gettop(L);
  if (list)
    n = (lua_Integer)lua_rawlen(L, src);
  for (i = n; i >= 1; i--) {
    if (list)
      lua_rawgeti(L, src, i);
    else
      lua_pushvalue(L, src);
    if (!lua_istable(L, -1) || uh_hasarraymt(L, -1))
      dec_error(d, UH_EPARSE, "yaml: line %d: map merge requires a map or "
                "a sequence of maps as the value", line_of(d));
    lua_pushnil(L);
    while (lua_next(L, -2)) {
      lua_pushvalue(L, -2);
      lua_insert(L, -2);
      lua_rawset(L, f->tidx);
    }
    lua_pop(L, 1);
  }
  lua_pop(L, 2);  /* the value and the "<<" key */
}

/* Make frame f's table from the values waiting above its slots, all
 * but the top `keep` (a merge key and its value), which stay on top. */
static void make_table(ydec *d, yframe *f, int keep)
{
  lua_State *L = d->L;
  int first = f->tidx + 2, last = lua_gettop(L) - keep, i, t;
  lua_Integer k = 0;
  luaL_checkstack(L, 4, "yaml");
  if (f->kind == F_SEQ) {
    lua_createtable(L, (int)f->n, 0);
    uh_markarray(L, -1);
    t = lua_gettop(L);
    for (i = first; i <= last; i++) {
      lua_pushvalue(L, i);
      lua_rawseti(L, t, ++k);
    }
  } else {
    lua_createtable(L, 0, (int)f->n);
    t = lua_gettop(L);
    for (i = first; i < last; i += 2) {
      lua_pushvalue(L, i);
      lua_pushvalue(L, i + 1);
      lua_rawset(L, t);   /* in order: a repeated key's last value wins */
    }
  }
  lua_replace(L, f->tidx);
  if (keep)
    lua_rotate(L, first, keep);
  lua_settop(L, first + keep - 1);
  f->direct = 1;
}

/* A finished value of a collection not made yet: it waits on the stack. */
static void attach_pending(ydec *d, yframe *f)
{
  if (f->kind == F_MAP && !f->haskey) {
    key_to_string(d);
    f->haskey = 1;
    return;
  }
  if (f->kind == F_MAP && f->merge) {
    make_table(d, f, 2);
    merge_into(d, f);
    f->haskey = f->merge = 0;
    return;
  }
  f->n++;
  f->haskey = 0;
  if (lua_gettop(d->L) - f->tidx > PENDING)
    make_table(d, f, 0);
}

/* A finished value (nodes: its size) is on top: put it in its parent. */
static void attach(ydec *d, size_t nodes)
{
  lua_State *L = d->L;
  yframe *f;
  if (d->depth == 0) {
    lua_rawseti(L, d->docs, ++d->ndocs);
    return;
  }
  f = &d->fr[d->depth - 1];
  f->nodes += nodes;
  if (!f->direct) {
    attach_pending(d, f);
  } else if (f->kind == F_SEQ) {
    lua_rawseti(L, f->tidx, ++f->n);
  } else if (!f->haskey) {
    key_to_string(d);
    f->haskey = 1;
  } else {
    if (f->merge)
      merge_into(d, f);
    else
      lua_rawset(L, f->tidx);
    f->haskey = f->merge = 0;
  }
}

/* Replace the table on top with a deep copy (iterative: a work list of
 * source/destination pairs), keeping array marks. */
static void copy_tree(lua_State *L)
{
  int src = lua_gettop(L), work, s, t;
  lua_Integer top = 2;
  luaL_checkstack(L, 8, "yaml alias copy");
  lua_createtable(L, 16, 0);
  work = src + 1;
  lua_newtable(L);
  if (uh_hasarraymt(L, src))
    uh_markarray(L, -1);
  lua_pushvalue(L, src);
  lua_rawseti(L, work, 1);
  lua_pushvalue(L, -1);
  lua_rawseti(L, work, 2);
  lua_replace(L, src);  /* the root copy takes the source's slot */
  while (top > 0) {
    lua_rawgeti(L, work, top - 1);
    lua_rawgeti(L, work, top);
    s = lua_gettop(L) - 1, t = s + 1;
    top -= 2;
    lua_pushnil(L);
    while (lua_next(L, s)) {
      if (lua_istable(L, -1)) {
        lua_rawseti(L, work, ++top);
        lua_newtable(L);
        lua_rawgeti(L, work, top);
        if (uh_hasarraymt(L, -1))
          uh_markarray(L, -2);
        lua_pop(L, 1);
        lua_pushvalue(L, -1);
        lua_rawseti(L, work, ++top);
      }
      lua_pushvalue(L, -2);
      lua_insert(L, -2);
      lua_rawset(L, t);
    }
    lua_pop(L, 2);
  }
  lua_pop(L, 1);  /* work */
}

static int tag_is(const char *tag, const char *name)
{
  return strncmp(tag, TAG_PFX, sizeof TAG_PFX - 1) == 0 &&
         strcmp(tag + sizeof TAG_PFX - 1, name) == 0;
}

/* Explicit tags: !!str keeps text, other core tags must match what the
 * text resolves to (!!float accepts ints), unknown tags keep text. */
static int resolve_tagged(ydec *d, const char *tag, const char *s,
                          size_t n, yscalar *v)
{
  static const char *const core[] = {"bool", "int", "float", "null",
    "timestamp", NULL};
  static const int kinds[] = {R_BOOL, R_INT, R_FLOAT, R_NULL, R_STR};
  int i;
  v->kind = R_STR;
  if (tag_is(tag, "str") || tag_is(tag, "binary"))
    return R_STR;
  for (i = 0; core[i]; i++)
    if (tag_is(tag, core[i]))
      break;
  if (!core[i])
    return R_STR;
  uh_yaml_resolve_plain(s, n, v);
  if (v->kind == R_INT && kinds[i] == R_FLOAT)
    v->kind = R_FLOAT, v->d = (double)v->i;
  if (v->kind != kinds[i])
    dec_error(d, UH_EPARSE, "yaml: line %d: cannot decode `%s` as a !!%s",
              line_of(d), s, core[i]);
  return v->kind;
}

static void push_scalar(lua_State *L, const yscalar *v, const char *s,
                        size_t n)
{
  switch (v->kind) {
  case R_NULL: uh_pushnull(L); break;
  case R_BOOL: lua_pushboolean(L, v->b); break;
  case R_INT: lua_pushinteger(L, v->i); break;
  case R_FLOAT: lua_pushnumber(L, v->d); break;
  default: lua_pushlstring(L, s, n); break;
  }
}

static void remember_anchor(ydec *d, const yaml_char_t *anchor,
                            size_t nodes)
{
  lua_State *L = d->L;
  if (!anchor)
    return;
  lua_pushstring(L, (const char *)anchor);
  lua_pushvalue(L, -2);
  lua_rawset(L, d->anchors);
  lua_pushstring(L, (const char *)anchor);
  lua_pushinteger(L, (lua_Integer)nodes);
  lua_rawset(L, d->counts);
}

static void on_scalar(ydec *d, yaml_event_t *e)
{
  const char *s = (const char *)e->data.scalar.value;
  size_t n = e->data.scalar.length;
  const char *tag = (const char *)e->data.scalar.tag;
  int plain = e->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
  yscalar v;
  yframe *f = d->depth ? &d->fr[d->depth - 1] : NULL;
  luaL_checkstack(d->L, 4, "yaml");
  if (tag)
    resolve_tagged(d, tag, s, n, &v);
  else if (plain)
    uh_yaml_resolve_plain(s, n, &v);
  else
    v.kind = R_STR;
  if (f && f->kind == F_MAP && !f->haskey && n == 2 && s[0] == '<' &&
      s[1] == '<' && ((plain && !tag) || (tag && tag_is(tag, "merge"))))
    f->merge = 1;
  push_scalar(d->L, &v, s, n);
  remember_anchor(d, e->data.scalar.anchor, 1);
  attach(d, 1);
}

static void on_start(ydec *d, yaml_event_t *e, int kind)
{
  lua_State *L = d->L;
  const yaml_char_t *anchor = kind == F_SEQ ? e->data.sequence_start.anchor
                                            : e->data.mapping_start.anchor;
  yframe *f;
  if (d->depth >= UH_YAML_MAX_DEPTH)
    dec_error(d, UH_ELIMIT, "yaml: line %d: collections nested deeper "
              "than %d levels", line_of(d), UH_YAML_MAX_DEPTH);
  luaL_checkstack(L, 8, "yaml nesting");
  lua_pushnil(L);   /* the table's slot: made at the end (yframe) */
  if (anchor)
    lua_pushstring(L, (const char *)anchor);
  else
    lua_pushnil(L);
  f = &d->fr[d->depth++];
  f->kind = kind;
  f->haskey = f->merge = f->direct = 0;
  f->tidx = lua_gettop(L) - 1;
  f->n = 0;
  f->nodes = 0;
}

static void on_end(ydec *d)
{
  lua_State *L = d->L;
  yframe *f = &d->fr[--d->depth];
  size_t nodes = f->nodes + 1;
  if (!f->direct)
    make_table(d, f, 0);
  if (lua_isstring(L, -1)) {
    lua_pushvalue(L, -2);
    lua_pushvalue(L, -2);
    lua_insert(L, -2);  /* anchor, table */
    lua_rawset(L, d->anchors);
    lua_pushinteger(L, (lua_Integer)nodes);
    lua_rawset(L, d->counts);  /* pops the anchor name too */
  } else {
    lua_pop(L, 1);
  }
  attach(d, nodes);
}

static void on_alias(ydec *d, yaml_event_t *e)
{
  lua_State *L = d->L;
  const char *name = (const char *)e->data.alias.anchor;
  size_t nodes;
  luaL_checkstack(L, 4, "yaml");
  lua_getfield(L, d->counts, name);
  if (lua_isnil(L, -1))
    dec_error(d, UH_EPARSE, "yaml: line %d: unknown anchor '%s' referenced",
              line_of(d), name);
  nodes = (size_t)lua_tointeger(L, -1);
  lua_pop(L, 1);
  if (nodes > UH_YAML_MAX_ALIAS_NODES - d->alias_nodes)
    dec_error(d, UH_ELIMIT, "yaml: line %d: aliases expand to more than "
              "%d nodes (a billion laughs?)", line_of(d),
              UH_YAML_MAX_ALIAS_NODES);
  d->alias_nodes += nodes;
  lua_getfield(L, d->anchors, name);
  if (lua_istable(L, -1))
    copy_tree(L);
  attach(d, nodes);
}

static void parse_error(ydec *d)
{
  yaml_parser_t *p = &d->box->parser;
  lua_State *L = d->L;
  luaL_Buffer b;
  if (p->error == YAML_MEMORY_ERROR)
    dec_error(d, UH_ENOMEM, "yaml: out of memory");
  luaL_buffinit(L, &b);
  lua_pushfstring(L, "yaml: line %d column %d: %s",
                  (int)p->problem_mark.line + 1,
                  (int)p->problem_mark.column + 1,
                  p->problem ? p->problem : "unknown error");
  luaL_addvalue(&b);
  if (p->context) {
    lua_pushfstring(L, " (%s at line %d column %d)", p->context,
                    (int)p->context_mark.line + 1,
                    (int)p->context_mark.column + 1);
    luaL_addvalue(&b);
  }
  luaL_pushresult(&b);
  if (d->codep)
    *d->codep = UH_EPARSE;
  lua_error(L);
}

static void new_anchor_tables(ydec *d)
{
  lua_newtable(d->L);
  lua_replace(d->L, d->anchors);
  lua_newtable(d->L);
  lua_replace(d->L, d->counts);
}

/* One event; returns 0 at the end of the stream. */
static int dec_event(ydec *d, yaml_event_t *e)
{
  switch (e->type) {
  case YAML_STREAM_END_EVENT:
    return 0;
  case YAML_DOCUMENT_START_EVENT:
    if (!d->all && d->ndocs > 0)
      dec_error(d, UH_EPARSE, "yaml: line %d: expected a single document "
                "but found another (use decode_all)", line_of(d));
    if (d->ndocs > 0)
      new_anchor_tables(d);
    break;
  case YAML_SCALAR_EVENT:
    on_scalar(d, e);
    break;
  case YAML_ALIAS_EVENT:
    on_alias(d, e);
    break;
  case YAML_SEQUENCE_START_EVENT:
    on_start(d, e, F_SEQ);
    break;
  case YAML_MAPPING_START_EVENT:
    on_start(d, e, F_MAP);
    break;
  case YAML_SEQUENCE_END_EVENT:
  case YAML_MAPPING_END_EVENT:
    on_end(d);
    break;
  default:
    break;
  }
  return 1;
}

/* decode_main(s, all, ydec_code*) -> value; raises on bad input. */
static int decode_main(lua_State *L)
{
  size_t n;
  const char *s = luaL_checklstring(L, 1, &n);
  ydec *d;
  int more = 1;
  lua_settop(L, 3);
  d = lua_newuserdatauv(L, sizeof *d, 0);  /* 4: frames, GC-owned */
  memset(d, 0, sizeof *d);
  d->L = L;
  d->codep = lua_touserdata(L, 3);
  d->all = lua_toboolean(L, 2);
  d->box = lua_newuserdatauv(L, sizeof(ydbox), 0);  /* 5 */
  memset(d->box, 0, sizeof(ydbox));
  uh_pushcloser(L, "uphook.yaml.parser", ydbox_close);
  lua_setmetatable(L, -2);
  lua_toclose(L, 5);
  /* everything decoded stays reachable until the end: a collection
   * meanwhile would only walk it (an allocation that fails still makes
   * a full one first).  Only for a big text: restarting the collector
   * drops the pause it was in, so a new cycle over the whole heap
   * begins at once, and a Helm render's hundreds of small documents,
   * each decoded alone (lua/engine/helm/render.lua), kept it walking a
   * heap of tens of MB without a pause (tests/bench/bench_hook.sh). */
  if (n >= GC_STOP_MIN && lua_gc(L, LUA_GCISRUNNING)) {
    lua_gc(L, LUA_GCSTOP);
    d->box->gc_stopped = 1;
  }
  lua_newtable(L), d->anchors = 6;
  lua_newtable(L), d->counts = 7;
  lua_newtable(L), d->docs = 8;
  if (!yaml_parser_initialize(&d->box->parser))
    dec_error(d, UH_ENOMEM, "yaml: out of memory");
  d->box->parser_live = 1;
  yaml_parser_set_input_string(&d->box->parser, (const unsigned char *)s, n);
  while (more) {
    if (!yaml_parser_parse(&d->box->parser, &d->box->ev))
      parse_error(d);
    d->box->ev_live = 1;
    more = dec_event(d, &d->box->ev);
    yaml_event_delete(&d->box->ev);
    d->box->ev_live = 0;
  }
  if (d->all) {
    uh_markarray(L, d->docs);
    lua_pushvalue(L, d->docs);
  } else if (d->ndocs == 0) {
    uh_pushnull(L);
  } else {
    lua_rawgeti(L, d->docs, 1);
  }
  return 1;
}

static int pcall_codec(lua_State *L, lua_CFunction fn, int nargs,
                       char *err, size_t errlen)
{
  uh_err code = UH_EPARSE;
  int st;
  lua_pushlightuserdata(L, &code);
  lua_pushcfunction(L, fn);
  lua_insert(L, -(nargs + 2));
  st = lua_pcall(L, nargs + 1, 1, 0);
  if (st == LUA_OK)
    return UH_OK;
  if (err && errlen)
    snprintf(err, errlen, "%s", lua_isstring(L, -1) ? lua_tostring(L, -1)
                                                   : "yaml: error");
  lua_pop(L, 1);
  return st == LUA_ERRMEM ? UH_ENOMEM : (int)code;
}

int uh_yaml_decode_push(lua_State *L, const char *s, size_t n, int all,
                        char *err, size_t errlen)
{
  luaL_checkstack(L, 4, "yaml");
  lua_pushlstring(L, s, n);
  lua_pushboolean(L, all);
  return pcall_codec(L, decode_main, 2, err, errlen);
}

int uh_yaml_encode_push(lua_State *L, int idx, int all,
                        char *err, size_t errlen)
{
  idx = lua_absindex(L, idx);
  luaL_checkstack(L, 4, "yaml");
  lua_pushvalue(L, idx);
  lua_pushboolean(L, all);
  return pcall_codec(L, uh_yaml_encode_main, 2, err, errlen);
}

/* ---------------------------------------------------------------- */
/* Lua bindings                                                       */

static int codec_call(lua_State *L, lua_CFunction fn, int all)
{
  lua_settop(L, 1);
  lua_pushboolean(L, all);
  lua_pushnil(L);
  return fn(L);
}

static int yaml_decode(lua_State *L)
{
  luaL_checkstring(L, 1);
  return codec_call(L, decode_main, 0);
}

static int yaml_decode_all(lua_State *L)
{
  luaL_checkstring(L, 1);
  return codec_call(L, decode_main, 1);
}

static int yaml_encode(lua_State *L)
{
  luaL_checkany(L, 1);
  return codec_call(L, uh_yaml_encode_main, 0);
}

static int yaml_encode_all(lua_State *L)
{
  luaL_checktype(L, 1, LUA_TTABLE);
  return codec_call(L, uh_yaml_encode_main, 1);
}

static const luaL_Reg yaml_funcs[] = {
  {"decode", yaml_decode},
  {"decode_all", yaml_decode_all},
  {"encode", yaml_encode},
  {"encode_all", yaml_encode_all},
  {NULL, NULL}
};

int luaopen_uphook_yaml(lua_State *L)
{
  luaL_newlib(L, yaml_funcs);
  uh_setnullarray(L);
  return 1;
}

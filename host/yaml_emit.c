/* uphook.c.yaml, the encoder half: Lua values -> YAML text through
 * libyaml's emitter. Iterative: open tables are frames on the Lua stack
 * and in a bounded array, so depth is checked, never the C stack. Keys
 * are sorted so output is deterministic; strings that would decode as
 * something else are quoted. (Split from yaml.c to keep files short.) */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include "luax.h"
#include <yaml.h>  /* host/yaml.h: uphook API + libyaml */

enum { F_SEQ, F_MAP };

typedef struct {
  yaml_emitter_t em;
  int live;
  char *buf;
  size_t len, cap;
} yebox;

typedef struct {
  const char *s;
  size_t n;
  lua_Integer i;
  int isint;
} ykey;

typedef struct {
  int kind, tidx;
  const void *ptr;
  size_t n, i;
  ykey *keys;
} eframe;

typedef struct {
  lua_State *L;
  yebox *box;
  int depth;
  uh_err *codep;
  eframe fr[UH_YAML_MAX_DEPTH];
} yenc;

static int yebox_close(lua_State *L)
{
  yebox *b = luaL_checkudata(L, 1, "uphook.yaml.emitter");
  if (b->live)
    yaml_emitter_delete(&b->em);
  free(b->buf);
  b->buf = NULL;
  b->live = 0;
  return 0;
}

static int write_out(void *data, unsigned char *s, size_t n)
{
  yebox *b = data;
  if (n > b->cap - b->len) {
    size_t cap = b->cap ? b->cap : 4096;
    char *p;
    while (cap - b->len < n)
      cap *= 2;
    if (!(p = realloc(b->buf, cap)))
      return 0;
    b->buf = p, b->cap = cap;
  }
  memcpy(b->buf + b->len, s, n);
  b->len += n;
  return 1;
}

/* Push "$.a.b[2]" naming the entry being encoded (Lua 1-based). */
static void push_path(yenc *e)
{
  lua_State *L = e->L;
  luaL_Buffer b;
  int j;
  luaL_buffinit(L, &b);
  luaL_addchar(&b, '$');
  for (j = 0; j < e->depth; j++) {
    eframe *f = &e->fr[j];
    const ykey *k = f->kind == F_MAP && f->i ? &f->keys[f->i - 1] : NULL;
    if (f->kind == F_SEQ)
      lua_pushfstring(L, "[%I]", (lua_Integer)f->i);
    else if (k && k->isint)
      lua_pushfstring(L, "[%I]", k->i);
    else if (k)
      lua_pushfstring(L, ".%s", k->s);
    else
      lua_pushliteral(L, "");
    luaL_addvalue(&b);
  }
  luaL_pushresult(&b);
}

_Noreturn static void enc_error(yenc *e, uh_err code, const char *what)
{
  if (e->codep)
    *e->codep = code;
  push_path(e);
  lua_pushfstring(e->L, "yaml: %s at %s", what, lua_tostring(e->L, -1));
  lua_error(e->L);
  abort();  /* not reached: lua_error longjmps */
}

static void emit(yenc *e, yaml_event_t *ev)
{
  if (!yaml_emitter_emit(&e->box->em, ev))
    enc_error(e, UH_EINVAL, e->box->em.problem ? e->box->em.problem
                                               : "cannot write output");
}

static void emit_scalar(yenc *e, const char *s, size_t n, int plain,
                        yaml_scalar_style_t style)
{
  yaml_event_t ev;
  if (n > INT32_MAX || !yaml_scalar_event_initialize(&ev, NULL, NULL,
      (yaml_char_t *)s, (int)n, plain, 1, style))
    enc_error(e, UH_EINVAL, "invalid UTF-8 in a string");
  emit(e, &ev);
}

/* go-yaml quotes timestamps too; other YAML readers would take them
 * for dates. */
static int looks_like_date(const char *s, size_t n)
{
  size_t i = 0;
  while (i < n && s[i] >= '0' && s[i] <= '9')
    i++;
  return n >= 5 && i == 4 && s[4] == '-';
}

/* Quote every string that would not decode back to itself. */
static void emit_string(yenc *e, const char *s, size_t n, int iskey)
{
  if (!uh_yaml_plain_is_string(s, n) || (n == 2 && !memcmp(s, "<<", 2))
      || looks_like_date(s, n))
    emit_scalar(e, s, n, 0, YAML_DOUBLE_QUOTED_SCALAR_STYLE);
  else if (!iskey && memchr(s, '\n', n))
    emit_scalar(e, s, n, 1, YAML_LITERAL_SCALAR_STYLE);
  else
    emit_scalar(e, s, n, 1, YAML_ANY_SCALAR_STYLE);
}

/* Shortest text that strtod reads back as d, and that resolves as a
 * float (so 1.0 is "1.0", not the integer "1"). */
static void format_float(double d, char *buf, size_t len)
{
  int prec;
  if (isnan(d)) {
    snprintf(buf, len, ".nan");
    return;
  }
  if (isinf(d)) {
    snprintf(buf, len, d > 0 ? ".inf" : "-.inf");
    return;
  }
  for (prec = 15; prec < 17; prec++) {
    snprintf(buf, len, "%.*g", prec, d);
    if (strtod(buf, NULL) == d)
      break;
  }
  if (prec == 17)
    snprintf(buf, len, "%.17g", d);
  if (!strpbrk(buf, ".eEn")) {
    size_t l = strlen(buf);
    if (l + 2 < len)
      buf[l] = '.', buf[l + 1] = '0', buf[l + 2] = '\0';
  }
}

static int key_cmp(const void *pa, const void *pb)
{
  const ykey *a = pa, *b = pb;
  int c;
  if (a->isint != b->isint)
    return a->isint ? -1 : 1;
  if (a->isint)
    return (a->i > b->i) - (a->i < b->i);
  c = memcmp(a->s, b->s, a->n < b->n ? a->n : b->n);
  return c ? c : (a->n > b->n) - (a->n < b->n);
}

/* Collect and sort the keys of the table at t into a userdata pushed on
 * the stack (the table keeps the strings alive). */
static ykey *sorted_keys(yenc *e, int t, size_t *count)
{
  lua_State *L = e->L;
  size_t n = 0;
  ykey *keys;
  lua_pushnil(L);
  while (lua_next(L, t)) {
    lua_pop(L, 1);
    n++;
  }
  keys = lua_newuserdatauv(L, n ? n * sizeof *keys : 1, 0);
  n = 0;
  lua_pushnil(L);
  while (lua_next(L, t)) {
    ykey *k = &keys[n++];
    lua_pop(L, 1);
    k->isint = lua_isinteger(L, -1);
    if (k->isint) {
      k->i = lua_tointeger(L, -1);
    } else if (lua_type(L, -1) == LUA_TSTRING) {
      k->s = lua_tolstring(L, -1, &k->n);
    } else {
      lua_pushfstring(L, "cannot encode a %s key", luaL_typename(L, -1));
      enc_error(e, UH_EINVAL, lua_tostring(L, -1));
    }
  }
  qsort(keys, n, sizeof *keys, key_cmp);
  *count = n;
  return keys;
}

/* The table on top becomes a frame: emit its start event. */
static void open_table(yenc *e)
{
  lua_State *L = e->L;
  int t = lua_gettop(L), j;
  const void *p = lua_topointer(L, t);
  yaml_event_t ev;
  eframe *f;
  for (j = 0; j < e->depth; j++)
    if (e->fr[j].ptr == p)
      enc_error(e, UH_EINVAL, "cannot encode a table that contains itself");
  if (e->depth >= UH_YAML_MAX_DEPTH)
    enc_error(e, UH_ELIMIT, "tables nested too deep");
  luaL_checkstack(L, 8, "yaml nesting");
  f = &e->fr[e->depth];
  f->tidx = t, f->ptr = p, f->i = 0, f->keys = NULL;
  if (uh_isarray(L, t, &f->n)) {
    f->kind = F_SEQ;
    yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1,
                                         YAML_BLOCK_SEQUENCE_STYLE);
  } else {
    f->kind = F_MAP;
    f->keys = sorted_keys(e, t, &f->n);
    yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1,
                                        YAML_BLOCK_MAPPING_STYLE);
  }
  emit(e, &ev);
  e->depth++;
}

/* Emit the value on top; a table stays there as the new frame. */
static void enc_value(yenc *e)
{
  lua_State *L = e->L;
  char buf[64];
  const char *s;
  size_t n;
  switch (lua_type(L, -1)) {
  case LUA_TNIL:
    emit_scalar(e, "null", 4, 1, YAML_PLAIN_SCALAR_STYLE);
    break;
  case LUA_TBOOLEAN:
    s = lua_toboolean(L, -1) ? "true" : "false";
    emit_scalar(e, s, strlen(s), 1, YAML_PLAIN_SCALAR_STYLE);
    break;
  case LUA_TNUMBER:
    if (lua_isinteger(L, -1))
      snprintf(buf, sizeof buf, LUA_INTEGER_FMT, lua_tointeger(L, -1));
    else
      format_float(lua_tonumber(L, -1), buf, sizeof buf);
    emit_scalar(e, buf, strlen(buf), 1, YAML_PLAIN_SCALAR_STYLE);
    break;
  case LUA_TSTRING:
    s = lua_tolstring(L, -1, &n);
    emit_string(e, s, n, 0);
    break;
  case LUA_TTABLE:
    open_table(e);
    return;
  default:
    if (uh_isnull(L, -1)) {
      emit_scalar(e, "null", 4, 1, YAML_PLAIN_SCALAR_STYLE);
      break;
    }
    lua_pushfstring(L, "cannot encode a %s", luaL_typename(L, -1));
    enc_error(e, UH_EINVAL, lua_tostring(L, -1));
  }
  lua_pop(L, 1);
}

/* Emit the value on top and everything under it, without recursion. */
static void enc_tree(yenc *e)
{
  lua_State *L = e->L;
  yaml_event_t ev;
  char buf[32];
  enc_value(e);
  while (e->depth > 0) {
    eframe *f = &e->fr[e->depth - 1];
    if (f->i == f->n) {
      if (f->kind == F_SEQ)
        yaml_sequence_end_event_initialize(&ev);
      else
        yaml_mapping_end_event_initialize(&ev);
      emit(e, &ev);
      lua_settop(L, f->tidx - 1);
      e->depth--;
    } else if (f->kind == F_SEQ) {
      lua_rawgeti(L, f->tidx, (lua_Integer)++f->i);
      enc_value(e);
    } else {
      ykey *k = &f->keys[f->i++];
      if (k->isint) {
        snprintf(buf, sizeof buf, LUA_INTEGER_FMT, k->i);
        emit_scalar(e, buf, strlen(buf), 1, YAML_PLAIN_SCALAR_STYLE);
        lua_pushinteger(L, k->i);
      } else {
        emit_string(e, k->s, k->n, 1);
        lua_pushlstring(L, k->s, k->n);
      }
      lua_rawget(L, f->tidx);
      enc_value(e);
    }
  }
}

static void emit_simple(yenc *e, yaml_event_type_t type, int implicit)
{
  yaml_event_t ev;
  int ok = 0;
  switch (type) {
  case YAML_STREAM_START_EVENT:
    ok = yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING);
    break;
  case YAML_STREAM_END_EVENT:
    ok = yaml_stream_end_event_initialize(&ev);
    break;
  case YAML_DOCUMENT_START_EVENT:
    ok = yaml_document_start_event_initialize(&ev, NULL, NULL, NULL,
                                              implicit);
    break;
  default:
    ok = yaml_document_end_event_initialize(&ev, 1);
    break;
  }
  if (!ok)
    enc_error(e, UH_ENOMEM, "out of memory");
  emit(e, &ev);
}

/* uh_yaml_encode_main(v, all, uh_err*) -> string; raises on values it
 * cannot encode, naming their path. */
int uh_yaml_encode_main(lua_State *L)
{
  yenc *e;
  lua_Integer i, n = 1;
  int all = lua_toboolean(L, 2);
  lua_settop(L, 3);
  if (all)
    luaL_checktype(L, 1, LUA_TTABLE);
  e = lua_newuserdatauv(L, sizeof *e, 0);  /* 4 */
  memset(e, 0, sizeof *e);
  e->L = L;
  e->codep = lua_touserdata(L, 3);
  e->box = lua_newuserdatauv(L, sizeof(yebox), 0);  /* 5 */
  memset(e->box, 0, sizeof(yebox));
  uh_pushcloser(L, "uphook.yaml.emitter", yebox_close);
  lua_setmetatable(L, -2);
  lua_toclose(L, 5);
  if (!yaml_emitter_initialize(&e->box->em))
    enc_error(e, UH_ENOMEM, "out of memory");
  e->box->live = 1;
  yaml_emitter_set_output(&e->box->em, write_out, e->box);
  yaml_emitter_set_unicode(&e->box->em, 1);
  yaml_emitter_set_width(&e->box->em, -1);
  yaml_emitter_set_indent(&e->box->em, 2);
  emit_simple(e, YAML_STREAM_START_EVENT, 0);
  if (all)
    n = (lua_Integer)lua_rawlen(L, 1);
  for (i = 1; i <= n; i++) {
    emit_simple(e, YAML_DOCUMENT_START_EVENT, i == 1);
    if (all)
      lua_rawgeti(L, 1, i);
    else
      lua_pushvalue(L, 1);
    enc_tree(e);
    emit_simple(e, YAML_DOCUMENT_END_EVENT, 1);
  }
  emit_simple(e, YAML_STREAM_END_EVENT, 0);
  if (!yaml_emitter_flush(&e->box->em))
    enc_error(e, UH_ENOMEM, "cannot write output");
  lua_pushlstring(L, e->box->buf ? e->box->buf : "", e->box->len);
  return 1;
}

/* Lua <-> MessagePack (see mpack.h for the mapping and the why). */
#include "mpack.h"
#include "luax.h"
#include "payload.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Preallocation hint cap: tables grow with what is really decoded, not
 * with what a header claims. */
#define MP_HINT_MAX 1024

static int mp_fail(char *err, size_t errlen, const char *fmt, ...)
{
  va_list ap;
  if (err && errlen) {
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
  }
  return -1;
}

/* ---- encoding ---- */

typedef struct {
  lua_State *L;
  msgpack_packer pk;
  msgpack_sbuffer *sb;
  uh_mpack_refs *refs;   /* NULL: every byte into sb */
  /* the tables being packed, from the root down (a cycle is one of them
   * met again below itself); at most UH_MPACK_MAXDEPTH */
  const void *path[UH_MPACK_MAXDEPTH];
  char *err;
  size_t errlen;
} mp_out;

static int pk_value(mp_out *o, int idx, int depth);

#define PK(call) do { if ((call) != 0) \
  return mp_fail(o->err, o->errlen, "msgpack: out of memory"); } while (0)

static int pk_array(mp_out *o, int idx, size_t n, int depth)
{
  size_t i;
  if (n > UINT32_MAX)
    return mp_fail(o->err, o->errlen, "msgpack: array too long");
  PK(msgpack_pack_array(&o->pk, n));
  for (i = 1; i <= n; i++) {
    lua_rawgeti(o->L, idx, (lua_Integer)i);
    if (pk_value(o, -1, depth + 1) != 0)
      return -1;   /* the caller resets the stack */
    lua_pop(o->L, 1);
  }
  return 0;
}

static int pk_map(mp_out *o, int idx, int depth)
{
  lua_State *L = o->L;
  size_t n = 0;
  int t;
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    lua_pop(L, 1);
    n++;
  }
  PK(msgpack_pack_map(&o->pk, n));
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    t = lua_type(L, -2);
    if (t != LUA_TSTRING && t != LUA_TNUMBER && t != LUA_TBOOLEAN)
      return mp_fail(o->err, o->errlen, "msgpack: cannot encode a %s key",
                     lua_typename(L, t));
    if (pk_value(o, -2, depth + 1) != 0 || pk_value(o, -1, depth + 1) != 0)
      return -1;
    lua_pop(L, 1);
  }
  return 0;
}

static int pk_table(mp_out *o, int idx, int depth)
{
  lua_State *L = o->L;
  const void *p;
  size_t n;
  int r, i;
  if (depth >= UH_MPACK_MAXDEPTH)
    return mp_fail(o->err, o->errlen, "msgpack: nested deeper than %d",
                   UH_MPACK_MAXDEPTH);
  if (!lua_checkstack(L, 6))
    return mp_fail(o->err, o->errlen, "msgpack: Lua stack exhausted");
  idx = lua_absindex(L, idx);
  /* Only the path from the root counts: shared subtables are fine. */
  p = lua_topointer(L, idx);
  for (i = 0; i < depth; i++)
    if (o->path[i] == p)
      return mp_fail(o->err, o->errlen, "msgpack: cannot encode a cycle");
  o->path[depth] = p;
  r = uh_isarray(L, idx, &n) ? pk_array(o, idx, n, depth)
                             : pk_map(o, idx, depth);
  return r;
}

/* A payload's bytes into sb, read from its file now. */
static int pk_file_body(mp_out *o, const int *fd, size_t n)
{
  char *buf = malloc(n ? n : 1);
  int r;
  if (!buf)
    return mp_fail(o->err, o->errlen, "msgpack: out of memory");
  if (uh_payload_pread(*fd, buf, n) != 0) {
    free(buf);
    return mp_fail(o->err, o->errlen, "msgpack: a payload file: %s",
                   strerror(errno));
  }
  r = msgpack_pack_str_body(&o->pk, buf, n);
  free(buf);
  return r == 0 ? 0 : mp_fail(o->err, o->errlen, "msgpack: out of memory");
}

/* A str, of the bytes at s or of a payload's file (fd): its body left to
 * the writer (o->refs) when it is big. */
static int pk_str(mp_out *o, const char *s, int *fd, size_t n)
{
  if (n > UINT32_MAX)
    return mp_fail(o->err, o->errlen, "msgpack: string too long");
  PK(msgpack_pack_str(&o->pk, n));
  if (o->refs && (fd || n >= UH_MPACK_REF_MIN)
      && o->refs->n < UH_MPACK_MAX_REFS) {
    uh_mpack_refs *r = o->refs;
    r->ref[r->n].at = o->sb->size;
    r->ref[r->n].p = s;
    r->ref[r->n].fd = fd;
    r->ref[r->n++].n = n;
    return 0;
  }
  if (fd)
    return pk_file_body(o, fd, n);
  PK(msgpack_pack_str_body(&o->pk, s, n));
  return 0;
}

static int pk_value(mp_out *o, int idx, int depth)
{
  lua_State *L = o->L;
  const char *s;
  int *fd;
  size_t n;
  switch (lua_type(L, idx)) {
  case LUA_TNIL:
    PK(msgpack_pack_nil(&o->pk));
    return 0;
  case LUA_TBOOLEAN:
    PK(lua_toboolean(L, idx) ? msgpack_pack_true(&o->pk)
                             : msgpack_pack_false(&o->pk));
    return 0;
  case LUA_TNUMBER:
    if (lua_isinteger(L, idx))
      PK(msgpack_pack_int64(&o->pk, (int64_t)lua_tointeger(L, idx)));
    else
      PK(msgpack_pack_double(&o->pk, (double)lua_tonumber(L, idx)));
    return 0;
  case LUA_TSTRING:
    s = lua_tolstring(L, idx, &n);
    return pk_str(o, s, NULL, n);
  case LUA_TTABLE:
    return pk_table(o, idx, depth);
  case LUA_TUSERDATA:
    if ((fd = uh_payload_of(L, idx, &n)) != NULL)
      return pk_str(o, NULL, fd, n);
    break;
  case LUA_TLIGHTUSERDATA:
    if (uh_isnull(L, idx)) {
      PK(msgpack_pack_nil(&o->pk));
      return 0;
    }
    break;
  default:
    break;
  }
  return mp_fail(o->err, o->errlen, "msgpack: cannot encode a %s",
                 luaL_typename(L, idx));
}

#define SBUF_KEEP (1u << 20)   /* a larger one is freed once used */

static msgpack_sbuffer kept_sbuf;
static int kept_busy;

msgpack_sbuffer *uh_mpack_sbuf_take(msgpack_sbuffer *spare)
{
  if (kept_busy) {
    msgpack_sbuffer_init(spare);
    return spare;
  }
  kept_busy = 1;
  kept_sbuf.size = 0;
  return &kept_sbuf;
}

void uh_mpack_sbuf_give(msgpack_sbuffer *sb)
{
  if (sb != &kept_sbuf) {
    msgpack_sbuffer_destroy(sb);
    return;
  }
  if (kept_sbuf.alloc > SBUF_KEEP) {
    msgpack_sbuffer_destroy(&kept_sbuf);
    msgpack_sbuffer_init(&kept_sbuf);
  }
  kept_busy = 0;
}

int uh_mpack_pack(lua_State *L, int idx, msgpack_sbuffer *sb, char *err,
                  size_t errlen)
{
  return uh_mpack_pack_refs(L, idx, sb, NULL, err, errlen);
}

int uh_mpack_pack_refs(lua_State *L, int idx, msgpack_sbuffer *sb,
                       uh_mpack_refs *refs, char *err, size_t errlen)
{
  mp_out o;
  int top = lua_gettop(L), r;
  idx = lua_absindex(L, idx);
  if (!lua_checkstack(L, 8))
    return mp_fail(err, errlen, "msgpack: Lua stack exhausted");
  o.L = L;
  o.sb = sb;
  o.refs = refs;
  if (refs)
    refs->n = 0;
  o.err = err;
  o.errlen = errlen;
  msgpack_packer_init(&o.pk, sb, msgpack_sbuffer_write);
  r = pk_value(&o, idx, 0);
  lua_settop(L, top);
  return r;
}

/* ---- decoding ---- */

typedef struct {
  lua_State *L;
  const unsigned char *start, *p, *end;
  size_t nodes;         /* values still allowed; SIZE_MAX: unbounded */
  char *err;
  size_t errlen;
} mp_in;

static int up_value(mp_in *in, int depth);

static int up_fail(mp_in *in, const char *what)
{
  return mp_fail(in->err, in->errlen, "msgpack: %s at byte %zu", what,
                 (size_t)(in->p - in->start));
}

static size_t up_left(const mp_in *in)
{
  return (size_t)(in->end - in->p);
}

/* A big-endian unsigned of nbytes (1, 2, 4 or 8). */
static int up_uint(mp_in *in, int nbytes, uint64_t *v)
{
  int i;
  *v = 0;
  if (up_left(in) < (size_t)nbytes)
    return up_fail(in, "truncated input");
  for (i = 0; i < nbytes; i++)
    *v = *v << 8 | *in->p++;
  return 0;
}

static int up_str(mp_in *in, uint64_t n)
{
  if (n > up_left(in))
    return up_fail(in, "string longer than its input");
  lua_pushlstring(in->L, (const char *)in->p, (size_t)n);
  in->p += n;
  return 0;
}

static int up_array(mp_in *in, uint64_t n, int depth)
{
  uint64_t i;
  /* Every element takes at least one byte. */
  if (n > up_left(in))
    return up_fail(in, "array longer than its input");
  if (depth >= UH_MPACK_MAXDEPTH)
    return up_fail(in, "nesting too deep");
  if (!lua_checkstack(in->L, 4))
    return up_fail(in, "Lua stack exhausted");
  lua_createtable(in->L, n < MP_HINT_MAX ? (int)n : MP_HINT_MAX, 0);
  for (i = 1; i <= n; i++) {
    if (up_value(in, depth + 1) != 0)
      return -1;
    lua_rawseti(in->L, -2, (lua_Integer)i);
  }
  uh_markarray(in->L, -1);
  return 0;
}

static int up_key_ok(lua_State *L)
{
  int t = lua_type(L, -1);
  if (t == LUA_TNUMBER)
    return !isnan((double)lua_tonumber(L, -1));
  return t == LUA_TSTRING || t == LUA_TBOOLEAN;
}

static int up_map(mp_in *in, uint64_t n, int depth)
{
  uint64_t i;
  if (n > up_left(in) / 2)
    return up_fail(in, "map longer than its input");
  if (depth >= UH_MPACK_MAXDEPTH)
    return up_fail(in, "nesting too deep");
  if (!lua_checkstack(in->L, 5))
    return up_fail(in, "Lua stack exhausted");
  lua_createtable(in->L, 0, n < MP_HINT_MAX ? (int)n : MP_HINT_MAX);
  for (i = 0; i < n; i++) {
    if (up_value(in, depth + 1) != 0)
      return -1;
    if (!up_key_ok(in->L))
      return up_fail(in, "map key is not a string, number or boolean");
    if (up_value(in, depth + 1) != 0)
      return -1;
    lua_rawset(in->L, -3);
  }
  return 0;
}

static int up_float(mp_in *in, int nbytes)
{
  uint64_t v;
  uint32_t v32;
  float f;
  double d;
  if (up_uint(in, nbytes, &v) != 0)
    return -1;
  if (nbytes == 4) {
    v32 = (uint32_t)v;
    memcpy(&f, &v32, sizeof f);
    lua_pushnumber(in->L, (lua_Number)f);
  } else {
    memcpy(&d, &v, sizeof d);
    lua_pushnumber(in->L, (lua_Number)d);
  }
  return 0;
}

static int up_int(mp_in *in, unsigned char b)
{
  static const int width[] = {1, 2, 4, 8};
  int n = width[(b - 0xcc) & 3], sign = b >= 0xd0;
  uint64_t v;
  if (up_uint(in, n, &v) != 0)
    return -1;
  if (sign && n < 8 && (v >> (8 * n - 1)))
    v |= ~(uint64_t)0 << (8 * n);   /* sign-extend */
  if (!sign && v > INT64_MAX)
    return up_fail(in, "integer out of range");
  lua_pushinteger(in->L, (lua_Integer)(int64_t)v);
  return 0;
}

/* The length-prefixed kinds: 0xc4.. bin, 0xd9.. str, 0xdc.. containers. */
static int up_sized(mp_in *in, unsigned char b, int depth)
{
  uint64_t n = 0;
  int w;
  switch (b) {
  case 0xc4: case 0xd9: w = 1; break;
  case 0xc5: case 0xda: case 0xdc: case 0xde: w = 2; break;
  default: w = 4; break;
  }
  if (up_uint(in, w, &n) != 0)
    return -1;
  if (b == 0xdc || b == 0xdd)
    return up_array(in, n, depth);
  if (b == 0xde || b == 0xdf)
    return up_map(in, n, depth);
  return up_str(in, n);
}

static int up_value(mp_in *in, int depth)
{
  unsigned char b;
  if (up_left(in) < 1)
    return up_fail(in, "truncated input");
  if (in->nodes == 0)
    return up_fail(in, "more values than the decoder allows");
  in->nodes--;
  b = *in->p++;
  if (b <= 0x7f || b >= 0xe0)
    lua_pushinteger(in->L, (lua_Integer)(signed char)b);
  else if ((b & 0xe0) == 0xa0)
    return up_str(in, b & 0x1f);
  else if ((b & 0xf0) == 0x90)
    return up_array(in, b & 0x0f, depth);
  else if ((b & 0xf0) == 0x80)
    return up_map(in, b & 0x0f, depth);
  else if (b == 0xc0)
    uh_pushnull(in->L);
  else if (b == 0xc2 || b == 0xc3)
    lua_pushboolean(in->L, b == 0xc3);
  else if (b == 0xca || b == 0xcb)
    return up_float(in, b == 0xca ? 4 : 8);
  else if (b >= 0xcc && b <= 0xd3)
    return up_int(in, b);
  else if ((b >= 0xc4 && b <= 0xc6) || (b >= 0xd9 && b <= 0xdf))
    return up_sized(in, b, depth);
  else {
    in->p--;
    return up_fail(in, "unsupported type byte");
  }
  return 0;
}

int uh_mpack_unpack_push(lua_State *L, const char *buf, size_t len,
                         char *err, size_t errlen)
{
  return uh_mpack_unpack_push_max(L, buf, len, 0, err, errlen);
}

int uh_mpack_unpack_push_max(lua_State *L, const char *buf, size_t len,
                             size_t max_nodes, char *err, size_t errlen)
{
  mp_in in;
  int top = lua_gettop(L);
  if (!lua_checkstack(L, 4))
    return mp_fail(err, errlen, "msgpack: Lua stack exhausted");
  in.L = L;
  in.start = in.p = (const unsigned char *)buf;
  in.end = in.start + len;
  in.nodes = max_nodes ? max_nodes : SIZE_MAX;
  in.err = err;
  in.errlen = errlen;
  if (up_value(&in, 0) != 0) {
    lua_settop(L, top);
    return -1;
  }
  if (in.p != in.end) {
    lua_settop(L, top);
    return up_fail(&in, "trailing bytes");
  }
  return 0;
}

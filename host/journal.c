/* The upgrade journal (layout and tail rules in journal.h).
 * Lua family uphook.c.journal: open(path) -> handle with :append(record)
 * and :close(); replay(path) -> records, torn; remove(path). */
#include "journal.h"
#include "hash.h"
#include "luax.h"
#include "mpack.h"
#include "osutil.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define JOURNAL_MT "uphook.journal"

typedef struct jhandle {
  int fd;
  int broken;      /* a failed write could not be undone */
  off_t size;      /* end of the last durable record */
} jhandle;

/* ---- format ---- */

static void put32(unsigned char *p, uint32_t v)
{
  p[0] = (unsigned char)(v >> 24);
  p[1] = (unsigned char)(v >> 16);
  p[2] = (unsigned char)(v >> 8);
  p[3] = (unsigned char)v;
}

static uint32_t get32(const unsigned char *p)
{
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 |
         (uint32_t)p[3];
}

void uh_journal_make_header(unsigned char out[UH_JOURNAL_HDRLEN])
{
  memcpy(out, UH_JOURNAL_MAGIC, 8);
  put32(out + 8, UH_JOURNAL_VERSION);
  put32(out + 12, 0);
}

int uh_journal_header(const unsigned char *buf, size_t len,
                      uint32_t *version)
{
  unsigned char want[UH_JOURNAL_HDRLEN];
  uint32_t v;
  uh_journal_make_header(want);
  if (len < UH_JOURNAL_HDRLEN)
    return memcmp(buf, want, len) == 0 ? 1
           : memcmp(buf, want, len < 8 ? len : 8) == 0 ? -2 : -1;
  if (memcmp(buf, want, 8) != 0)
    return -1;
  v = get32(buf + 8);
  if (version)
    *version = v;
  return v >= UH_JOURNAL_OLDEST && v <= UH_JOURNAL_VERSION ? 0 : -2;
}

static uint32_t check32(const void *payload, size_t n)
{
  unsigned char d[32];
  if (uh_sha256_raw(payload, n, d) != 0)
    return 0;   /* cannot happen short of OOM; the record then fails */
  return get32(d);
}

void uh_journal_frame(unsigned char out[8], const void *payload, size_t n)
{
  put32(out, (uint32_t)n);
  put32(out + 4, check32(payload, n));
}

/* A bad record at s->off: the torn tail when only zeros follow it. */
static int bad_record(const uh_jscan *s, size_t rec_end)
{
  size_t i;
  for (i = rec_end; i < s->len; i++)
    if (s->buf[i] != 0)
      return UH_JCORRUPT;
  return UH_JTORN;
}

/* ...unless a whole valid record follows: then the length itself was
 * damaged.  Bounded work; past the bound, assume the worst. */
static int resyncs(const uh_jscan *s)
{
  size_t o, plen, budget = 64u << 20;
  const unsigned char *p;
  for (o = s->off + 1; o + 8 <= s->len; o++) {
    p = s->buf + o;
    plen = get32(p);
    if (plen > s->len - o - 8)
      continue;
    if (plen > budget)
      return 1;
    budget -= plen;
    if (get32(p + 4) == check32(p + 8, plen) && plen > 0)
      return 1;
  }
  return 0;
}

int uh_journal_next(uh_jscan *s, const unsigned char **payload, size_t *n)
{
  size_t left = s->len - s->off, plen;
  const unsigned char *p = s->buf + s->off;
  if (left == 0)
    return UH_JEND;
  if (left < 8)
    return UH_JTORN;
  plen = get32(p);
  if (plen > left - 8)   /* runs past EOF: cut short by a crash... */
    return resyncs(s) ? UH_JCORRUPT : UH_JTORN;
  if (plen > UH_JOURNAL_MAXREC || get32(p + 4) != check32(p + 8, plen))
    return bad_record(s, s->off + 8 + plen);
  *payload = p + 8;
  *n = plen;
  s->off += 8 + plen;
  return UH_JREC;
}

/* ---- file helpers ---- */

/* Read the whole file into a malloc'd buffer (NULL on error, errno). */
static unsigned char *j_load(int fd, size_t *len)
{
  struct stat st;
  unsigned char *buf;
  size_t got = 0;
  ssize_t r;
  if (fstat(fd, &st) != 0)
    return NULL;
  if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size > UH_JOURNAL_MAXFILE) {
    errno = S_ISREG(st.st_mode) ? EFBIG : EINVAL;
    return NULL;
  }
  buf = malloc((size_t)st.st_size + 1);
  if (!buf)
    return NULL;
  while (got < (size_t)st.st_size) {
    r = pread(fd, buf + got, (size_t)st.st_size - got, (off_t)got);
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0) {
      free(buf);
      return NULL;
    }
    if (r == 0)
      break;
    got += (size_t)r;
  }
  *len = got;
  return buf;
}

static int j_fsync_dir(const char *path)
{
  const char *slash = strrchr(path, '/');
  char dir[PATH_MAX];
  size_t n = slash == path ? 1 : (size_t)(slash - path);
  int fd, r, saved;
  if (n >= sizeof dir) {
    errno = ENAMETOOLONG;
    return -1;
  }
  memcpy(dir, path, n);
  dir[n] = '\0';
  fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  r = fsync(fd);
  saved = errno;
  close(fd);
  errno = saved;
  return r;
}

static const char *j_checkpath(lua_State *L, int idx)
{
  size_t n;
  const char *p = luaL_checklstring(L, idx, &n);
  luaL_argcheck(L, p[0] == '/' && strlen(p) == n && p[n - 1] != '/', idx,
                "absolute file path expected");
  return p;
}

static int j_fail(lua_State *L, const char *path, const char *what)
{
  int e = errno;
  lua_pushnil(L);
  lua_pushfstring(L, "journal %s: %s: %s", path, what, strerror(e));
  return 2;
}

/* ---- open ---- */

/* Make the file at fd a valid journal to append to: write the header of
 * a new (or torn-at-birth) file, cut a torn tail.  0, or -1 with a
 * message in msg (errno set for system errors, else 0). */
static int j_prepare(int fd, const char *path, off_t *size, const char **msg)
{
  unsigned char hdr[UH_JOURNAL_HDRLEN], *buf;
  const unsigned char *pl;
  uh_jscan s;
  size_t len = 0, n;
  int h, r;

  uint32_t version = UH_JOURNAL_VERSION;
  buf = j_load(fd, &len);
  if (!buf)
    return (*msg = "read", -1);
  h = uh_journal_header(buf, len, &version);
  if (h == 0 && version != UH_JOURNAL_VERSION)
    h = -2;   /* read, recover, but never append to an older journal */
  s.buf = buf;
  s.len = len;
  s.off = UH_JOURNAL_HDRLEN;
  r = h == 0 ? UH_JREC : UH_JEND;
  while (r == UH_JREC)
    r = uh_journal_next(&s, &pl, &n);
  free(buf);
  errno = 0;
  if (h < 0)
    return (*msg = h == -1 ? "not an uphook journal (wrong magic)"
                           : "unsupported journal version", -1);
  if (r == UH_JCORRUPT)
    return (*msg = "corrupt record before the end", -1);
  if (h == 1) {   /* new, or the header itself was torn */
    uh_journal_make_header(hdr);
    if (ftruncate(fd, 0) != 0 || uh_write_all(fd, hdr, sizeof hdr) != 0 ||
        fdatasync(fd) != 0 || j_fsync_dir(path) != 0)
      return (*msg = "create", -1);
    *size = UH_JOURNAL_HDRLEN;
    return 0;
  }
  if (r == UH_JTORN && (ftruncate(fd, (off_t)s.off) != 0 || fsync(fd) != 0))
    return (*msg = "cut torn tail", -1);
  *size = (off_t)s.off;
  return 0;
}

static int journal_open(lua_State *L)
{
  const char *path = j_checkpath(L, 1);
  const char *msg = NULL;
  jhandle *j;

  lua_settop(L, 1);
  j = lua_newuserdatauv(L, sizeof *j, 1);
  j->fd = -1;
  j->broken = 0;
  j->size = 0;
  luaL_setmetatable(L, JOURNAL_MT);
  lua_pushvalue(L, 1);
  lua_setiuservalue(L, -2, 1);   /* the path, for messages */
  j->fd = open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW,
               0600);
  if (j->fd < 0)
    return j_fail(L, path, "open");
  /* One writer per journal; released when the fd closes. */
  if (flock(j->fd, LOCK_EX | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK)
      errno = EBUSY;
    return j_fail(L, path, "lock");
  }
  if (j_prepare(j->fd, path, &j->size, &msg) != 0) {
    int e = errno;
    close(j->fd);
    j->fd = -1;
    lua_pushnil(L);
    if (e)
      lua_pushfstring(L, "journal %s: %s: %s", path, msg, strerror(e));
    else
      lua_pushfstring(L, "journal %s: %s", path, msg);
    return 2;
  }
  return 1;
}

/* ---- handle methods ---- */

static jhandle *j_check(lua_State *L)
{
  jhandle *j = luaL_checkudata(L, 1, JOURNAL_MT);
  if (j->fd < 0)
    luaL_error(L, "journal is closed");
  return j;
}

static const char *j_path(lua_State *L)
{
  lua_getiuservalue(L, 1, 1);
  return lua_tostring(L, -1);
}

/* Pack the record at idx behind 8 framing bytes at the end of sb, then
 * fill those in. */
static int j_frame(lua_State *L, int idx, msgpack_sbuffer *sb, char *err,
                   size_t n)
{
  static const char zero[8];
  size_t at = sb->size;
  unsigned char *p;
  if (msgpack_sbuffer_write(sb, zero, 8) != 0 ||
      uh_mpack_pack(L, idx, sb, err, n) != 0)
    return -1;
  if (sb->size - at - 8 > UH_JOURNAL_MAXREC) {
    memcpy(err, "journal record too large", 25);
    return -1;
  }
  p = (unsigned char *)sb->data + at;
  uh_journal_frame(p, p + 8, sb->size - at - 8);
  return 0;
}

/* h:append(record, ...): one or more records, written together and made
 * durable by one fdatasync (the records of changes sent at once). */
static int journal_append(lua_State *L)
{
  jhandle *j = j_check(L);
  msgpack_sbuffer spare, *sb;
  char err[160];
  int saved, i, top = lua_gettop(L);

  luaL_checktype(L, 2, LUA_TTABLE);
  for (i = 3; i <= top; i++)
    luaL_checktype(L, i, LUA_TTABLE);
  if (j->broken)
    return luaL_error(L, "journal %s: unusable after a failed write",
                      j_path(L));
  err[0] = '\0';
  sb = uh_mpack_sbuf_take(&spare);
  for (i = 2; i <= top; i++)
    if (j_frame(L, i, sb, err, sizeof err) != 0) {
      uh_mpack_sbuf_give(sb);
      return luaL_error(L, "journal: %s", err[0] ? err : "out of memory");
    }
  if (uh_write_all(j->fd, sb->data, sb->size) != 0
      || fdatasync(j->fd) != 0) {
    saved = errno;
    /* Undo a partial record so the next append follows good data; after
     * a failed fdatasync the page cache cannot be trusted at all. */
    if (ftruncate(j->fd, j->size) != 0 || fdatasync(j->fd) != 0)
      j->broken = 1;
    uh_mpack_sbuf_give(sb);
    errno = saved;
    return j_fail(L, j_path(L), "append");
  }
  j->size += (off_t)sb->size;
  uh_mpack_sbuf_give(sb);
  lua_pushboolean(L, 1);
  return 1;
}

static int journal_close(lua_State *L)
{
  jhandle *j = luaL_checkudata(L, 1, JOURNAL_MT);
  if (j->fd >= 0)
    close(j->fd);
  j->fd = -1;
  lua_pushboolean(L, 1);
  return 1;
}

static int journal_tostring(lua_State *L)
{
  jhandle *j = luaL_checkudata(L, 1, JOURNAL_MT);
  lua_pushfstring(L, "journal (%s%s)", j_path(L), j->fd < 0 ? ", closed" : "");
  return 1;
}

/* ---- replay, remove ---- */

static int j_corrupt(lua_State *L, const char *path, const char *what)
{
  lua_pushnil(L);
  lua_pushfstring(L, "journal %s: %s", path, what);
  return 2;
}

/* Read path into a fresh userdata (no Lua call while the fd is open, so
 * nothing can raise and leak it).  1 done, 0 absent, -1 error. */
static int j_read(lua_State *L, const char *path, const unsigned char **buf,
                  size_t *len)
{
  struct stat st;
  unsigned char *p;
  ssize_t r = 0;
  size_t got = 0;
  int fd, saved;

  if (stat(path, &st) != 0)
    return errno == ENOENT ? 0 : -1;
  if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size > UH_JOURNAL_MAXFILE) {
    errno = S_ISREG(st.st_mode) ? EFBIG : EINVAL;
    return -1;
  }
  p = lua_newuserdatauv(L, (size_t)st.st_size + 1, 0);
  fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
  if (fd < 0)
    return errno == ENOENT ? 0 : -1;
  while (got < (size_t)st.st_size) {
    r = pread(fd, p + got, (size_t)st.st_size - got, (off_t)got);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      break;
    got += (size_t)r;
  }
  saved = errno;
  close(fd);
  errno = saved;
  if (r < 0)
    return -1;
  *buf = p;
  *len = got;
  return 1;
}

/* replay(path) -> records, torn, version | nil when absent
 * | nil, message (an unknown version is named) */
static int journal_replay(lua_State *L)
{
  const char *path = j_checkpath(L, 1);
  const unsigned char *buf = NULL, *pl;
  char err[160];
  size_t len = 0, n;
  uh_jscan s;
  uint32_t version = UH_JOURNAL_VERSION;
  int h, r, i = 0;

  lua_settop(L, 1);
  r = j_read(L, path, &buf, &len);
  if (r <= 0) {
    if (r == 0)
      return (lua_pushnil(L), 1);
    return j_fail(L, path, "read");
  }
  h = uh_journal_header(buf, len, &version);
  if (h == -2) {
    lua_pushnil(L);
    lua_pushfstring(L, "journal %s: unsupported journal version %d (this "
                    "uphook reads versions %d to %d)", path, (int)version,
                    (int)UH_JOURNAL_OLDEST, (int)UH_JOURNAL_VERSION);
    return 2;
  }
  if (h < 0)
    return j_corrupt(L, path, "not an uphook journal (wrong magic)");
  lua_newtable(L);
  uh_markarray(L, -1);
  s.buf = buf;
  s.len = len;
  s.off = UH_JOURNAL_HDRLEN;
  r = h == 0 ? UH_JREC : UH_JTORN;   /* a torn header: no records */
  if (h == 1 && len == 0)
    r = UH_JEND;
  while (h == 0 && (r = uh_journal_next(&s, &pl, &n)) == UH_JREC) {
    if (uh_mpack_unpack_push(L, (const char *)pl, n, err, sizeof err) != 0)
      return j_corrupt(L, path, err);
    lua_rawseti(L, -2, ++i);
  }
  if (r == UH_JCORRUPT)
    return j_corrupt(L, path, "corrupt record before the end");
  lua_pushboolean(L, r == UH_JTORN);
  lua_pushinteger(L, (lua_Integer)version);
  return 3;
}

static int journal_remove(lua_State *L)
{
  const char *path = j_checkpath(L, 1);
  if (unlink(path) != 0) {
    if (errno == ENOENT)
      return (lua_pushboolean(L, 0), 1);
    return j_fail(L, path, "remove");
  }
  if (j_fsync_dir(path) != 0)
    return j_fail(L, path, "fsync directory");
  lua_pushboolean(L, 1);
  return 1;
}

static const luaL_Reg journal_methods[] = {
  {"__close", journal_close},
  {"__gc", journal_close},
  {"__tostring", journal_tostring},
  {"append", journal_append},
  {"close", journal_close},
  {NULL, NULL}
};

static const luaL_Reg journal_funcs[] = {
  {"open", journal_open},
  {"remove", journal_remove},
  {"replay", journal_replay},
  {NULL, NULL}
};

int luaopen_uphook_journal(lua_State *L)
{
  uh_newclass(L, JOURNAL_MT, journal_methods);
  luaL_newlib(L, journal_funcs);
  return 1;
}

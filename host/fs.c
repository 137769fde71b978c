/* Confined file operations for the parent: uphook.c.fs.
 *
 * Every function takes an absolute root (trusted, may itself be a
 * symlink, e.g. /var/snap/microk8s/current) and a path relative to it
 * (from the hook, hostile).  Lexical escapes (`..`, absolute paths) and
 * symlinks leading out of the root raise; an absent file is a normal
 * result; other failures of the world return nil, message.
 *
 * Writes are atomic: a temporary file in the target's directory, fsync,
 * renameat over the name, fsync of the directory.  The final name is
 * replaced, never written through, so a symlink there is replaced too.
 *
 * The fds and the temporary file of one call live in an fs_op userdata
 * marked to-be-closed, so an error raised halfway (even out of memory)
 * still closes them and removes the temporary file.
 */
#include "fs.h"
#include "hash.h"
#include "mpack.h"
#include "osutil.h"
#include "payload.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/openat2.h>

#define FS_MAXREAD (64 << 20)     /* config files, not payloads */
#define FS_OP_MT "uphook.fs.op"

int uh_fs_walk_only;

/* ---- resolution ---- */

/* Lexical check: UH_OK, UH_EESCAPE (absolute, or a `..` component) or
 * UH_EINVAL (empty, NUL byte, too long, or not naming a file: a trailing
 * `/` or a last component `.`). */
static uh_err check_rel(const char *rel, size_t len)
{
  const char *p = rel, *q, *end = rel + len;
  if (len == 0 || len >= PATH_MAX || memchr(rel, '\0', len))
    return UH_EINVAL;
  if (rel[0] == '/')
    return UH_EESCAPE;
  for (;;) {
    q = memchr(p, '/', (size_t)(end - p));
    if (!q)
      q = end;
    if (q - p == 2 && p[0] == '.' && p[1] == '.')
      return UH_EESCAPE;
    if (q == end)
      break;
    p = q + 1;
  }
  /* The last component must name a file: not "", not ".". */
  if (p == end || (end - p == 1 && *p == '.'))
    return UH_EINVAL;
  return UH_OK;
}

/* After an O_NOFOLLOW open failed, tell a symlink (ELOOP) apart. */
static void walk_why(int dirfd, const char *name)
{
  struct stat st;
  int saved = errno;
  if ((saved == ELOOP || saved == ENOTDIR) &&
      fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
      S_ISLNK(st.st_mode))
    saved = ELOOP;
  errno = saved;
}

/* The fallback: one component at a time, no symlink followed at all. */
static int walk_open(int rootfd, const char *rel, int flags, mode_t mode)
{
  char buf[PATH_MAX], *p = buf, *slash;
  size_t n = strlen(rel);
  struct stat st;
  int cur, next, saved;

  if (n >= sizeof buf) {
    errno = ENAMETOOLONG;
    return -1;
  }
  memcpy(buf, rel, n + 1);
  cur = openat(rootfd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (cur < 0)
    return -1;
  while ((slash = strchr(p, '/')) != NULL) {
    *slash = '\0';
    if (*p && strcmp(p, ".") != 0) {
      next = openat(cur, p, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
      if (next < 0) {
        walk_why(cur, p);
        goto fail;
      }
      close(cur);
      cur = next;
    }
    p = slash + 1;
  }
  if (!*p)
    p = ".";
  next = openat(cur, p, flags | O_NOFOLLOW | O_CLOEXEC, mode);
  if (next < 0) {
    walk_why(cur, p);
    goto fail;
  }
  /* O_PATH|O_NOFOLLOW opens the link itself: refuse it as well. */
  if (fstat(next, &st) == 0 && S_ISLNK(st.st_mode)) {
    close(next);
    errno = ELOOP;
    goto fail;
  }
  close(cur);
  return next;
fail:
  saved = errno;
  close(cur);
  errno = saved;
  return -1;
}

/* Open rel (already checked) beneath the directory rootfd.  Returns an fd
 * or -1 with errno; EXDEV means the path leads out of the root, ELOOP a
 * refused symlink (a magic link, a loop, or any symlink in the walk). */
static int open_beneath(int rootfd, const char *rel, int flags, mode_t mode)
{
  struct open_how how;
  long r = -1;
  int tries;

  if (!uh_fs_walk_only) {
    memset(&how, 0, sizeof how);
    how.flags = (uint64_t)(flags | O_CLOEXEC);
    if ((flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE)
      how.mode = mode;
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
    /* EAGAIN: a concurrent rename raced the lookup; try again. */
    for (tries = 0; tries < 8; tries++) {
      r = syscall(SYS_openat2, rootfd, rel, &how, sizeof how);
      if (r >= 0 || errno != EAGAIN)
        break;
    }
    if (r >= 0)
      return (int)r;
    if (errno != ENOSYS)
      return -1;
    uh_fs_walk_only = 1;
  }
  return walk_open(rootfd, rel, flags, mode);
}

/* ---- one operation's state ---- */

typedef struct fs_op {
  const char *root, *rel, *verb;
  const char *other;     /* a path outside the root that failed, or NULL */
  const char *base;      /* last component of rel */
  const char *step;      /* what failed, for the message */
  int err;               /* errno of the failure */
  int refuse;            /* EXDEV or ELOOP: raise instead of returning */
  int rootfd, dirfd, fd, srcfd, destfd;
  int pinfd;             /* the root's held descriptor (fs.pin), or -1 */
  int tmpdir;            /* dirfd holding tmp (not owned) */
  char tmp[32];          /* live temporary name, "" when none */
  char dir[PATH_MAX];    /* rel without its last component, or "." */
} fs_op;

static int fsop_close(lua_State *L)
{
  fs_op *op = luaL_checkudata(L, 1, FS_OP_MT);
  int *fds[] = {&op->fd, &op->srcfd, &op->dirfd, &op->destfd, &op->rootfd};
  size_t i;
  if (op->tmp[0] && op->tmpdir >= 0)
    unlinkat(op->tmpdir, op->tmp, 0);
  op->tmp[0] = '\0';
  for (i = 0; i < sizeof fds / sizeof fds[0]; i++) {
    if (*fds[i] >= 0)
      close(*fds[i]);
    *fds[i] = -1;
  }
  return 0;
}

/* Check root and rel at the given argument indexes, push the op. */
static fs_op *fs_begin(lua_State *L, int iroot, int irel, const char *verb)
{
  size_t rlen, n;
  const char *root = luaL_checklstring(L, iroot, &rlen);
  const char *rel = luaL_checklstring(L, irel, &n);
  const char *slash;
  fs_op *op;
  uh_err e;

  luaL_argcheck(L, root[0] == '/' && strlen(root) == rlen, iroot,
                "absolute root directory expected");
  e = check_rel(rel, n);
  if (e == UH_EESCAPE)
    luaL_error(L, "path leaves its root: %s (root %s)", rel, root);
  if (e != UH_OK)
    luaL_error(L, "invalid path '%s' (root %s): a relative file name is "
               "expected", rel, root);
  op = lua_newuserdatauv(L, sizeof *op, 0);
  memset(op, 0, sizeof *op);
  op->rootfd = op->dirfd = op->fd = op->srcfd = op->destfd = -1;
  op->tmpdir = -1;
  op->tmp[0] = '\0';
  op->pinfd = uh_fs_pinned(L, root);
  op->root = root;
  op->rel = rel;
  op->verb = verb;
  slash = strrchr(rel, '/');
  op->base = slash ? slash + 1 : rel;
  if (slash) {
    memcpy(op->dir, rel, (size_t)(slash - rel));
    op->dir[slash - rel] = '\0';
  } else {
    memcpy(op->dir, ".", 2);
  }
  luaL_setmetatable(L, FS_OP_MT);
  lua_toclose(L, -1);
  return op;
}

static int fs_fail(fs_op *op, const char *step)
{
  op->err = errno;
  op->step = step;
  return -1;
}

/* Report the recorded failure: raise for an escape, else nil, message. */
static int fs_error(lua_State *L, fs_op *op)
{
  size_t n = strlen(op->root);
  const char *sep = n && op->root[n - 1] == '/' ? "" : "/";
  if (op->refuse == EXDEV)
    return luaL_error(L, "path leaves its root: %s (root %s)", op->rel,
                      op->root);
  if (op->refuse)
    return luaL_error(L, "symlink not followed: %s (root %s)", op->rel,
                      op->root);
  lua_pushnil(L);
  if (op->other)
    lua_pushfstring(L, "cannot %s %s%s%s: %s: %s (%s)", op->verb, op->root,
                    sep, op->rel, op->other, strerror(op->err), op->step);
  else
    lua_pushfstring(L, "cannot %s %s%s%s: %s (%s)", op->verb, op->root, sep,
                    op->rel, strerror(op->err), op->step);
  return 2;
}

static int fs_open(fs_op *op, const char *rel, int flags)
{
  int fd = open_beneath(op->rootfd, rel, flags, 0);
  if (fd < 0 && (errno == EXDEV || errno == ELOOP))
    op->refuse = errno;
  return fd;
}

static int fs_root(fs_op *op)
{
  op->rootfd = op->pinfd >= 0 ? fcntl(op->pinfd, F_DUPFD_CLOEXEC, 0)
               : open(op->root, O_PATH | O_DIRECTORY | O_CLOEXEC);
  return op->rootfd < 0 ? fs_fail(op, "open root") : 0;
}

/* Mutating calls check where the final name leads before touching it. */
static int fs_check_final(fs_op *op)
{
  int fd = fs_open(op, op->rel, O_PATH);
  if (fd >= 0)
    close(fd);
  else if (op->refuse)
    return fs_fail(op, "resolve");
  return 0;
}

/* Open (or create) the directory of rel, one component at a time so that
 * each new directory is itself resolved beneath the root. */
static int fs_parent(fs_op *op, int create)
{
  char *p, *slash;
  int parent, fd;

  op->dirfd = fs_open(op, op->dir, O_RDONLY | O_DIRECTORY);
  if (op->dirfd >= 0)
    return 0;
  if (!create || errno != ENOENT)
    return fs_fail(op, "open directory");
  parent = fs_open(op, ".", O_RDONLY | O_DIRECTORY);
  if (parent < 0)
    return fs_fail(op, "open root");
  for (p = op->dir;; p = slash + 1) {
    slash = strchr(p, '/');
    if (slash)
      *slash = '\0';
    fd = -2;   /* nothing to do for an empty or "." component */
    if (*p && strcmp(p, ".") != 0) {
      fd = fs_open(op, op->dir, O_RDONLY | O_DIRECTORY);
      if (fd < 0 && errno == ENOENT &&
          (mkdirat(parent, p, 0755) == 0 || errno == EEXIST)) {
        (void)fsync(parent);   /* the new entry must survive a crash */
        fd = fs_open(op, op->dir, O_RDONLY | O_DIRECTORY);
      }
      if (fd < 0)
        fs_fail(op, "create directory");
    }
    if (slash)
      *slash = '/';
    if (fd == -1) {
      close(parent);
      return -1;
    }
    if (fd >= 0) {
      close(parent);
      parent = fd;
    }
    if (!slash)
      break;
  }
  op->dirfd = parent;
  return 0;
}

/* ---- temporary files, copying, commit ---- */

/* A fresh random name ".uphook-<16 hex>" in op->tmp. */
static void fs_tmpname(fs_op *op)
{
  static unsigned long counter;
  unsigned char rnd[8];
  unsigned long x;
  size_t i;
  if (getrandom(rnd, sizeof rnd, GRND_NONBLOCK) != (ssize_t)sizeof rnd) {
    x = (unsigned long)getpid() ^ (unsigned long)time(NULL) ^ ++counter << 20;
    for (i = 0; i < sizeof rnd; i++, x >>= 8)
      rnd[i] = (unsigned char)x;
  }
  memcpy(op->tmp, ".uphook-", 8);
  uh_hex(rnd, sizeof rnd, op->tmp + 8);
}

static int fs_tmpopen(fs_op *op, int dirfd)
{
  int i;
  for (i = 0; i < 16; i++) {
    fs_tmpname(op);
    op->fd = openat(dirfd, op->tmp,
                    O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (op->fd >= 0) {
      op->tmpdir = dirfd;
      return 0;
    }
    if (errno != EEXIST)
      break;
  }
  op->tmp[0] = '\0';
  return fs_fail(op, "create temporary file");
}

/* Make op->fd durable with its mode, move it over name in dirfd.  A
 * file it replaces keeps its owner and group (the mode is the caller's:
 * the engine passes the old one unless the hook gives one). */
static int fs_commit(fs_op *op, int dirfd, const char *name, mode_t mode)
{
  struct stat old;
  int r;
  if (fstatat(dirfd, name, &old, AT_SYMLINK_NOFOLLOW) == 0 &&
      S_ISREG(old.st_mode) && fchown(op->fd, old.st_uid, old.st_gid) != 0)
    return fs_fail(op, "chown");
  if (fchmod(op->fd, mode) != 0)
    return fs_fail(op, "chmod");
  if (fsync(op->fd) != 0)
    return fs_fail(op, "fsync");
  r = close(op->fd);
  op->fd = -1;
  if (r != 0)
    return fs_fail(op, "close");
  if (renameat(dirfd, op->tmp, dirfd, name) != 0)
    return fs_fail(op, "rename");
  op->tmp[0] = '\0';
  if (fsync(dirfd) != 0)
    return fs_fail(op, "fsync directory");
  return 0;
}

/* An octal mode string, "0644" by default.  Only permission bits: a hook
 * has no business installing setuid files. */
static mode_t fs_checkmode(lua_State *L, int idx)
{
  const char *s = "0644";
  size_t n, i;
  mode_t m = 0;
  if (!lua_isnoneornil(L, idx)) {
    luaL_argexpected(L, lua_type(L, idx) == LUA_TSTRING, idx, "octal string");
    s = lua_tolstring(L, idx, &n);
  }
  n = strlen(s);
  luaL_argcheck(L, n == 3 || n == 4, idx, "octal mode string expected");
  for (i = 0; i < n; i++) {
    luaL_argcheck(L, s[i] >= '0' && s[i] <= '7', idx,
                  "octal mode string expected");
    m = m * 8 + (mode_t)(s[i] - '0');
  }
  luaL_argcheck(L, m <= 0777, idx, "only permission bits (0777) allowed");
  return m;
}

static const char *fs_checkabs(lua_State *L, int idx)
{
  size_t n;
  const char *p = luaL_checklstring(L, idx, &n);
  luaL_argcheck(L, p[0] == '/' && strlen(p) == n && p[n - 1] != '/', idx,
                "absolute file path expected");
  return p;
}

/* Open a regular file for reading; ENOENT is left for the caller. */
static int fs_openreg(fs_op *op, struct stat *st)
{
  op->srcfd = fs_open(op, op->rel, O_RDONLY | O_NONBLOCK | O_NOCTTY);
  if (op->srcfd < 0)
    return fs_fail(op, "open");
  if (fstat(op->srcfd, st) != 0)
    return fs_fail(op, "stat");
  if (!S_ISREG(st->st_mode)) {
    errno = S_ISDIR(st->st_mode) ? EISDIR : EINVAL;
    return fs_fail(op, "not a regular file");
  }
  return 0;
}

/* ---- Lua functions ---- */

/* Read the open file into the buffer: as big as the file said it was
 * (one allocation, read straight into), growing only if it grew. */
static int fs_read_all(fs_op *op, luaL_Buffer *b, off_t size)
{
  size_t total = 0, want = size > 0 ? (size_t)size + 1 : 4096;
  for (;;) {
    char *p = luaL_prepbuffsize(b, want);
    ssize_t r = read(op->srcfd, p, want);
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0 || (total += (size_t)(r > 0 ? r : 0)) > FS_MAXREAD) {
      if (r >= 0)
        errno = EFBIG;
      return fs_fail(op, "read");
    }
    if (r == 0)
      return 0;
    luaL_addsize(b, (size_t)r);
    want = (size_t)r < want ? want - (size_t)r : 65536;
  }
}

/* fs.read(root, rel [, payload]): the file's bytes, nil when it does
 * not exist; with payload true, a file of UH_MPACK_REF_MIN bytes or more
 * comes as a payload (host/payload.h): the open file, for the hook. */
static int fs_read(lua_State *L)
{
  int payload = lua_toboolean(L, 3);
  fs_op *op;
  struct stat st;
  luaL_Buffer b;
  lua_settop(L, 2);   /* the op sits at 3, below the buffer */
  op = fs_begin(L, 1, 2, "read");
  if (fs_root(op) != 0)
    return fs_error(L, op);
  if (fs_openreg(op, &st) != 0) {
    if (op->err == ENOENT && !op->refuse) {
      lua_pushnil(L);
      return 1;
    }
    return fs_error(L, op);
  }
  if (st.st_size > FS_MAXREAD) {
    errno = EFBIG;
    fs_fail(op, "read");
    return fs_error(L, op);
  }
  if (payload && st.st_size >= (off_t)UH_MPACK_REF_MIN)
    return uh_payload_file(L, op->srcfd, (size_t)st.st_size) == 0 ? 1
           : (fs_fail(op, "read"), fs_error(L, op));
  luaL_buffinit(L, &b);
  if (fs_read_all(op, &b, st.st_size) != 0) {
    lua_settop(L, 3);   /* drop the buffer, keep the op */
    return fs_error(L, op);
  }
  luaL_pushresult(&b);
  return 1;
}

static int fs_write(lua_State *L)
{
  size_t n;
  const char *data = luaL_checklstring(L, 3, &n);
  mode_t mode = fs_checkmode(L, 4);
  fs_op *op = fs_begin(L, 1, 2, "write");

  if (fs_root(op) || fs_check_final(op) || fs_parent(op, 1) ||
      fs_tmpopen(op, op->dirfd))
    return fs_error(L, op);
  if (uh_write_all(op->fd, data, n) != 0) {
    fs_fail(op, "write");
    return fs_error(L, op);
  }
  if (fs_commit(op, op->dirfd, op->base, mode) != 0)
    return fs_error(L, op);
  lua_pushboolean(L, 1);
  return 1;
}

static int fs_remove(lua_State *L)
{
  fs_op *op = fs_begin(L, 1, 2, "remove");
  if (fs_root(op) || fs_check_final(op))
    return fs_error(L, op);
  if (fs_parent(op, 0) != 0 || unlinkat(op->dirfd, op->base, 0) != 0) {
    if (op->dirfd >= 0)
      fs_fail(op, "unlink");
    if (op->err == ENOENT && !op->refuse) {
      lua_pushboolean(L, 0);
      return 1;
    }
    return fs_error(L, op);
  }
  if (fsync(op->dirfd) != 0) {
    fs_fail(op, "fsync directory");
    return fs_error(L, op);
  }
  lua_pushboolean(L, 1);
  return 1;
}

/* The copy in op->fd holds the bytes whose sha256 is want: what is
 * installed is what was verified, whoever could write the source. */
static int fs_verify_copy(fs_op *op, const char *want)
{
  char got[UH_SHA256_HEXLEN + 1];
  if (lseek(op->fd, 0, SEEK_SET) != 0 || uh_sha256_fd(op->fd, got) != 0)
    return fs_fail(op, "verify");
  if (strcmp(got, want) != 0) {
    errno = EBADMSG;
    return fs_fail(op, "sha256 of the copy differs from the download's");
  }
  return 0;
}

/* install(src_abs, root, rel, mode, sha256?): with sha256 (lower-case
 * hex), the copy is hashed before it replaces anything. */
static int fs_install(lua_State *L)
{
  const char *src = fs_checkabs(L, 1);
  mode_t mode = fs_checkmode(L, 4);
  const char *want = luaL_optstring(L, 5, NULL);
  fs_op *op = fs_begin(L, 2, 3, "install");
  struct stat st;

  op->other = src;   /* until the source is open */
  op->srcfd = open(src, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (op->srcfd < 0 || fstat(op->srcfd, &st) != 0) {
    fs_fail(op, "source");
    return fs_error(L, op);
  }
  if (!S_ISREG(st.st_mode)) {
    errno = EINVAL;
    fs_fail(op, "source is not a regular file");
    return fs_error(L, op);
  }
  op->other = NULL;
  if (fs_root(op) || fs_check_final(op) || fs_parent(op, 1) ||
      fs_tmpopen(op, op->dirfd))
    return fs_error(L, op);
  if (uh_copy_file(op->srcfd, op->fd, st.st_size) != 0) {
    fs_fail(op, "copy");
    return fs_error(L, op);
  }
  if ((want && fs_verify_copy(op, want) != 0) ||
      fs_commit(op, op->dirfd, op->base, mode) != 0)
    return fs_error(L, op);
  lua_pushboolean(L, 1);
  return 1;
}

static int fs_stat(lua_State *L)
{
  fs_op *op = fs_begin(L, 1, 2, "stat");
  struct stat st;
  char mode[8];
  unsigned m;

  if (fs_root(op) != 0)
    return fs_error(L, op);
  op->fd = fs_open(op, op->rel, O_PATH);
  if (op->fd < 0 || fstat(op->fd, &st) != 0) {
    fs_fail(op, "stat");
    if (op->err == ENOENT && !op->refuse) {
      lua_pushnil(L);
      return 1;
    }
    return fs_error(L, op);
  }
  m = (unsigned)st.st_mode & 07777;
  mode[0] = (char)('0' + (m >> 9));
  mode[1] = (char)('0' + ((m >> 6) & 7));
  mode[2] = (char)('0' + ((m >> 3) & 7));
  mode[3] = (char)('0' + (m & 7));
  lua_createtable(L, 0, 5);
  lua_pushinteger(L, (lua_Integer)st.st_size);
  lua_setfield(L, -2, "size");
  lua_pushinteger(L, (lua_Integer)st.st_gid);
  lua_setfield(L, -2, "gid");
  uh_fs_push_group(L, st.st_gid);
  lua_setfield(L, -2, "group");
  lua_pushlstring(L, mode, 4);
  lua_setfield(L, -2, "mode");
  lua_pushstring(L, S_ISREG(st.st_mode) ? "file" :
                    S_ISDIR(st.st_mode) ? "directory" : "other");
  lua_setfield(L, -2, "type");
  return 1;
}

static int fs_hash(lua_State *L)
{
  fs_op *op = fs_begin(L, 1, 2, "hash");
  struct stat st;
  char hex[UH_SHA256_HEXLEN + 1];

  if (fs_root(op) || fs_openreg(op, &st))
    return fs_error(L, op);
  if (uh_sha256_fd(op->srcfd, hex) != 0) {
    fs_fail(op, "read");
    return fs_error(L, op);
  }
  lua_pushlstring(L, hex, UH_SHA256_HEXLEN);
  return 1;
}

/* Hard-link the file at rel to a temporary name in op->destfd; 1 done,
 * 0 absent, -1 failed, -2 cannot link here (copy instead). */
static int backup_link(fs_op *op)
{
  int i;
  for (i = 0; i < 16; i++) {
    fs_tmpname(op);
    if (linkat(op->dirfd, op->base, op->destfd, op->tmp, 0) == 0) {
      op->tmpdir = op->destfd;
      return 1;
    }
    if (errno != EEXIST)
      break;
  }
  op->tmp[0] = '\0';
  if (errno == ENOENT)
    return 0;
  if (errno == EXDEV || errno == EPERM || errno == EMLINK ||
      errno == EOPNOTSUPP)
    return -2;
  op->other = NULL;
  return fs_fail(op, "link");
}

static int backup_copy(fs_op *op, const char *dest, const char *destbase)
{
  struct stat st;
  if (fs_openreg(op, &st) != 0)
    return op->err == ENOENT && !op->refuse ? 0 : -1;
  op->other = dest;
  if (fs_tmpopen(op, op->destfd) != 0)
    return -1;
  if (uh_copy_file(op->srcfd, op->fd, st.st_size) != 0)
    return fs_fail(op, "copy");
  if (fs_commit(op, op->destfd, destbase, st.st_mode & 07777) != 0)
    return -1;
  return 1;
}

/* Link at a temporary name, then rename over dest: dest is always whole. */
static int backup_linked(fs_op *op, const char *dest, const char *destbase)
{
  int r = backup_link(op);
  if (r != 1)
    return r;
  op->other = dest;
  if (renameat(op->destfd, op->tmp, op->destfd, destbase) != 0)
    return fs_fail(op, "rename");
  /* Renaming a link over another link to the same inode is a no-op
   * that leaves the temporary name: fs_op's close removes it. */
  if (fsync(op->destfd) != 0)
    return fs_fail(op, "fsync directory");
  return 1;
}

/* backup(root, rel, dest_abs): keep the current bytes of rel at dest for
 * a rollback.  A hard link shares the inode, which is safe because every
 * change made here replaces names (rename) instead of rewriting files. */
static int fs_backup(lua_State *L)
{
  const char *dest = fs_checkabs(L, 3);
  const char *slash = strrchr(dest, '/');
  size_t dlen = slash == dest ? 1 : (size_t)(slash - dest);
  fs_op *op = fs_begin(L, 1, 2, "back up");
  char ddir[PATH_MAX];
  int r;

  if (fs_root(op) || fs_check_final(op))
    return fs_error(L, op);
  if (fs_parent(op, 0) != 0) {
    if (op->err == ENOENT && !op->refuse) {
      lua_pushboolean(L, 0);
      return 1;
    }
    return fs_error(L, op);
  }
  op->other = dest;
  if (dlen >= sizeof ddir) {
    errno = ENAMETOOLONG;
    fs_fail(op, "destination");
    return fs_error(L, op);
  }
  memcpy(ddir, dest, dlen);
  ddir[dlen] = '\0';
  op->destfd = open(ddir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (op->destfd < 0) {
    fs_fail(op, "destination directory");
    return fs_error(L, op);
  }
  op->other = NULL;
  r = backup_linked(op, dest, slash + 1);
  if (r == -2)
    r = backup_copy(op, dest, slash + 1);
  if (r < 0)
    return fs_error(L, op);
  lua_pushboolean(L, r == 1);
  return 1;
}

static const luaL_Reg fs_funcs[] = {
  {"backup", fs_backup},
  {"hash", fs_hash},
  {"install", fs_install},
  {"pin", fs_pin},
  {"read", fs_read},
  {"remove", fs_remove},
  {"stat", fs_stat},
  {"usage", fs_usage},
  {"write", fs_write},
  {NULL, NULL}
};

int luaopen_uphook_fs(lua_State *L)
{
  uh_pushcloser(L, FS_OP_MT, fsop_close);
  lua_pop(L, 1);
  luaL_newlib(L, fs_funcs);
  return 1;
}

/* uphook.c.sys: the few process and file-system services the engine and
 * the test harness need outside the confined roots: wall clock, host
 * name, temporary folders, reading fixtures, finding test files and the
 * node lock shared with `microk8s enable/disable`. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <lua.h>
#include <lauxlib.h>
#include "osutil.h"
#include "sys.h"
#include "arena.h"

#define MAX_READ (256u << 20)

static int fail(lua_State *L, const char *what, const char *path)
{
  int e = errno;
  luaL_pushfail(L);
  lua_pushfstring(L, "%s %s: %s", what, path, strerror(e));
  return 2;
}

static int sys_hostname(lua_State *L)
{
  char h[256];
  if (gethostname(h, sizeof h - 1) != 0)
    return fail(L, "gethostname", "");
  h[sizeof h - 1] = 0;
  lua_pushstring(L, h);
  return 1;
}

static int sys_pid(lua_State *L)
{
  lua_pushinteger(L, getpid());
  return 1;
}

/* alive(pid): is there such a process (kill(pid, 0) does not say ESRCH)? */
static int sys_alive(lua_State *L)
{
  lua_Integer pid = luaL_checkinteger(L, 1);
  luaL_argcheck(L, pid > 0 && pid <= INT_MAX, 1, "a process id expected");
  lua_pushboolean(L, kill((pid_t)pid, 0) == 0 || errno != ESRCH);
  return 1;
}

static int sys_wall(lua_State *L)
{
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  lua_pushnumber(L, (double)ts.tv_sec + ts.tv_nsec / 1e9);
  return 1;
}

static int sys_isatty(lua_State *L)
{
  lua_pushboolean(L, isatty((int)luaL_checkinteger(L, 1)));
  return 1;
}

static int sys_mkdtemp(lua_State *L)
{
  const char *base = luaL_optstring(L, 1, NULL);
  char path[PATH_MAX];
  if (!base || !*base)
    base = getenv("TMPDIR");
  if (!base || !*base)
    base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
  if (snprintf(path, sizeof path, "%s/uphook.XXXXXX", base)
      >= (int)sizeof path)
    return luaL_argerror(L, 1, "path too long");
  if (!mkdtemp(path))
    return fail(L, "mkdtemp", path);
  lua_pushstring(L, path);
  return 1;
}

#define RM_DEPTH 64   /* deeper than any tree a test makes */

static int rm_entry(int dirfd, const char *name, unsigned char type,
                    int depth);

/* Empty the open folder fd (closed here): its entries' types come with
 * them (getdents64), so a file costs one unlinkat and nothing is stat'd. */
static int rm_contents(int fd, int depth)
{
  char buf[8192];
  ssize_t n;
  int rc = 0;
  while (rc == 0 && (n = getdents64(fd, buf, sizeof buf)) > 0) {
    for (ssize_t off = 0; off < n && rc == 0; ) {
      struct dirent64 *d = (struct dirent64 *)(buf + off);
      off += d->d_reclen;
      if (strcmp(d->d_name, ".") && strcmp(d->d_name, ".."))
        rc = rm_entry(fd, d->d_name, d->d_type, depth);
    }
  }
  if (n < 0)
    rc = -1;
  close(fd);
  return rc;
}

/* Remove dirfd/name, a folder's contents first; never follows a link. */
static int rm_entry(int dirfd, const char *name, unsigned char type,
                    int depth)
{
  int fd;
  if (type != DT_DIR) {
    if (unlinkat(dirfd, name, 0) == 0 || errno == ENOENT)
      return 0;
    if (errno != EISDIR)   /* DT_UNKNOWN on a folder: remove it as one */
      return -1;
  }
  /* an empty folder (most of a test's tree) goes in one call */
  if (unlinkat(dirfd, name, AT_REMOVEDIR) == 0 || errno == ENOENT)
    return 0;
  if (errno != ENOTEMPTY && errno != EEXIST)
    return -1;
  if (depth >= RM_DEPTH) {
    errno = ELOOP;
    return -1;
  }
  fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return errno == ENOENT ? 0 : -1;
  if (rm_contents(fd, depth + 1) != 0)
    return -1;
  return unlinkat(dirfd, name, AT_REMOVEDIR) == 0 || errno == ENOENT
         ? 0 : -1;
}

int uh_rmtree(const char *path)
{
  return rm_entry(AT_FDCWD, path, DT_UNKNOWN, 0);
}

/* Remove a tree made by mkdtemp; refuses anything not named uphook.* */
static int sys_rmtree(lua_State *L)
{
  const char *path = luaL_checkstring(L, 1);
  const char *base = strrchr(path, '/');
  luaL_argcheck(L, base && strncmp(base, "/uphook.", 8) == 0, 1,
                "only uphook.* temporary folders can be removed");
  if (uh_rmtree(path) != 0)
    return fail(L, "cannot remove", path);
  lua_pushboolean(L, 1);
  return 1;
}

static int sys_read(lua_State *L)
{
  const char *path = luaL_checkstring(L, 1);
  luaL_Buffer b;
  struct stat st;
  /* non-blocking: a FIFO (or a device) opens at once and is refused */
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  ssize_t n;
  if (fd < 0)
    return errno == ENOENT ? (luaL_pushfail(L), 1) : fail(L, "open", path);
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)
      || (size_t)st.st_size > MAX_READ) {
    close(fd);
    if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode)) {
      luaL_pushfail(L);
      lua_pushfstring(L, "%s: not a regular file (a FIFO, device or "
                      "socket is refused)", path);
      return 2;
    }
    errno = S_ISDIR(st.st_mode) ? EISDIR : EFBIG;
    return fail(L, "read", path);
  }
  luaL_buffinit(L, &b);
  do {
    char *p = luaL_prepbuffsize(&b, 65536);
    n = read(fd, p, 65536);
    if (n > 0)
      luaL_addsize(&b, (size_t)n);
  } while (n > 0 || (n < 0 && errno == EINTR));
  close(fd);
  if (n < 0)
    return fail(L, "read", path);
  luaL_pushresult(&b);
  return 1;
}

static int sys_write(lua_State *L)
{
  const char *path = luaL_checkstring(L, 1);
  size_t len;
  const char *data = luaL_checklstring(L, 2, &len);
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY,
                0666);
  if (fd < 0)
    return fail(L, "open", path);
  if (uh_write_all(fd, data, len) != 0) {
    int e = errno;
    close(fd);
    errno = e;
    return fail(L, "write", path);
  }
  if (close(fd) != 0)
    return fail(L, "write", path);
  lua_pushboolean(L, 1);
  return 1;
}

/* "file", "dir", "other" or nil */
static int sys_kind(lua_State *L)
{
  struct stat st;
  if (stat(luaL_checkstring(L, 1), &st) != 0)
    return 0;
  lua_pushstring(L, S_ISREG(st.st_mode) ? "file" : S_ISDIR(st.st_mode)
                 ? "dir" : "other");
  return 1;
}

static int sys_realpath(lua_State *L)
{
  char out[PATH_MAX];
  const char *p = luaL_checkstring(L, 1);
  if (!realpath(p, out))
    return fail(L, "realpath", p);
  lua_pushstring(L, out);
  return 1;
}

/* Sorted names in a directory, without . and .. */
static int sys_listdir(lua_State *L)
{
  const char *path = luaL_checkstring(L, 1);
  struct dirent **names;
  int i, n = scandir(path, &names, NULL, alphasort), k = 0;
  if (n < 0)
    return fail(L, "cannot list", path);
  lua_createtable(L, n, 0);
  for (i = 0; i < n; i++) {
    if (strcmp(names[i]->d_name, ".") && strcmp(names[i]->d_name, "..")) {
      lua_pushstring(L, names[i]->d_name);
      lua_rawseti(L, -2, ++k);
    }
    free(names[i]);
  }
  free(names);
  return 1;
}

static int sys_mkdirs(lua_State *L)
{
  const char *path = luaL_checkstring(L, 1);
  char buf[PATH_MAX], *p;
  size_t start, cut;
  if (mkdir(path, 0755) == 0 || errno == EEXIST) {   /* the common case */
    lua_pushboolean(L, 1);
    return 1;
  }
  if (errno != ENOENT)
    return fail(L, "mkdir", path);
  if (snprintf(buf, sizeof buf, "%s", path) >= (int)sizeof buf)
    return luaL_argerror(L, 1, "path too long");
  /* back up to the deepest folder there is, then make the rest */
  for (cut = strlen(buf), start = 0; ; cut = start) {
    int r;
    while (cut > 0 && buf[cut - 1] == '/')
      cut--;
    p = memrchr(buf, '/', cut);
    if (!p || p == buf) {
      start = 0;
      break;
    }
    start = (size_t)(p - buf);
    *p = 0;
    r = mkdir(buf, 0755) == 0 || errno == EEXIST;
    *p = '/';
    if (r)
      break;
    if (errno != ENOENT)
      return fail(L, "mkdir", buf);
  }
  for (p = buf + start + 1; ; p++) {
    if (*p == '/' || !*p) {
      char c = *p;
      *p = 0;
      if (p > buf && p[-1] != '/' && mkdir(buf, 0755) != 0
          && errno != EEXIST)
        return fail(L, "mkdir", buf);
      if (!(*p = c))
        break;
    }
  }
  lua_pushboolean(L, 1);
  return 1;
}

/* now() -> CLOCK_MONOTONIC seconds: the engine's deadlines. */
static int sys_now(lua_State *L)
{
  lua_pushnumber(L, uh_monotonic());
  return 1;
}

/* A real sleep, interrupted by nothing but the end of the time. */
static int sys_sleep(lua_State *L)
{
  double s = luaL_checknumber(L, 1);
  luaL_argcheck(L, s >= 0 && s < 86400, 1, "seconds out of range");
  uh_sleep(s);
  return 0;
}

#define ARGV_MAX 64

/* run(argv) -> exit code (128+signal when killed) | nil, msg.  No shell:
 * argv[1] is looked up in PATH and executed with the others. */
static int sys_run(lua_State *L)
{
  const char *argv[ARGV_MAX + 1];
  lua_Integer n;
  int code;
  luaL_checktype(L, 1, LUA_TTABLE);
  n = luaL_len(L, 1);
  luaL_argcheck(L, n >= 1 && n <= ARGV_MAX, 1, "1 to 64 strings expected");
  for (lua_Integer i = 1; i <= n; i++) {
    lua_geti(L, 1, i);
    argv[i - 1] = lua_tostring(L, -1);
    luaL_argcheck(L, argv[i - 1] != NULL, 1, "argv must hold strings");
    lua_pop(L, 1);              /* the table still holds the string */
  }
  argv[n] = NULL;
  code = uh_run(argv);
  if (code < 0)
    return luaL_fileresult(L, 0, argv[0]);
  lua_pushinteger(L, code);
  return 1;
}

static int sys_getenv(lua_State *L)
{
  lua_pushstring(L, getenv(luaL_checkstring(L, 1)));
  return 1;
}

/* Workers of `uphook test -j`: fork, a pipe each way, read to EOF. */
static int sys_fork(lua_State *L)
{
  pid_t pid;
  fflush(stdout);
  fflush(stderr);
  uh_env_keep_on_fork(1);   /* a worker needs the environment... */
  pid = fork();
  uh_env_keep_on_fork(0);   /* ...and its own hook children do not */
  if (pid < 0)
    return fail(L, "fork", "");
  lua_pushinteger(L, pid);
  return 1;
}

static int sys_pipe(lua_State *L)
{
  int fd[2];
  if (pipe2(fd, O_CLOEXEC) != 0)
    return fail(L, "pipe", "");
  lua_pushinteger(L, fd[0]);
  lua_pushinteger(L, fd[1]);
  return 2;
}

static int sys_fdwrite(lua_State *L)
{
  int fd = (int)luaL_checkinteger(L, 1);
  size_t n;
  const char *p = luaL_checklstring(L, 2, &n);
  if (uh_write_all(fd, p, n) != 0)
    return fail(L, "write", "pipe");
  lua_pushboolean(L, 1);
  return 1;
}

static int sys_fdreadall(lua_State *L)
{
  int fd = (int)luaL_checkinteger(L, 1);
  luaL_Buffer b;
  ssize_t n;
  luaL_buffinit(L, &b);
  do {
    char *p = luaL_prepbuffsize(&b, 65536);
    n = read(fd, p, 65536);
    if (n > 0)
      luaL_addsize(&b, (size_t)n);
  } while (n > 0 || (n < 0 && errno == EINTR));
  luaL_pushresult(&b);
  return 1;
}

static int sys_fdclose(lua_State *L)
{
  close((int)luaL_checkinteger(L, 1));
  return 0;
}

static int sys_waitpid(lua_State *L)
{
  int st = 0;
  pid_t pid = (pid_t)luaL_checkinteger(L, 1);
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
    ;
  lua_pushinteger(L, WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
  return 1;
}

static int sys_nproc(lua_State *L)
{
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  lua_pushinteger(L, n > 0 ? n : 1);
  return 1;
}

/* The end of a forked test worker: _exit, so the stdio buffers and the
 * Lua state it shares with its parent are not flushed or closed twice. */
static int sys_exit_now(lua_State *L)
{
  _exit((int)luaL_optinteger(L, 1, 0));
}

static const luaL_Reg sys_funcs[] = {
  { "alive", sys_alive },
  { "exec", sys_exec },
  { "exit_now", sys_exit_now },
  { "fdclose", sys_fdclose },
  { "fdreadall", sys_fdreadall },
  { "fdwrite", sys_fdwrite },
  { "fork", sys_fork },
  { "getenv", sys_getenv },
  { "hostname", sys_hostname },
  { "isatty", sys_isatty },
  { "kind", sys_kind },
  { "listdir", sys_listdir },
  { "lock", sys_lock },
  { "lock_holder", sys_lock_holder },
  { "mkdirs", sys_mkdirs },
  { "mkdtemp", sys_mkdtemp },
  { "now", sys_now },
  { "nproc", sys_nproc },
  { "pid", sys_pid },
  { "pipe", sys_pipe },
  { "read", sys_read },
  { "realpath", sys_realpath },
  { "rmtree", sys_rmtree },
  { "run", sys_run },
  { "sleep", sys_sleep },
  { "waitpid", sys_waitpid },
  { "wall", sys_wall },
  { "write", sys_write },
  { NULL, NULL }
};

int luaopen_uphook_sys(lua_State *L)
{
  luaL_newlib(L, sys_funcs);
  return 1;
}

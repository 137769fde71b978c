/* helm.render(t): Helm run as a separate, confined process
 * (docs/security.md, "The render child"):
 *
 *   render{ helm = "/abs/helm", args = { "template", ... },
 *           values = "<yaml>", timeout = s, max_output = bytes,
 *           memory_limit = bytes [, copies = n] }
 *     -> stdout | nil, message    and a third value, a note, when the
 *        child could not be given a network namespace of its own
 *
 * With copies = n (1 to 4), n such Helms run at once with the same
 * inputs, each in its own folder and confined alike, and the first value
 * is the list of their n outputs; one that fails, runs past the timeout
 * (one for them all) or prints past max_output (each) stops them all,
 * and its message is returned.  Two renders of the same inputs are how
 * the engine finds the values a chart generates (docs/guide.md "Helm
 * addons"); run at once, they take the time of about one.
 *
 * The child gets a cleared environment whose HOME, HELM_*_HOME and
 * TMPDIR are a fresh folder, KUBECONFIG=/dev/null; copies of the files
 * its arguments name (an argument that is an absolute path to a regular
 * file points at a read-only copy in that folder) and of `values`,
 * passed as `--values FILE` after args; uid and gid 65534 when uphook
 * runs as root (no capabilities: the bounding set dropped, then setuid),
 * else the caller's in a user namespace; a network namespace of its own
 * (loopback only, and down); NO_NEW_PRIVS; rlimits: DATA memory_limit
 * (Go reserves some 750 MiB of address space at start, so AS would bound
 * nothing), CORE 0, FSIZE, NOFILE, NPROC (as 65534), CPU; its own
 * process group, killed whole past `timeout`, past `max_output` bytes
 * (stdout and stderr together), or at once when the broker is
 * interrupted (broker.interrupted(): the wait is host/osutil.c's
 * uh_wait_poll, which a SIGINT or SIGTERM cuts short).  On a non-zero
 * exit the message is Helm's stderr (its last 16 KiB), which names the
 * chart file and template line.  Tested by tests/unit/test_helm_render.c. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <lua.h>
#include <lauxlib.h>
#include "broker.h"
#include "fs.h"
#include "helm.h"
#include "osutil.h"
#include "sys.h"

#define MAX_ARGS 200
#define MAX_COPIES 4              /* Helms run at once by one call */
#define MAX_COPY (128 << 20)      /* a file an argument names */
#define ERR_KEEP (16 << 10)       /* the tail of stderr kept */
#define NOBODY 65534
#define INTERRUPTED "Helm was stopped: uphook was interrupted"

struct render {
  const char *helm;
  const char **argv;              /* helm, args..., NULL */
  const char **envp;
  char dir[PATH_MAX];             /* the child's folder */
  char work[PATH_MAX + 8];        /* its working folder, dir/tmp */
  char uid_map[32], gid_map[32];  /* without root: the user namespace's */
  double timeout;
  lua_Integer max_output, memory;
  uid_t uid;
  gid_t gid;
  int root;                       /* uphook is root: the child is 65534 */
};

/* What the child reports on its pipe before exec (nothing on success,
 * as the pipe closes on exec). */
struct report {
  char fatal;                     /* 0: a note (no network namespace) */
  char step[15];
  int err;
};

static void report(int fd, int fatal, const char *step, int e)
{
  struct report r;
  ssize_t w;
  memset(&r, 0, sizeof r);
  r.fatal = (char)fatal;
  strncpy(r.step, step, sizeof r.step - 1);
  r.err = e;
  w = write(fd, &r, sizeof r);
  (void)w;
  if (fatal)
    _exit(127);
}

static void write_map(int rep, const char *file, const char *text)
{
  int fd = open(file, O_WRONLY | O_CLOEXEC);
  if (fd < 0 || write(fd, text, strlen(text)) < 0)
    report(rep, 1, "id map", errno);
  close(fd);
}

/* A network namespace of its own: as root directly, else inside a user
 * namespace that maps the caller's own ids.  Where the kernel refuses,
 * a note, and Helm runs with the host's network. */
static void child_network(const struct render *r, int rep)
{
  if (r->root) {
    if (unshare(CLONE_NEWNET) != 0)
      report(rep, 0, "unshare", errno);
    return;
  }
  if (unshare(CLONE_NEWUSER | CLONE_NEWNET) != 0) {
    report(rep, 0, "unshare", errno);
    return;
  }
  write_map(rep, "/proc/self/setgroups", "deny");
  write_map(rep, "/proc/self/uid_map", r->uid_map);
  write_map(rep, "/proc/self/gid_map", r->gid_map);
}

static void child_limits(const struct render *r, int rep)
{
  struct rlimit data = { (rlim_t)r->memory, (rlim_t)r->memory },
                none = { 0, 0 }, fsize = { MAX_COPY, MAX_COPY },
                nofile = { 256, 256 }, nproc = { 256, 256 },
                cpu = { (rlim_t)r->timeout + 5, (rlim_t)r->timeout + 5 };
#ifdef UH_VALGRIND
  /* valgrind refuses to change the NOFILE hard limit (host/confine.c) */
  if (getrlimit(RLIMIT_NOFILE, &nofile) == 0)
    nofile.rlim_cur = 256;
#endif
  if (setrlimit(RLIMIT_DATA, &data) || setrlimit(RLIMIT_CORE, &none)
      || setrlimit(RLIMIT_FSIZE, &fsize) || setrlimit(RLIMIT_NOFILE, &nofile)
      || setrlimit(RLIMIT_CPU, &cpu)
      || (r->root && setrlimit(RLIMIT_NPROC, &nproc)))
    report(rep, 1, "rlimit", errno);
}

/* No capabilities left: the bounding set dropped (as root, or in the
 * user namespace), then 65534 as root; exec clears the rest. */
static void child_identity(const struct render *r, int rep)
{
  int c;
  for (c = 0; prctl(PR_CAPBSET_READ, c, 0, 0, 0) >= 0; c++)
    if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) != 0)
      report(rep, 1, "capabilities", errno);
  prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
  if (r->root && (setgroups(0, NULL) || setresgid(r->gid, r->gid, r->gid)
                  || setresuid(r->uid, r->uid, r->uid)))
    report(rep, 1, "setuid", errno);
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
    report(rep, 1, "no_new_privs", errno);
}

/* The forked child: only async-signal-safe calls until exec. */
static void child_main(const struct render *r, int out, int err, int rep,
                       pid_t parent)
{
  sigset_t none;
  int nul, helm;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
  signal(SIGPIPE, SIG_DFL);
  signal(SIGALRM, SIG_DFL);
  setpgid(0, 0);
  /* out of the way of 0..3 first, then into place; the rest closed */
  out = fcntl(out, F_DUPFD_CLOEXEC, 10);
  err = fcntl(err, F_DUPFD_CLOEXEC, 10);
  rep = fcntl(rep, F_DUPFD_CLOEXEC, 10);
  nul = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (out < 0 || err < 0 || rep < 0 || nul < 0 || dup2(nul, 0) < 0
      || dup2(out, 1) < 0 || dup2(err, 2) < 0
      || dup3(rep, 3, O_CLOEXEC) < 0)
    _exit(127);
  syscall(SYS_close_range, 4, ~0U, 0);
  /* the binary is opened while still root and run through the
   * descriptor: a Helm in a folder only root may enter (a checkout in a
   * 0700 home or mktemp folder) still runs as 65534, which needs only
   * the file's own execute bit.  Not close-on-exec: a script's
   * interpreter reads it through /dev/fd. */
  helm = open(r->helm, O_PATH);
  if (helm < 0)
    report(3, 1, "exec", errno);
  child_limits(r, 3);
  child_network(r, 3);
  child_identity(r, 3);
  prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);   /* after setuid, which
                                                  clears it */
  if (getppid() != parent)
    _exit(127);
  umask(077);
  if (chdir(r->work) != 0)
    report(3, 1, "chdir", errno);
  fexecve(helm, (char *const *)r->argv, (char *const *)r->envp);
  report(3, 1, "exec", errno);
}

/* ---- the broker's side ---- */

/* mkdir with exactly mode (whatever the umask), owned by the child's uid
 * when own */
static int make_dir(const struct render *r, const char *path, mode_t mode,
                    int own)
{
  if (mkdir(path, mode) != 0 || chmod(path, mode) != 0)
    return -1;
  return own && r->root ? chown(path, r->uid, r->gid) : 0;
}

/* The child's folder: dir (root's, 0711) holding in/ (root's, 0755: the
 * copies it reads, 0444), and home/ and tmp/ (the child's, 0700). */
static const char *make_folder(struct render *r)
{
  char p[PATH_MAX + 16];
  snprintf(r->dir, sizeof r->dir, "/tmp/uphook.helm.XXXXXX");
  if (!mkdtemp(r->dir))
    return "mkdtemp";
  snprintf(p, sizeof p, "%s/in", r->dir);
  if (chmod(r->dir, 0711) != 0 || make_dir(r, p, 0755, 0) != 0)
    return "mkdir";
  snprintf(p, sizeof p, "%s/home", r->dir);
  if (make_dir(r, p, 0700, 1) != 0)
    return "mkdir";
  snprintf(r->work, sizeof r->work, "%s/tmp", r->dir);
  return make_dir(r, r->work, 0700, 1) != 0 ? "mkdir" : NULL;
}

/* A read-only file in dir/in named after n and name, holding len bytes
 * of data or, when data is NULL, a copy of the open file fd. */
static const char *put_file(lua_State *L, struct render *r, int n,
                            const char *name, const char *data, size_t len,
                            int fd)
{
  const char *base = strrchr(name, '/');
  const char *dst = lua_pushfstring(L, "%s/in/%d-%s", r->dir, n,
                                    base ? base + 1 : name);
  int out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOCTTY,
                 0444), rc;
  if (out < 0)
    return NULL;
  rc = fchmod(out, 0444) != 0 ? -1 : data ? uh_write_all(out, data, len)
       : uh_copy_file(fd, out, (off_t)len);
  if (close(out) != 0 || rc != 0)
    return NULL;
  return dst;
}

/* Push args[i], or the path of its copy when it names a regular file by
 * absolute path: 0, or -1 with a message pushed. */
static int child_arg(lua_State *L, struct render *r, int i, const char *a)
{
  struct stat st;
  int fd;
  if (a[0] != '/' || stat(a, &st) != 0 || !S_ISREG(st.st_mode)) {
    lua_pushstring(L, a);
    return 0;
  }
  fd = open(a, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0 || fstat(fd, &st) != 0 || st.st_size > MAX_COPY) {
    lua_pushfstring(L, "cannot copy %s for Helm: %s", a, fd < 0
                    ? strerror(errno) : "larger than 128 MiB");
    if (fd >= 0)
      close(fd);
    return -1;
  }
  if (!put_file(L, r, i, a, NULL, (size_t)st.st_size, fd)) {
    lua_pushfstring(L, "cannot copy %s for Helm: %s", a, strerror(errno));
    close(fd);
    return -1;
  }
  close(fd);
  return 0;
}

/* r->argv: helm, args (files copied), --values FILE; its strings held by
 * the table at hold.  0, or -1 with a message pushed. */
static int build_argv(lua_State *L, struct render *r, int hold)
{
  lua_Integer i, n;
  size_t len;
  const char *values;
  lua_getfield(L, 1, "args");
  n = luaL_len(L, -1);
  r->argv = lua_newuserdatauv(L, (size_t)(n + 4) * sizeof *r->argv, 0);
  lua_rawseti(L, hold, 1);
  r->argv[0] = r->helm;
  for (i = 1; i <= n; i++) {
    lua_geti(L, -1, i);
    if (child_arg(L, r, (int)i, lua_tostring(L, -1)) != 0)
      return -1;
    r->argv[i] = lua_tostring(L, -1);
    lua_rawseti(L, hold, (int)i + 1);
    lua_pop(L, 1);
  }
  lua_pop(L, 1);
  lua_getfield(L, 1, "values");
  values = lua_tolstring(L, -1, &len);
  if (values) {
    r->argv[i++] = "--values";
    if (!put_file(L, r, 0, "values.yaml", values, len, -1)) {
      lua_pushfstring(L, "cannot write Helm's values: %s", strerror(errno));
      return -1;
    }
    r->argv[i++] = lua_tostring(L, -1);
    lua_rawseti(L, hold, (int)n + 2);
  }
  lua_pop(L, 1);
  r->argv[i] = NULL;
  return 0;
}

/* The child's whole environment, held by the table at hold. */
static void build_env(lua_State *L, struct render *r, int hold)
{
  static const char *const fmt[] = {
    "HOME=%s/home", "HELM_CACHE_HOME=%s/home/.cache/helm",
    "HELM_CONFIG_HOME=%s/home/.config/helm",
    "HELM_DATA_HOME=%s/home/.local/share/helm", "TMPDIR=%s/tmp",
    "KUBECONFIG=/dev/null", "PATH=/usr/bin:/bin", NULL };
  int i;
  r->envp = lua_newuserdatauv(L, sizeof fmt, 0);
  lua_setfield(L, hold, "envp");
  for (i = 0; fmt[i]; i++) {
    r->envp[i] = lua_pushfstring(L, fmt[i], r->dir);
    lua_setfield(L, hold, fmt[i]);
  }
  r->envp[i] = NULL;
}

/* ---- the wait ---- */

enum { DONE, TIMEOUT, OUTPUT, INTR, FAILED };

struct pump {
  char *out;                      /* stdout, up to max_output */
  size_t nout, cap, total, max;   /* total: stdout and stderr read */
  char err[ERR_KEEP];             /* the tail of stderr */
  size_t nerr;
  const char *step;               /* FAILED: what failed, with errno e */
  int e;
};

static void keep_err(struct pump *p, const char *s, size_t n)
{
  if (n >= ERR_KEEP) {
    s += n - ERR_KEEP;
    n = ERR_KEEP;
  }
  if (p->nerr + n > ERR_KEEP) {
    size_t drop = p->nerr + n - ERR_KEEP;
    memmove(p->err, p->err + drop, p->nerr - drop);
    p->nerr -= drop;
  }
  memcpy(p->err + p->nerr, s, n);
  p->nerr += n;
}

/* Read what fd (stdout or stderr) has: 0 at its end, else 1. */
static int drain(int fd, int is_err, struct pump *p)
{
  char buf[65536];
  ssize_t n = read(fd, buf, sizeof buf);
  if (n < 0)
    return errno == EINTR || errno == EAGAIN;
  if (n == 0)
    return 0;
  p->total += (size_t)n;
  if (is_err) {
    keep_err(p, buf, (size_t)n);
  } else if (p->total <= p->max) {
    if (p->nout + (size_t)n > p->cap) {
      size_t cap = p->cap ? p->cap * 2 : 1 << 16;
      char *q;
      while (cap < p->nout + (size_t)n)
        cap *= 2;
      if (!(q = realloc(p->out, cap)))
        return 1;   /* p->total passes max: this is reported as output */
      p->out = q;
      p->cap = cap;
    }
    memcpy(p->out + p->nout, buf, (size_t)n);
    p->nout += (size_t)n;
  }
  return 1;
}

/* One Helm of a render call: its folder and argv, its pipes, what it
 * printed, and what its child reported before exec. */
struct kid {
  struct render r;
  struct pump p;
  struct report fatal, note;      /* .fatal < 0: none */
  pid_t pid;
  int out, err, rep, pidfd, st, watch;
};

/* Whether Helm itself has exited, its status left to waitpid: the
 * pidfd's event, or, where there is no pidfd (kernels before 5.3,
 * valgrind), a look with WNOWAIT. */
static int helm_exited(pid_t pid, const struct pollfd *pidfd)
{
  siginfo_t si;
  if (pidfd->fd >= 0)
    return pidfd->revents != 0;
  si.si_pid = 0;
  return waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0
         && si.si_pid == pid;
}

/* Whether any Helm is still running or has a pipe to read. */
static int busy(const struct kid *k, const struct pollfd *fds, int n)
{
  int i;
  for (i = 0; i < n; i++)
    if (k[i].watch || fds[3 * i].fd >= 0 || fds[3 * i + 1].fd >= 0)
      return 1;
  return 0;
}

/* Whether a running Helm has no pidfd (its exit looked for in slices). */
static int sliced(const struct kid *k, int n)
{
  int i;
  for (i = 0; i < n; i++)
    if (k[i].watch && k[i].pidfd < 0)
      return 1;
  return 0;
}

/* After a poll: each Helm that has exited has the rest of its process
 * group killed; what its pipes hold is read.  OUTPUT when one printed
 * past max_output (*bad: which), else DONE. */
static int pump_step(struct kid *k, struct pollfd *fds, int n, int rc,
                     int *bad)
{
  int i, j;
  for (i = 0; i < n; i++) {
    struct pollfd *f = fds + 3 * i;
    if (k[i].watch && helm_exited(k[i].pid, &f[2])) {
      k[i].watch = 0;
      f[2].fd = -1;
      kill(-k[i].pid, SIGKILL);
    }
    for (j = 0; rc > 0 && j < 2; j++)
      if (f[j].fd >= 0 && f[j].revents && !drain(f[j].fd, j, &k[i].p))
        f[j].fd = -1;
    if (k[i].p.total > k[i].p.max) {
      *bad = i;
      return OUTPUT;
    }
  }
  return DONE;
}

/* Read the Helms' output until each exits and its pipes end, the
 * timeout or a max_output passes, or the broker is interrupted.  Without
 * a pidfd the wait is cut into slices of 0.1 s to look for an exit. */
static int pump(struct kid *k, int n, double timeout, int *bad)
{
  struct pollfd fds[3 * MAX_COPIES];
  struct uh_wait w;
  double end = uh_monotonic() + timeout;
  int why = DONE, i;
  for (i = 0; i < n; i++) {
    fds[3 * i] = (struct pollfd){ k[i].out, POLLIN, 0 };
    fds[3 * i + 1] = (struct pollfd){ k[i].err, POLLIN, 0 };
    fds[3 * i + 2] = (struct pollfd){ k[i].pidfd, POLLIN, 0 };
    k[i].watch = 1;
  }
  uh_wait_begin(&w, end, (volatile int *)&uh_interrupted);
  while (why == DONE && busy(k, fds, n)) {
    int rc;
    w.deadline = end;
    if (sliced(k, n) && uh_monotonic() + 0.1 < end)
      w.deadline = uh_monotonic() + 0.1;
    rc = uh_wait_poll(&w, fds, (unsigned)(3 * n));
    if (rc == UH_WAIT_TIMEOUT && w.deadline < end)
      rc = 0;
    else if (rc <= 0) {
      why = rc == UH_WAIT_TIMEOUT ? TIMEOUT : rc == UH_WAIT_INTR ? INTR
            : FAILED;
      k[0].p.step = "poll";
      k[0].p.e = errno;
      *bad = 0;
      break;
    }
    why = pump_step(k, fds, n, rc, bad);
  }
  uh_wait_end(&w);
  return why;
}

/* ---- the call ---- */

/* The message for a render that did not succeed (pushed). */
static void push_failure(lua_State *L, const struct render *r,
                         const struct pump *p, int why, int st,
                         const struct report *fatal)
{
  size_t n = p->nerr;
  if (why == INTR)
    lua_pushliteral(L, INTERRUPTED);
  else if (why == TIMEOUT)
    lua_pushfstring(L, "Helm ran past its timeout (%d s) and was killed",
                    (int)r->timeout);
  else if (why == OUTPUT)
    lua_pushfstring(L, "Helm printed more than %I bytes (max_output) and "
                    "was killed", r->max_output);
  else if (why == FAILED)
    lua_pushfstring(L, "cannot run Helm (%s): %s", p->step,
                    strerror(p->e));
  else if (fatal && strcmp(fatal->step, "exec") == 0 && fatal->err == ENOENT)
    lua_pushfstring(L, "Helm not found at %s", r->helm);
  else if (fatal && strcmp(fatal->step, "exec") == 0)
    lua_pushfstring(L, "cannot run Helm at %s: %s%s", r->helm,
                    strerror(fatal->err), r->root && fatal->err == EACCES
                    ? " (it runs as uid 65534, which must be able to "
                      "execute it)" : "");
  else if (fatal)
    lua_pushfstring(L, "cannot start Helm (%s): %s", fatal->step,
                    strerror(fatal->err));
  else {
    while (n > 0 && strchr(" \t\r\n", p->err[n - 1]))
      n--;
    if (n > 0)
      lua_pushlstring(L, p->err, n);   /* "Error: template: ..." */
    else if (WIFSIGNALED(st))
      lua_pushfstring(L, "Helm was killed by signal %d (%s)", WTERMSIG(st),
                      strsignal(WTERMSIG(st)));
    else
      lua_pushfstring(L, "Helm exited with status %d", WEXITSTATUS(st));
  }
}

/* After a Helm: its reports read, its folder removed; whether it
 * succeeded. */
static int reap(struct kid *k, int why)
{
  struct report got;
  k->fatal.fatal = k->note.fatal = -1;
  while (k->rep >= 0 && read(k->rep, &got, sizeof got)
         == (ssize_t)sizeof got)
    if (got.fatal)
      k->fatal = got;
    else
      k->note = got;
  if (k->rep >= 0)
    close(k->rep);
  uh_rmtree(k->r.dir);
  return why == DONE && k->fatal.fatal < 0 && WIFEXITED(k->st)
         && WEXITSTATUS(k->st) == 0;
}

/* The results pushed: the output (a list of the outputs when list), or
 * fail and the message of the first Helm that failed (bad, when the
 * group stopped for why); a note when one had no network namespace. */
static int finish(lua_State *L, struct kid *k, int n, int why, int bad,
                  int list)
{
  int i, nres = 2, failed = -1, noted = -1;
  for (i = 0; i < n; i++) {
    if (!reap(&k[i], why) && failed < 0)
      failed = why == DONE ? i : bad;
    if (k[i].note.fatal == 0 && noted < 0)
      noted = i;
  }
  if (failed >= 0) {
    struct kid *f = &k[failed];
    luaL_pushfail(L);
    push_failure(L, &f->r, &f->p, why, f->st,
                 f->fatal.fatal < 0 ? NULL : &f->fatal);
  } else {
    if (list)
      lua_createtable(L, n, 0);
    for (i = 0; i < n; i++) {
      lua_pushlstring(L, k[i].p.out ? k[i].p.out : "", k[i].p.nout);
      if (list)
        lua_rawseti(L, -2, i + 1);
    }
    lua_pushnil(L);
  }
  for (i = 0; i < n; i++)
    free(k[i].p.out);
  if (noted >= 0) {
    lua_pushfstring(L, "Helm had no network namespace of its own (%s: %s):"
                    " it ran with the host's network", k[noted].note.step,
                    strerror(k[noted].note.err));
    nres = 3;
  }
  return nres;
}

/* Fork one Helm: 0, or -1 with what failed in k->p. */
static int start(struct kid *k, pid_t me)
{
  int out[2], err[2], rep[2];
  if (pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC)
      || pipe2(rep, O_CLOEXEC)) {
    k->p.step = "pipe";
    k->p.e = errno;
    return -1;
  }
  fflush(stdout);
  fflush(stderr);
  if ((k->pid = fork()) == 0)
    child_main(&k->r, out[1], err[1], rep[1], me);
  k->p.step = k->pid < 0 ? "fork" : "pidfd_open";
  k->p.e = errno;
  close(out[1]);
  close(err[1]);
  close(rep[1]);
  k->out = out[0];
  k->err = err[0];
  k->rep = rep[0];
  if (k->pid < 0)
    return -1;
  setpgid(k->pid, k->pid);   /* the child does too: either comes first */
  k->pidfd = (int)syscall(SYS_pidfd_open, k->pid, 0);
  if (k->pidfd < 0 && errno != ENOSYS) {
    k->p.e = errno;
    return -1;
  }
  return 0;
}

/* Run the n Helms at once; any that fails stops them all. */
static int run(lua_State *L, struct kid *k, int n, int list)
{
  int why = DONE, bad = 0, i;
  pid_t me = getpid();
  for (i = 0; i < n; i++) {
    k[i].pid = -1;
    k[i].out = k[i].err = k[i].rep = k[i].pidfd = -1;
    k[i].p.max = (size_t)k[i].r.max_output;
  }
  for (i = 0; i < n && why == DONE; i++)
    if (start(&k[i], me) != 0) {
      why = FAILED;
      bad = i;
    }
  if (why == DONE)
    why = pump(k, n, k[0].r.timeout, &bad);
  for (i = 0; i < n; i++) {
    if (k[i].pid > 0) {
      if (why != DONE) {
        kill(-k[i].pid, SIGKILL);
        kill(k[i].pid, SIGKILL);
      }
      while (waitpid(k[i].pid, &k[i].st, 0) < 0 && errno == EINTR)
        ;
    }
    if (k[i].out >= 0)
      close(k[i].out);
    if (k[i].err >= 0)
      close(k[i].err);
    if (k[i].pidfd >= 0)
      close(k[i].pidfd);
  }
  return finish(L, k, n, why, bad, list);
}

/* t's fields into r; raises, naming the field, on misuse */
static void read_conf(lua_State *L, struct render *r, int *copies,
                      int *list)
{
  lua_Integer i, n;
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_getfield(L, 1, "helm");
  r->helm = lua_tostring(L, -1);
  luaL_argcheck(L, r->helm && r->helm[0] == '/', 1,
                "helm: an absolute path expected");
  luaL_argcheck(L, lua_getfield(L, 1, "args") == LUA_TTABLE, 1,
                "args: a list of strings expected");
  n = luaL_len(L, -1);
  luaL_argcheck(L, n <= MAX_ARGS, 1, "args: at most 200");
  for (i = 1; i <= n; i++)
    luaL_argcheck(L, lua_geti(L, -1 - (int)(i - 1), i) == LUA_TSTRING, 1,
                  "args: a list of strings expected");
  lua_pop(L, (int)n + 1);
  luaL_argcheck(L, lua_getfield(L, 1, "values") <= LUA_TNIL
                || lua_type(L, -1) == LUA_TSTRING, 1,
                "values: YAML text expected");
  lua_getfield(L, 1, "timeout");
  r->timeout = luaL_optnumber(L, -1, 120);
  luaL_argcheck(L, r->timeout > 0 && r->timeout <= 86400, 1,
                "timeout: seconds from 0 to 86400 expected");
  lua_getfield(L, 1, "max_output");
  r->max_output = luaL_optinteger(L, -1, 64 << 20);
  luaL_argcheck(L, r->max_output > 0, 1, "max_output: bytes expected");
  lua_getfield(L, 1, "memory_limit");
  r->memory = luaL_optinteger(L, -1, (lua_Integer)1 << 30);
  luaL_argcheck(L, r->memory >= 64 << 20, 1,
                "memory_limit: at least 64 MiB (Go starts in some 40)");
  lua_getfield(L, 1, "copies");
  *list = !lua_isnil(L, -1);
  *copies = (int)luaL_optinteger(L, -1, 1);
  luaL_argcheck(L, *copies >= 1 && *copies <= MAX_COPIES, 1,
                "copies: from 1 to 4 expected");
  lua_pop(L, 6);
}

/* Each Helm's folder, argv and environment, held by a table each on the
 * stack: 0, or -1 with fail and a message pushed, the folders removed. */
static int prepare(lua_State *L, struct kid *k, int n)
{
  int i, j;
  luaL_checkstack(L, n + 8, NULL);
  for (i = 0; i < n; i++) {
    const char *why;
    int hold, e;
    lua_newtable(L);
    hold = lua_gettop(L);
    if ((why = make_folder(&k[i].r)) == NULL
        && build_argv(L, &k[i].r, hold) == 0) {
      build_env(L, &k[i].r, hold);
      continue;
    }
    e = errno;
    for (j = 0; j < i; j++)
      uh_rmtree(k[j].r.dir);
    if (k[i].r.dir[0] && !strstr(k[i].r.dir, "XXXXXX"))
      uh_rmtree(k[i].r.dir);
    luaL_pushfail(L);
    if (why)
      lua_pushfstring(L, "cannot make Helm's folder (%s): %s", why,
                      strerror(e));
    else
      lua_rotate(L, -2, 1);   /* build_argv's message on top */
    return -1;
  }
  return 0;
}

int helm_render(lua_State *L)
{
  struct render conf;
  struct kid *k;
  struct stat st;
  int n, list, i;
  memset(&conf, 0, sizeof conf);
  read_conf(L, &conf, &n, &list);
  if (uh_interrupted) {   /* no Helm is started to be killed at once */
    luaL_pushfail(L);
    lua_pushliteral(L, INTERRUPTED);
    return 2;
  }
  if (stat(conf.helm, &st) != 0 && (errno == ENOENT || errno == ENOTDIR)) {
    luaL_pushfail(L);
    lua_pushfstring(L, "Helm not found at %s", conf.helm);
    return 2;
  }
  conf.root = geteuid() == 0;
  conf.uid = conf.root ? NOBODY : getuid();
  conf.gid = conf.root ? NOBODY : getgid();
  snprintf(conf.uid_map, sizeof conf.uid_map, "%u %u 1", conf.uid, conf.uid);
  snprintf(conf.gid_map, sizeof conf.gid_map, "%u %u 1", conf.gid, conf.gid);
  k = lua_newuserdatauv(L, (size_t)n * sizeof *k, 0);
  memset(k, 0, (size_t)n * sizeof *k);
  for (i = 0; i < n; i++)
    k[i].r = conf;
  if (prepare(L, k, n) != 0)
    return 2;
  return run(L, k, n, list);
}

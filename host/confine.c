/* Confinement of the hook child (see confine.h, docs/security.md).
 *
 * The parent compiles the seccomp filter once with libseccomp and keeps
 * the BPF program in memory; a forked child inherits it and installs it
 * with one prctl, so confinement costs a few microseconds per child. */
#include "confine.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UH_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(UH_ASAN)
#define UH_ASAN 1
#endif

#ifdef UH_ASAN
/* Sanitizer builds keep a dup of stderr here for ASan/UBSan reports, so
 * a bug found in the child is not lost as a bare SIGSYS. */
#define REPORT_FD (UH_CONFINE_WFD + 1)
void __sanitizer_set_report_fd(void *fd);
#define FIRST_FREE_FD (REPORT_FD + 1)
#else
#define FIRST_FREE_FD (UH_CONFINE_WFD + 1)
#endif

/* The compiled filter, built by uh_confine_prepare in the parent. */
static struct sock_filter *bpf_insns;
static unsigned short bpf_len;

static int fail(char *err, size_t errlen, int e, const char *fmt, ...)
{
  if (err && errlen) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    if (e && n >= 0 && (size_t)n < errlen)
      snprintf(err + n, errlen - (size_t)n, ": %s", strerror(e));
  }
  return -1;
}

/* One allowed syscall with up to two argument conditions, all of which
 * must hold. */
struct rule {
  int nr;
  unsigned ncmp;
  struct scmp_arg_cmp cmp[2];
};
#define CMP(i, o, a, b) { .arg = (i), .op = (o), .datum_a = (a), .datum_b = (b) }
#define ANY(name) { SCMP_SYS(name), 0, { { 0, 0, 0, 0 } } }
#define ARG(name, i, o, a, b) { SCMP_SYS(name), 1, { CMP(i, o, a, b) } }
#define NOEXEC(name) ARG(name, 2, SCMP_CMP_MASKED_EQ, PROT_EXEC, 0)

/* The whole allow list: what a Lua VM talking over two pipes needs.
 * Keep docs/security.md in step with it. */
static const struct rule allow[] = {
  /* the RPC pipes, and nothing else */
  ARG(read, 0, SCMP_CMP_EQ, UH_CONFINE_RFD, 0),
  ARG(write, 0, SCMP_CMP_EQ, UH_CONFINE_WFD, 0),
  ARG(writev, 0, SCMP_CMP_EQ, UH_CONFINE_WFD, 0),   /* a frame in one call */
  /* malloc: brk for small blocks, mmap/mremap/munmap above 128 KiB,
     madvise/mprotect when trimming; never executable memory */
  ANY(brk),
  NOEXEC(mmap),
  NOEXEC(mprotect),
  ANY(munmap),
  ANY(mremap),
  ANY(madvise),
  /* os.clock is CLOCK_PROCESS_CPUTIME_ID, which the vDSO does not
     serve; other clocks fall back to the syscall off a vDSO clocksource */
  ANY(clock_gettime),
  ANY(rt_sigreturn),
  ANY(exit),
  ANY(exit_group),
};

#ifdef UH_ASAN
/* ASan+UBSan builds only: what the sanitizer runtime itself calls in a
 * confined child (see docs/security.md).  Never in a release build. */
static const struct rule allow_asan[] = {
  /* the _exit interceptor queries the alternate signal stack */
  ANY(sigaltstack),
  /* a report: "==pid==" prefixes, isatty for colour, the text */
  ANY(getpid),
  { SCMP_SYS(ioctl), 2, { CMP(0, SCMP_CMP_EQ, REPORT_FD, 0),
                          CMP(1, SCMP_CMP_EQ, TCGETS, 0) } },
  ARG(write, 0, SCMP_CMP_EQ, REPORT_FD, 0),
};
#endif

static int add_rules(scmp_filter_ctx ctx, const struct rule *r, size_t n,
                     char *err, size_t errlen)
{
  for (size_t i = 0; i < n; i++) {
    int rc = seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, r[i].nr,
                                    r[i].ncmp, r[i].ncmp ? r[i].cmp : NULL);
    if (rc < 0)
      return fail(err, errlen, -rc, "seccomp rule for syscall %d", r[i].nr);
  }
  return 0;
}

/* seccomp_export_bpf only writes to an fd: export into a memfd and read
 * the program back into memory the child inherits. */
static int export_bpf(scmp_filter_ctx ctx, char *err, size_t errlen)
{
  int fd = memfd_create("uh-seccomp", MFD_CLOEXEC);
  if (fd < 0) return fail(err, errlen, errno, "memfd_create");
  int rc = seccomp_export_bpf(ctx, fd);
  struct stat st;
  if (rc < 0) {
    close(fd);
    return fail(err, errlen, -rc, "seccomp_export_bpf");
  }
  if (fstat(fd, &st) < 0 || st.st_size <= 0 ||
      st.st_size % (off_t)sizeof(struct sock_filter) ||
      st.st_size / (off_t)sizeof(struct sock_filter) > BPF_MAXINSNS) {
    close(fd);
    return fail(err, errlen, 0, "seccomp filter has a bad size");
  }
  struct sock_filter *p = malloc((size_t)st.st_size);
  ssize_t got = p ? pread(fd, p, (size_t)st.st_size, 0) : -1;
  int e = errno;
  close(fd);
  if (got != st.st_size) {
    free(p);
    return fail(err, errlen, p ? e : ENOMEM, "reading the seccomp filter");
  }
  bpf_insns = p;
  bpf_len = (unsigned short)(st.st_size / (off_t)sizeof(struct sock_filter));
  return 0;
}

int uh_confine_prepare(char *err, size_t errlen)
{
  if (bpf_insns) return 0;
  /* os.date's localtime would open /etc/localtime in the child; load it
     here so children inherit it. */
  tzset();
#ifdef UH_VALGRIND
  /* `make valgrind` builds only (tests/valgrind/run.sh): valgrind has no
     seccomp(2), so libseccomp cannot start, and a filter would kill its
     own system calls in the child.  Fds and rlimits still apply. */
  static struct sock_filter none;
  bpf_insns = &none;
  return 0;
#endif
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_KILL_PROCESS);
  if (!ctx) return fail(err, errlen, 0, "seccomp_init failed");
  int rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
  if (rc < 0) {
    seccomp_release(ctx);
    return fail(err, errlen, -rc, "seccomp bad-arch action");
  }
  rc = add_rules(ctx, allow, sizeof allow / sizeof allow[0], err, errlen);
#ifdef UH_ASAN
  if (rc == 0)
    rc = add_rules(ctx, allow_asan, sizeof allow_asan / sizeof allow_asan[0],
                   err, errlen);
#endif
  if (rc == 0) rc = export_bpf(ctx, err, errlen);
  seccomp_release(ctx);
  return rc;
}

/* Address space mapped now, from /proc/self/statm (pages). */
static int vm_size(size_t *out)
{
  int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  char buf[128];
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return -1;
  buf[n] = 0;
  char *end;
  errno = 0;
  unsigned long long pages = strtoull(buf, &end, 10);
  if (errno || end == buf) return -1;
  *out = (size_t)pages * (size_t)sysconf(_SC_PAGESIZE);
  return 0;
}

/* rfd -> 3, wfd -> 4, everything else closed.  Dup both above 4 first so
 * neither dup2 can clobber the other's source. */
static int move_fds(int rfd, int wfd, char *err, size_t errlen)
{
  int r = fcntl(rfd, F_DUPFD, FIRST_FREE_FD);
  if (r < 0) return fail(err, errlen, errno, "dup of fd %d", rfd);
  int w = fcntl(wfd, F_DUPFD, FIRST_FREE_FD);
  if (w < 0) return fail(err, errlen, errno, "dup of fd %d", wfd);
  if (dup2(r, UH_CONFINE_RFD) < 0 || dup2(w, UH_CONFINE_WFD) < 0)
    return fail(err, errlen, errno, "dup2");
#ifdef UH_ASAN
  if (dup2(2, REPORT_FD) == REPORT_FD)
    __sanitizer_set_report_fd((void *)(long)REPORT_FD);
  else
    close(REPORT_FD);
#endif
  if (close_range(FIRST_FREE_FD, ~0U, 0) < 0 ||
      close_range(0, UH_CONFINE_RFD - 1, 0) < 0)
    return fail(err, errlen, errno, "close_range");
  return 0;
}

static int set_limit(int res, const char *name, rlim_t soft, rlim_t hard,
                     char *err, size_t errlen)
{
  struct rlimit rl = { soft, hard };
  if (setrlimit(res, &rl) < 0)
    return fail(err, errlen, errno, "setrlimit(%s)", name);
  return 0;
}

static int set_limits(const struct uh_limits *lim, char *err, size_t errlen)
{
  size_t base;
  if (vm_size(&base) < 0)
    return fail(err, errlen, errno, "reading /proc/self/statm");
  rlim_t as = (rlim_t)base + lim->as_bytes;
  if (as < base || as == RLIM_INFINITY) as = RLIM_INFINITY - 1;
  rlim_t nofile_max = lim->nofile;
#ifdef UH_VALGRIND
  /* valgrind refuses to change the NOFILE hard limit; the soft one holds */
  struct rlimit nf;
  if (getrlimit(RLIMIT_NOFILE, &nf) == 0) nofile_max = nf.rlim_max;
#endif
  if (set_limit(RLIMIT_CORE, "CORE", 0, 0, err, errlen) ||
      set_limit(RLIMIT_NPROC, "NPROC", 0, 0, err, errlen) ||
      set_limit(RLIMIT_FSIZE, "FSIZE", 0, 0, err, errlen) ||
      set_limit(RLIMIT_NOFILE, "NOFILE", lim->nofile, nofile_max, err,
                errlen) ||
      set_limit(RLIMIT_CPU, "CPU", lim->cpu_seconds,
                (rlim_t)lim->cpu_seconds + 1, err, errlen) ||
      set_limit(RLIMIT_AS, "AS", as, as, err, errlen))
    return -1;
  return 0;
}

int uh_confine_enter(int rfd, int wfd, const struct uh_limits *lim,
                     char *err, size_t errlen)
{
  if (!bpf_insns)
    return fail(err, errlen, 0, "uh_confine_prepare was not called");
  if (!lim || lim->as_bytes == 0 || lim->cpu_seconds == 0)
    return fail(err, errlen, 0, "confinement needs AS and CPU limits");
  if (rfd < 0 || wfd < 0)
    return fail(err, errlen, EBADF, "confinement pipes");
  if (move_fds(rfd, wfd, err, errlen) || set_limits(lim, err, errlen))
    return -1;
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
    return fail(err, errlen, errno, "PR_SET_NO_NEW_PRIVS");
  if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
    return fail(err, errlen, errno, "PR_SET_DUMPABLE");
#ifndef UH_VALGRIND
  struct sock_fprog prog = { bpf_len, bpf_insns };
  if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) < 0)
    return fail(err, errlen, errno, "PR_SET_SECCOMP");
#endif
  return 0;
}

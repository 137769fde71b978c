/* Confinement of the hook child: fds, rlimits and a seccomp filter.
 * See docs/security.md for the threat model and the exact allow list. */
#ifndef UH_CONFINE_H
#define UH_CONFINE_H
#include <stddef.h>

/* The only fds a confined child has: requests in, answers out.
 * The filter allows read() on UH_CONFINE_RFD and write() on
 * UH_CONFINE_WFD, nothing else. */
#define UH_CONFINE_RFD 3
#define UH_CONFINE_WFD 4

struct uh_limits {
  size_t as_bytes;      /* RLIMIT_AS headroom: bytes of address space the
                           child may map beyond what it has at entry */
  unsigned cpu_seconds; /* RLIMIT_CPU: SIGXCPU at n s, SIGKILL at n+1 s */
  unsigned nofile;      /* RLIMIT_NOFILE */
};

/* In the parent, once (idempotent): build the filter with libseccomp
 * and keep its compiled BPF in memory, so each child only installs it.
 * Also primes state that libc would otherwise load from files later
 * (tzset for os.date).  Returns 0, or -1 with err filled. */
int uh_confine_prepare(char *err, size_t errlen);

/* In the forked, single-threaded child, after its Lua state is set up
 * and before hook code runs.  Moves rfd to 3 and wfd to 4, closes every
 * other fd (0, 1 and 2 too), sets the rlimits (AS, CPU, NOFILE, and
 * CORE, NPROC, FSIZE to 0), sets NO_NEW_PRIVS and DUMPABLE 0, then
 * installs the filter.  Afterwards any syscall outside the allow list
 * kills the process with SIGSYS.  Returns 0, or -1 with err filled (the
 * child must then _exit: it may be half confined). */
int uh_confine_enter(int rfd, int wfd, const struct uh_limits *lim,
                     char *err, size_t errlen);

#endif

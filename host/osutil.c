/* Operating-system services shared by the host (see osutil.h). */
#include "osutil.h"
#include "arena.h"
#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <limits.h>
#include <malloc.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

double uh_monotonic(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void uh_sleep(double s)
{
  struct timespec ts;
  if (!(s > 0))
    return;
  ts.tv_sec = (time_t)s;
  ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
    ;
}

int uh_writev_all(int fd, struct iovec *iov, int cnt)
{
  while (cnt > 0) {
    ssize_t w;
    if (iov->iov_len == 0) {
      iov++;
      cnt--;
      continue;
    }
    w = writev(fd, iov, cnt < IOV_MAX ? cnt : IOV_MAX);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0) {
      if (w == 0)
        errno = EIO;
      return -1;
    }
    for (; cnt > 0 && (size_t)w >= iov->iov_len; iov++, cnt--)
      w -= (ssize_t)iov->iov_len;
    if (cnt > 0) {
      iov->iov_base = (char *)iov->iov_base + w;
      iov->iov_len -= (size_t)w;
    }
  }
  return 0;
}

int uh_write_all(int fd, const void *buf, size_t n)
{
  struct iovec v = { (void *)buf, n };
  return uh_writev_all(fd, &v, 1);
}

#define HUGE_PAGE ((size_t)2 << 20)

/* Whole huge pages: the tail of a block is filled as fast as the rest. */
static size_t map_len(size_t n)
{
  return (n + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
}

/* A mapping of n bytes on a 2 MiB boundary (the slack around it given
 * back), offered huge pages. */
static void *big_map(size_t n)
{
  size_t len = map_len(n);
  char *m = mmap(NULL, len + HUGE_PAGE, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), *a;
  if (m == MAP_FAILED)
    return NULL;
  a = (char *)(((uintptr_t)m + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1));
  if (a > m)
    munmap(m, (size_t)(a - m));
  munmap(a + len, (size_t)(m + HUGE_PAGE - a));
  (void)madvise(a, len, MADV_HUGEPAGE);
  return a;
}

static void *big_move(void *p, size_t osize, void *to, size_t n)
{
  if (to) {
    memcpy(to, p, n);
    uh_big_realloc(p, osize, 0);
  }
  return to;
}

void uh_big_heap(void)
{
  static uintptr_t advised;
  uintptr_t top = (uintptr_t)sbrk(0), lo;
  if (!advised) {
    mallopt(M_TOP_PAD, (int)UH_BIG_HEAP);
    advised = top;
  }
  if (top <= advised)
    return;
  lo = (advised + HUGE_PAGE - 1) & ~(uintptr_t)(HUGE_PAGE - 1);
  if (top > lo)
    (void)madvise((void *)lo, top - lo, MADV_HUGEPAGE);
  advised = top;
}

void *uh_big_realloc(void *p, size_t osize, size_t nsize)
{
  int was = p && osize >= UH_BIG_MIN, big = nsize >= UH_BIG_MIN;
  void *q;
  if (nsize == 0) {
    if (was)
      munmap(p, map_len(osize));
    else
      free(p);
    return NULL;
  }
  if (!was && !big)
    return realloc(p, nsize);
  if (!p)
    return big_map(nsize);
  if (!was)
    return big_move(p, osize, big_map(nsize), osize);
  if (!big)
    return big_move(p, osize, malloc(nsize), nsize);
  if (map_len(nsize) == map_len(osize))
    return p;
  q = mremap(p, map_len(osize), map_len(nsize), MREMAP_MAYMOVE);
  if (q == MAP_FAILED)
    return NULL;
  if (nsize > osize)
    (void)madvise(q, map_len(nsize), MADV_HUGEPAGE);
  return q;
}

int uh_run(const char *const argv[])
{
  pid_t pid;
  int st, e;
  fflush(stdout);
  fflush(stderr);
  uh_env_keep_on_fork(1);   /* posix_spawn forks under valgrind */
  e = posix_spawnp(&pid, argv[0], NULL, NULL, (char *const *)argv, environ);
  uh_env_keep_on_fork(0);
  if (e != 0) {
    errno = e;
    return -1;
  }
  while (waitpid(pid, &st, 0) < 0)
    if (errno != EINTR)
      return -1;
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

void uh_wait_begin(struct uh_wait *w, double deadline, volatile int *intr)
{
  sigset_t block;
  w->deadline = deadline;
  w->intr = intr;
  if (intr) {
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    sigprocmask(SIG_BLOCK, &block, &w->old);
  }
}

void uh_wait_end(struct uh_wait *w)
{
  if (w->intr)
    sigprocmask(SIG_SETMASK, &w->old, NULL);
}

int uh_wait_poll(struct uh_wait *w, struct pollfd *fds, unsigned n)
{
  for (;;) {
    struct timespec ts, *tp = NULL;
    int r;
    if (w->intr && *w->intr)
      return UH_WAIT_INTR;
    if (w->deadline >= 0) {
      double left = w->deadline - uh_monotonic();
      if (left <= 0)
        return UH_WAIT_TIMEOUT;
      if (left > 3600)
        left = 3600;
      ts.tv_sec = (time_t)left;
      ts.tv_nsec = (long)((left - (double)ts.tv_sec) * 1e9);
      tp = &ts;
    }
    r = ppoll(fds, n, tp, w->intr ? &w->old : NULL);
    if (r > 0)
      return r;
    if (r < 0 && errno != EINTR)
      return UH_WAIT_ERR;
  }
}

/* Edit distance of a and b with adjacent transpositions as one edit
 * (optimal string alignment: "dsn" is one edit from "dns"), capped at 9
 * (words of 63 bytes). */
static size_t edits(const char *a, const char *b)
{
  size_t la = strlen(a), lb = strlen(b), rows[3][64], i, j;
  size_t *prev2 = rows[0], *prev = rows[1], *cur = rows[2], *t;
  if (la > 63 || lb > 63)
    return 9;
  for (j = 0; j <= lb; j++)
    prev[j] = j;
  for (i = 1; i <= la; i++) {
    cur[0] = i;
    for (j = 1; j <= lb; j++) {
      size_t best = prev[j - 1] + (a[i - 1] != b[j - 1]);
      if (prev[j] + 1 < best)
        best = prev[j] + 1;
      if (cur[j - 1] + 1 < best)
        best = cur[j - 1] + 1;
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]
          && prev2[j - 2] + 1 < best)
        best = prev2[j - 2] + 1;
      cur[j] = best;
    }
    t = prev2;
    prev2 = prev;
    prev = cur;
    cur = t;
  }
  return prev[lb] > 9 ? 9 : prev[lb];
}

const char *uh_closest(const char *word, const char *const *cands, size_t n)
{
  const char *best = NULL;
  size_t d, bd = 3, i;
  for (i = 0; i < n; i++)
    if (cands[i] && (d = edits(word, cands[i])) < bd && d * 2 < strlen(word)) {
      bd = d;
      best = cands[i];
    }
  return best;
}

#define COPYBUF (1 << 20)

int uh_copy_file(int in, int out, off_t size)
{
  ssize_t r;
  char *buf;
  int first = 1, saved;

  for (;;) {
    r = copy_file_range(in, NULL, out, NULL, (size_t)1 << 30, 0);
    if (r > 0) {
      first = 0;
      continue;
    }
    if (r == 0 && (!first || size == 0))
      return 0;
    if (r < 0 && errno == EINTR)
      continue;
    if (!first)
      return -1;
    break;   /* unsupported here (EXDEV, EINVAL, ...): plain copy */
  }
  buf = malloc(COPYBUF);
  if (!buf) {
    errno = ENOMEM;
    return -1;
  }
  for (;;) {
    r = read(in, buf, COPYBUF);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0 || uh_write_all(out, buf, (size_t)r) != 0)
      break;
  }
  saved = errno;
  free(buf);
  errno = saved;
  return r == 0 ? 0 : -1;
}

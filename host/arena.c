/* The wiped credential arena (see arena.h). */
#include "arena.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

uh_err uh_arena_open(uh_arena *a, size_t len)
{
  void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  memset(a, 0, sizeof *a);
  if (p == MAP_FAILED)
    return UH_ENOMEM;
#ifdef MADV_WIPEONFORK
  (void)madvise(p, len, MADV_WIPEONFORK);
#endif
#ifdef MADV_DONTDUMP
  (void)madvise(p, len, MADV_DONTDUMP);
#endif
  a->base = p;
  a->len = len;
  return UH_OK;
}

void uh_arena_keep_on_fork(uh_arena *a, int keep)
{
  if (!a->base)
    return;
#if defined(MADV_KEEPONFORK) && defined(MADV_WIPEONFORK)
  (void)madvise(a->base, a->len, keep ? MADV_KEEPONFORK : MADV_WIPEONFORK);
#else
  (void)keep;
#endif
}

char *uh_arena_take(uh_arena *a, size_t n)
{
  char *p;
  if (!a->base || n + 1 > a->len - a->used)
    return NULL;
  p = (char *)a->base + a->used;
  a->used += n + 1;
  p[n] = '\0';
  return p;
}

void uh_arena_free(uh_arena *a)
{
  if (a->base) {
    /* only the used prefix was ever written: wiping the whole arena would
     * fault in its zero pages just to zero them again */
    explicit_bzero(a->base, a->used);
    munmap(a->base, a->len);
  }
  memset(a, 0, sizeof *a);
}

uh_err uh_secret_read(const char *path, size_t max, char **out,
                      size_t *outlen, int *errnum)
{
  struct stat st;
  char *buf;
  size_t got = 0;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  *errnum = 0;
  *out = NULL;
  *outlen = 0;
  if (fd < 0 || fstat(fd, &st) != 0) {
    *errnum = errno;
    if (fd >= 0)
      close(fd);
    return *errnum == ENOENT ? UH_ENOENT : UH_EIO;
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    *errnum = EISDIR;
    return UH_EIO;
  }
  if ((size_t)st.st_size > max || !(buf = malloc((size_t)st.st_size + 1))) {
    close(fd);
    return (size_t)st.st_size > max ? UH_ELIMIT : UH_ENOMEM;
  }
  while (got < (size_t)st.st_size) {
    ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      break;
    got += (size_t)r;
  }
  close(fd);
  buf[got] = '\0';
  *out = buf;
  *outlen = got;
  return UH_OK;
}

void uh_secret_drop(char *buf, size_t len)
{
  if (buf) {
    explicit_bzero(buf, len);
    free(buf);
  }
}

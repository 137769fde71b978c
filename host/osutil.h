/* Operating-system services every part of the host shares: the one
 * monotonic clock, the one sleep, the one write-all loop and the one
 * way to run a program.  No Lua here; uphook.c.sys exposes them to the
 * engine. */
#ifndef UH_OSUTIL_H
#define UH_OSUTIL_H
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <sys/types.h>

/* CLOCK_MONOTONIC in seconds: deadlines, timeouts, progress. */
double uh_monotonic(void);

/* Sleep s seconds; a signal does not cut it short (s <= 0: return). */
void uh_sleep(double s);

/* Write all n bytes to fd, retrying on EINTR: 0, or -1 with errno. */
int uh_write_all(int fd, const void *buf, size_t n);
/* The same for the bytes of cnt iovecs, in as few writev as the file
 * takes them (the iovecs are used up on the way). */
struct iovec;
int uh_writev_all(int fd, struct iovec *iov, int cnt);

/* realloc(p, nsize) for blocks that may be big, with free and malloc in
 * it (nsize 0 frees; p NULL allocates), as a lua_Alloc is: osize is p's
 * size.  A block of UH_BIG_MIN bytes or more gets a mapping of its own on
 * a 2 MiB boundary, offered to the kernel as huge pages (madvise
 * MADV_HUGEPAGE; the system default is "madvise"): filling 11 MB then
 * faults some 10 times instead of 2800 (docs/bench.md, "Big reads").
 * The Lua states' allocators and the big RPC frames use it. */
#define UH_BIG_MIN ((size_t)4 << 20)
void *uh_big_realloc(void *p, size_t osize, size_t nsize);
/* A heap of UH_BIG_HEAP bytes or more (a hook's decoded 11.6 MB of YAML
 * takes some 30 MB of small blocks) grows in steps of 8 MiB, each step
 * offered huge pages as uh_big_realloc's blocks are: the hook child's
 * allocator calls it after each allocation once its heap is that big. */
#define UH_BIG_HEAP ((size_t)8 << 20)
void uh_big_heap(void);

/* Run argv (argv[0] looked up in PATH, no shell), wait for it: its exit
 * status, 128+signal when killed, or -1 with errno when it could not be
 * started or waited for. */
int uh_run(const char *const argv[]);

/* A wait for descriptors until a deadline (CLOCK_MONOTONIC; < 0: none)
 * and, with intr, until *intr is set (uh_interrupted: SIGINT, SIGTERM,
 * host/main.c).  uh_wait_begin blocks those two signals until
 * uh_wait_end; each uh_wait_poll checks *intr, then unblocks them only
 * inside ppoll, atomically, so that one that comes in between cuts the
 * wait short at once instead of being noticed at the deadline.  The
 * broker's frames (host/rpc.c) and the Helm render child
 * (host/helm_render.c) wait through it. */
struct uh_wait {
  double deadline;
  volatile int *intr;
  sigset_t old;          /* the mask to poll with (with intr) */
};
enum { UH_WAIT_TIMEOUT = 0, UH_WAIT_ERR = -1, UH_WAIT_INTR = -2 };

void uh_wait_begin(struct uh_wait *w, double deadline, volatile int *intr);
void uh_wait_end(struct uh_wait *w);
/* Poll fds until one has an event: how many have, or UH_WAIT_TIMEOUT,
 * UH_WAIT_INTR, or UH_WAIT_ERR with errno. */
int uh_wait_poll(struct uh_wait *w, struct pollfd *fds, unsigned n);

/* The word of `cands` (n of them) nearest to `word` by edit distance,
 * when it is at most 2 edits and less than half the word away: "did you
 * mean"; NULL otherwise. */
const char *uh_closest(const char *word, const char *const *cands, size_t n);

/* Copy in (a regular file of `size` bytes, at offset 0) to out:
 * copy_file_range where the filesystems allow, else read/write.  0, or
 * -1 with errno. */
int uh_copy_file(int in, int out, off_t size);

#endif

/* Length-prefixed MessagePack frames over pipes. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/uio.h>
#include <unistd.h>
#include <msgpack.h>
#include "mpack.h"
#include "rpc.h"
#include "os.h"

/* Header and body in one writev when the pipe takes it all (the usual
 * case), else the rest piece by piece. */
static int write_frame(int fd, const unsigned char hdr[4], const char *buf,
                       size_t len)
{
  struct iovec iov[2] = { { (void *)hdr, 4 }, { (void *)buf, len } };
  ssize_t w;
  do
    w = writev(fd, iov, 2);
  while (w < 0 && errno == EINTR);
  if (w < 0)
    return -1;
  if ((size_t)w < 4)
    return uh_write_all(fd, (const char *)hdr + w, 4 - (size_t)w)
           || uh_write_all(fd, buf, len);
  return uh_write_all(fd, buf + (w - 4), len - ((size_t)w - 4));
}

/* Write an already packed payload as one frame. */
static int send_frame(int fd, const char *buf, size_t len, char *err,
                      size_t errlen)
{
  unsigned char hdr[4];
  if (len > UH_RPC_MAX_FRAME) {
    snprintf(err, errlen, "message of %zu bytes exceeds the %u MiB limit",
             len, UH_RPC_MAX_FRAME >> 20);
    return UH_RPC_ERR;
  }
  hdr[0] = (unsigned char)len;
  hdr[1] = (unsigned char)(len >> 8);
  hdr[2] = (unsigned char)(len >> 16);
  hdr[3] = (unsigned char)(len >> 24);
  if (write_frame(fd, hdr, buf, len)) {
    snprintf(err, errlen, "pipe write failed: %s", strerror(errno));
    return UH_RPC_ERR;
  }
  return UH_RPC_OK;
}

int uh_rpc_send(int fd, lua_State *L, int idx, char *err, size_t errlen)
{
  msgpack_sbuffer sb;
  int rc;
  msgpack_sbuffer_init(&sb);
  if (uh_mpack_pack(L, idx, &sb, err, errlen) != 0) {
    msgpack_sbuffer_destroy(&sb);
    return UH_RPC_ERR;
  }
  rc = send_frame(fd, sb.data ? sb.data : "", sb.size, err, errlen);
  msgpack_sbuffer_destroy(&sb);
  return rc;
}

/* Wait until fd is readable or the deadline passes.  With intr, the
 * signals that set it (SIGINT, SIGTERM: host/main.c) are blocked from the
 * check of *intr until ppoll unblocks them atomically, so that one that
 * comes in between cuts the wait short instead of being noticed only at
 * the deadline. */
static int wait_readable(int fd, double deadline, volatile int *intr)
{
  sigset_t block, old;
  int rc;
  sigemptyset(&block);
  if (intr) {
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
  }
  sigprocmask(SIG_BLOCK, &block, &old);
  for (;;) {
    struct pollfd p = { .fd = fd, .events = POLLIN };
    struct timespec ts, *tp = NULL;
    int r;
    if (intr && *intr) {
      rc = UH_RPC_INTR;
      break;
    }
    if (deadline >= 0) {
      double left = deadline - uh_monotonic();
      if (left <= 0) {
        rc = UH_RPC_TIMEOUT;
        break;
      }
      if (left > 3600)
        left = 3600;
      ts.tv_sec = (time_t)left;
      ts.tv_nsec = (long)((left - (double)ts.tv_sec) * 1e9);
      tp = &ts;
    }
    r = ppoll(&p, 1, tp, &old);
    if (r > 0) {
      rc = UH_RPC_OK;
      break;
    }
    if (r < 0 && errno != EINTR) {
      rc = UH_RPC_ERR;
      break;
    }
  }
  sigprocmask(SIG_SETMASK, &old, NULL);
  return rc;
}

static int read_all(int fd, char *p, size_t n, double deadline,
                    volatile int *intr)
{
  size_t got = 0;
  while (got < n) {
    ssize_t r;
    /* the confined child may only read(): it blocks without poll */
    int w = deadline < 0 && !intr ? UH_RPC_OK
            : wait_readable(fd, deadline, intr);
    if (w != UH_RPC_OK)
      return w;
    r = read(fd, p + got, n - got);
    if (r < 0 && errno == EINTR)
      continue;
    if (r < 0)
      return UH_RPC_ERR;
    if (r == 0)
      return UH_RPC_EOF;
    got += (size_t)r;
  }
  return UH_RPC_OK;
}

int uh_rpc_recv(int fd, lua_State *L, double deadline, volatile int *intr,
                char *err, size_t errlen)
{
  return uh_rpc_recv_max(fd, L, deadline, intr, 0, err, errlen);
}

int uh_rpc_recv_max(int fd, lua_State *L, double deadline,
                    volatile int *intr, size_t max_nodes, char *err,
                    size_t errlen)
{
  unsigned char hdr[4];
  uint32_t len;
  char *buf;
  int rc = read_all(fd, (char *)hdr, 4, deadline, intr);
  if (rc != UH_RPC_OK) {
    snprintf(err, errlen, "%s", rc == UH_RPC_EOF ? "end of stream"
             : rc == UH_RPC_TIMEOUT ? "deadline passed" : "pipe read failed");
    return rc;
  }
  len = hdr[0] | (uint32_t)hdr[1] << 8 | (uint32_t)hdr[2] << 16
        | (uint32_t)hdr[3] << 24;
  if (len > UH_RPC_MAX_FRAME) {
    snprintf(err, errlen, "frame of %u bytes exceeds the limit", len);
    return UH_RPC_ERR;
  }
  buf = malloc(len ? len : 1);
  if (!buf) {
    snprintf(err, errlen, "out of memory for a %u byte frame", len);
    return UH_RPC_ERR;
  }
  rc = read_all(fd, buf, len, deadline, intr);
  if (rc == UH_RPC_OK &&
      uh_mpack_unpack_push_max(L, buf, len, max_nodes, err, errlen) != 0)
    rc = UH_RPC_ERR;
  else if (rc != UH_RPC_OK)
    snprintf(err, errlen, "%s", rc == UH_RPC_EOF ? "truncated frame"
             : rc == UH_RPC_TIMEOUT ? "deadline passed" : "pipe read failed");
  free(buf);
  return rc;
}

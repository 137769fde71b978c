/* Length-prefixed MessagePack frames over pipes. */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>
#include <msgpack.h>
#include "mpack.h"
#include "rpc.h"
#include "osutil.h"
#include "payload.h"

/* Write iov[0..*cnt) and start a new list. */
static int flush(int fd, struct iovec *iov, int *cnt, char *err,
                 size_t errlen)
{
  int n = *cnt;
  *cnt = 0;
  if (uh_writev_all(fd, iov, n) == 0)
    return UH_RPC_OK;
  snprintf(err, errlen, "pipe write failed: %s", strerror(errno));
  return UH_RPC_ERR;
}

/* A payload's file spliced into the pipe after what is listed so far. */
static int send_file(int fd, struct iovec *iov, int *cnt, int *file,
                     size_t n, char *err, size_t errlen)
{
  if (flush(fd, iov, cnt, err, errlen) != UH_RPC_OK)
    return UH_RPC_ERR;
  if (uh_payload_send(file, n, fd) == 0)
    return UH_RPC_OK;
  snprintf(err, errlen, "a file of %zu bytes could not be sent: %s", n,
           errno == ENODATA ? "it shrank while it was being sent"
           : strerror(errno));
  return UH_RPC_ERR;
}

/* The frame of a packed payload: the length, then sb's bytes with each
 * big string's body (refs) in its place, sent from the Lua string or
 * spliced from the payload's file. */
static int send_frame(int fd, const msgpack_sbuffer *sb,
                      const uh_mpack_refs *refs, char *err, size_t errlen)
{
  unsigned char hdr[4];
  struct iovec iov[2 + 2 * UH_MPACK_MAX_REFS];
  size_t len = sb->size, at = 0;
  int i, cnt = 1;
  for (i = 0; i < refs->n; i++)
    len += refs->ref[i].n;
  if (len > UH_RPC_MAX_FRAME) {
    snprintf(err, errlen, "message of %zu bytes exceeds the %u MiB limit",
             len, UH_RPC_MAX_FRAME >> 20);
    return UH_RPC_ERR;
  }
  hdr[0] = (unsigned char)len;
  hdr[1] = (unsigned char)(len >> 8);
  hdr[2] = (unsigned char)(len >> 16);
  hdr[3] = (unsigned char)(len >> 24);
  iov[0].iov_base = hdr;
  iov[0].iov_len = 4;
  for (i = 0; i < refs->n; i++) {
    iov[cnt].iov_base = sb->data + at;
    iov[cnt++].iov_len = refs->ref[i].at - at;
    at = refs->ref[i].at;
    if (refs->ref[i].p) {
      iov[cnt].iov_base = (void *)refs->ref[i].p;
      iov[cnt++].iov_len = refs->ref[i].n;
    } else if (send_file(fd, iov, &cnt, refs->ref[i].fd, refs->ref[i].n,
                         err, errlen) != UH_RPC_OK) {
      return UH_RPC_ERR;
    }
  }
  iov[cnt].iov_base = sb->data ? (void *)(sb->data + at) : (void *)hdr;
  iov[cnt++].iov_len = sb->size - at;
  return flush(fd, iov, &cnt, err, errlen);
}

int uh_rpc_send(int fd, lua_State *L, int idx, char *err, size_t errlen)
{
  msgpack_sbuffer spare, *sb = uh_mpack_sbuf_take(&spare);
  uh_mpack_refs refs;
  int rc = uh_mpack_pack_refs(L, idx, sb, &refs, err, errlen) != 0
           ? UH_RPC_ERR : send_frame(fd, sb, &refs, err, errlen);
  uh_mpack_sbuf_give(sb);
  return rc;
}

/* How a frame is waited for: until the deadline (< 0: none), and, with
 * intr, until *intr is set (uh_wait_begin in host/osutil.c); once per frame,
 * not per read, as the signal mask costs two system calls. */
static int wait_readable(int fd, struct uh_wait *w)
{
  struct pollfd p = { .fd = fd, .events = POLLIN };
  int r = uh_wait_poll(w, &p, 1);
  return r > 0 ? UH_RPC_OK : r == UH_WAIT_TIMEOUT ? UH_RPC_TIMEOUT
         : r == UH_WAIT_INTR ? UH_RPC_INTR : UH_RPC_ERR;
}

static int read_all(int fd, char *p, size_t n, struct uh_wait *w)
{
  size_t got = 0;
  while (got < n) {
    ssize_t r;
    /* the confined child may only read(): it blocks without poll */
    int rc = w->deadline < 0 && !w->intr ? UH_RPC_OK : wait_readable(fd, w);
    if (rc != UH_RPC_OK)
      return rc;
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

/* The buffer a frame is read into: one kept for the process (a frame is
 * decoded before the next is read) unless the frame is large. */
#define KEEP_FRAME (256u << 10)
static char *kept_buf;

static char *frame_buffer(size_t len)
{
  if (len > KEEP_FRAME)
    return uh_big_realloc(NULL, 0, len);
  if (!kept_buf)
    kept_buf = malloc(KEEP_FRAME);
  return kept_buf;
}

int uh_rpc_recv(int fd, lua_State *L, double deadline, volatile int *intr,
                char *err, size_t errlen)
{
  return uh_rpc_recv_max(fd, L, deadline, intr, 0, err, errlen);
}

/* Read one frame's payload into *buf (frame_buffer's) and its length. */
static int read_frame(int fd, struct uh_wait *w, char **buf, uint32_t *len,
                      char *err, size_t errlen)
{
  unsigned char hdr[4];
  int rc = read_all(fd, (char *)hdr, 4, w);
  if (rc != UH_RPC_OK) {
    snprintf(err, errlen, "%s", rc == UH_RPC_EOF ? "end of stream"
             : rc == UH_RPC_TIMEOUT ? "deadline passed" : "pipe read failed");
    return rc;
  }
  *len = hdr[0] | (uint32_t)hdr[1] << 8 | (uint32_t)hdr[2] << 16
         | (uint32_t)hdr[3] << 24;
  if (*len > UH_RPC_MAX_FRAME) {
    snprintf(err, errlen, "frame of %u bytes exceeds the limit", *len);
    return UH_RPC_ERR;
  }
  *buf = frame_buffer(*len);
  if (!*buf) {
    snprintf(err, errlen, "out of memory for a %u byte frame", *len);
    return UH_RPC_ERR;
  }
  rc = read_all(fd, *buf, *len, w);
  if (rc != UH_RPC_OK) {
    snprintf(err, errlen, "%s", rc == UH_RPC_EOF ? "truncated frame"
             : rc == UH_RPC_TIMEOUT ? "deadline passed" : "pipe read failed");
    if (*buf != kept_buf)
      uh_big_realloc(*buf, *len, 0);
  }
  return rc;
}

int uh_rpc_recv_max(int fd, lua_State *L, double deadline,
                    volatile int *intr, size_t max_nodes, char *err,
                    size_t errlen)
{
  struct uh_wait w;
  uint32_t len = 0;
  char *buf = NULL;
  int rc;
  uh_wait_begin(&w, deadline, intr);
  rc = read_frame(fd, &w, &buf, &len, err, errlen);
  uh_wait_end(&w);    /* before decoding, which may raise (out of memory) */
  if (rc != UH_RPC_OK)
    return rc;
  if (uh_mpack_unpack_push_max(L, buf, len, max_nodes, err, errlen) != 0)
    rc = UH_RPC_ERR;
  if (buf != kept_buf)
    uh_big_realloc(buf, len, 0);
  return rc;
}

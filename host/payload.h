/* A payload: a file's bytes bound for the hook process (addon.read of a
 * big file, lua/engine/prims/addon.lua), held as the open file and its
 * size in a full userdata, and packed by host/mpack.c as a MessagePack
 * str that host/rpc.c splices from the file into the pipe.  Lua 5.4
 * cannot build a string in place, so a file read into a string is copied
 * once more into fresh memory; a payload is never copied in the broker:
 * the kernel moves the file's cached pages into the pipe (docs/
 * internals.md "The broker–child protocol").  In the broker's Lua a
 * payload has # and tostring (a copy, read then); the hook only ever sees
 * the string its child decodes. */
#ifndef UH_PAYLOAD_H
#define UH_PAYLOAD_H
#include <stddef.h>
#include <lua.h>

#define UH_PAYLOAD_MT "uphook.payload"

/* Push a payload of the first `size` bytes of the regular file open at
 * fd (a duplicate of fd, closed once the payload is sent or collected)
 * and return 0; -1 with errno (nothing pushed) when fd cannot be
 * duplicated. */
int uh_payload_file(lua_State *L, int fd, size_t size);

/* The payload at idx: a pointer to its descriptor (-1 once sent) and
 * its byte count, or NULL when the value is not a payload. */
int *uh_payload_of(lua_State *L, int idx, size_t *n);

/* Read the n bytes of the payload file fd into buf: 0, or -1 with errno
 * (ENODATA: the file is shorter now than when it was read; EBADF: it was
 * sent already). */
int uh_payload_pread(int fd, char *buf, size_t n);

/* Write the n bytes of the payload file *fd to the pipe `out` (splice,
 * or reads and writes where the file system cannot splice), then close
 * *fd and set it to -1: a payload is sent once.  0, or -1 with errno
 * (ENODATA: the file shrank; `out` then holds part of it). */
int uh_payload_send(int *fd, size_t n, int out);

#endif

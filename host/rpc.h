/* Broker <-> hook frames: a 4-byte little-endian length, then one
 * MessagePack value (host/mpack.c).  Every frame is bounded; the broker
 * treats every byte from the child as hostile. */
#ifndef UH_RPC_H
#define UH_RPC_H
#include <stddef.h>
#include <lua.h>

#define UH_RPC_MAX_FRAME (64u << 20)

enum { UH_RPC_OK = 0, UH_RPC_ERR = -1, UH_RPC_EOF = -2, UH_RPC_TIMEOUT = -3,
       UH_RPC_INTR = -4 };

/* Pack the value at idx and write it as one frame. */
int uh_rpc_send(int fd, lua_State *L, int idx, char *err, size_t errlen);
/* Read one frame and push its value.  deadline < 0 blocks; otherwise it
 * is a CLOCK_MONOTONIC time and UH_RPC_TIMEOUT is returned past it.
 * *intr, when not NULL, is polled on EINTR (a signal asked us to stop). */
int uh_rpc_recv(int fd, lua_State *L, double deadline,
                volatile int *intr, char *err, size_t errlen);

/* What the broker accepts from the hook process in one frame: at most
 * this many values (host/mpack.c), so that a frame within
 * UH_RPC_MAX_FRAME cannot decode into gigabytes of tables.  The largest
 * real manifest in tests/data/corpus (argo-cd, 1.9 MB) has 64 k. */
#define UH_RPC_MAX_NODES (1u << 19)

/* uh_rpc_recv, decoding at most max_nodes values (0: no bound). */
int uh_rpc_recv_max(int fd, lua_State *L, double deadline,
                    volatile int *intr, size_t max_nodes, char *err,
                    size_t errlen);

#endif

/* Lua values <-> MessagePack, shared by the journal and the broker/child
 * RPC.  Encoding uses libmsgpack-c's packer.  Decoding is a bounded
 * reader of our own: it reads hostile bytes (from the hook process), and
 * msgpack-c's unpacker allocates whatever an array header claims before
 * reading a single element.
 *
 * Mapping:  nil and null (uh_pushnull) -> nil -> null
 *           boolean, integer (int64), float (double)
 *           string -> str (binary safe); str and bin -> string
 *           a payload (host/payload.h) -> str
 *           table with the array marker or keys exactly 1..n -> array
 *           (decoded arrays carry the marker); other tables -> map
 * Map keys must be strings, numbers or booleans.  Functions, other userdata,
 * threads, ext types, cycles and nesting beyond UH_MPACK_MAXDEPTH are
 * errors.  Both functions return 0, or -1 with a message in err and the
 * Lua stack as it was.
 */
#ifndef UH_MPACK_H
#define UH_MPACK_H
#include <stddef.h>
#include <lua.h>
#include <msgpack.h>

#define UH_MPACK_MAXDEPTH 64

int uh_mpack_pack(lua_State *L, int idx, msgpack_sbuffer *sb, char *err,
                  size_t errlen);
/* The same, with the body of each string of UH_MPACK_REF_MIN bytes or
 * more, and of each payload (the first UH_MPACK_MAX_REFS of them), left
 * out of sb and noted in refs instead: ref i's bytes come after
 * sb->data[0..at) and before the rest, so the writer sends the Lua string
 * itself (p) or splices the payload's file (fd, p NULL: host/rpc.c; an
 * 11 MB addon.read is not copied into the buffer first).  The pointers
 * are the values' own: valid while the value at idx is unchanged. */
#define UH_MPACK_REF_MIN (64u << 10)
#define UH_MPACK_MAX_REFS 16
typedef struct {
  struct { size_t at; const char *p; int *fd; size_t n; }
    ref[UH_MPACK_MAX_REFS];
  int n;
} uh_mpack_refs;
int uh_mpack_pack_refs(lua_State *L, int idx, msgpack_sbuffer *sb,
                       uh_mpack_refs *refs, char *err, size_t errlen);
/* A buffer to pack into, kept for the process between uses: a fresh
 * sbuffer per message costs a large malloc and free each (and glibc's
 * consolidation of its small free chunks that a large malloc sets off).
 * take() gives the kept one, emptied, or a fresh one in `spare` while the
 * kept one is in use; give() back what take() gave. */
msgpack_sbuffer *uh_mpack_sbuf_take(msgpack_sbuffer *spare);
void uh_mpack_sbuf_give(msgpack_sbuffer *sb);
/* Decode exactly one value filling buf[0..len) and push it. */
int uh_mpack_unpack_push(lua_State *L, const char *buf, size_t len,
                         char *err, size_t errlen);
/* The same with at most max_nodes values (every scalar, array and map
 * counts one; 0: no bound): what a hostile frame may cost in Lua tables
 * is then bounded whatever its bytes claim (an empty map is one byte on
 * the wire and a table of 56 bytes in Lua). */
int uh_mpack_unpack_push_max(lua_State *L, const char *buf, size_t len,
                             size_t max_nodes, char *err, size_t errlen);

#endif

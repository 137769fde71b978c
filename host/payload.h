/* A payload: bytes read for the hook process (addon.read of a big file,
 * lua/engine/prims/addon.lua), held in a full userdata and packed by
 * host/mpack.c as a MessagePack str, with no Lua string made of them.
 * Lua 5.4 cannot build a string in place, so a file read into a string
 * is copied once more into fresh memory; a payload is read once, into
 * its own block, and written to the pipe from there (docs/internals.md
 * "Big payloads").  In the broker's Lua a payload has # and tostring (a
 * copy); the hook only ever sees the string its child decodes. */
#ifndef UH_PAYLOAD_H
#define UH_PAYLOAD_H
#include <stddef.h>
#include <lua.h>

#define UH_PAYLOAD_MT "uphook.payload"

/* Push a payload holding exactly the `size` bytes read from fd (at its
 * offset), and return 1; when fd ends before or goes on past `size`
 * bytes (the file changed since its fstat), push nothing, seek fd back
 * to 0 and return 0; -1 with errno (nothing pushed) on a read or seek
 * error. */
int uh_payload_read(lua_State *L, int fd, size_t size);

/* The bytes of the payload at idx and their count, or NULL when the
 * value is not a payload. */
const char *uh_payload_bytes(lua_State *L, int idx, size_t *n);

#endif

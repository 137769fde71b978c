/* uphook.c.json: JSON <-> Lua through jansson, with the shared null and
 * array conventions of luax.h. */
#ifndef UH_JSON_H
#define UH_JSON_H
#include <stddef.h>
#include <lua.h>

#define UH_JSON_MAX_DEPTH 256  /* nested arrays/objects */

/* Decode s[0..n) and push the value. Returns UH_OK, or UH_EPARSE /
 * UH_ELIMIT / UH_ENOMEM with a message in err and nothing pushed. */
int uh_json_decode_push(lua_State *L, const char *s, size_t n,
                        char *err, size_t errlen);
/* Encode the value at idx (compact, sorted keys) and push the text.
 * Returns UH_OK, or UH_EINVAL / UH_ELIMIT with a message in err. */
int uh_json_encode_push(lua_State *L, int idx, char *err, size_t errlen);

int luaopen_uphook_json(lua_State *L);

/* One --output json event line on stdout (compact, sorted keys), flushed;
 * under UPHOOK_TEST_EVENT_LOG (test-only) also appended there as
 * "<pid>.<start> <line>" for tests/cli/events_schema.py (one run: pids
 * wrap in a long suite). Takes the reference. */
struct json_t;
void uh_json_event(struct json_t *ev);
/* The test-only log of one event line (no newline), as above. */
void uh_json_event_log(const char *line, size_t n);

#endif

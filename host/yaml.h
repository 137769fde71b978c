/* uphook.c.yaml: YAML decode/encode with Kubernetes scalar resolution.
 *
 * This header shares its name with libyaml's and -Ihost puts it first on
 * the search path, so it is a superset: it forwards to libyaml's header
 * with include_next, and `#include <yaml.h>` anywhere in host/ keeps
 * getting libyaml (plus the uphook API below). */
#ifndef UH_YAML_H
#define UH_YAML_H
#ifdef __clang__  /* `#include "yaml.h"` from host/: the API below only */
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Winclude-next-absolute-path"
#endif
#include_next <yaml.h>
#ifdef __clang__
#pragma clang diagnostic pop
#endif
#include <stddef.h>
#include <lua.h>

#define UH_YAML_MAX_DEPTH 256           /* nested collections */
#define UH_YAML_MAX_ALIAS_NODES 100000  /* nodes copied by aliases per call */

/* Decode s[0..n) and push one document (all = 0; a stream of several
 * documents is an error) or an array-marked list of them (all = 1).
 * Returns UH_OK, or UH_EPARSE / UH_ELIMIT / UH_ENOMEM with a message in
 * err and nothing pushed. */
int uh_yaml_decode_push(lua_State *L, const char *s, size_t n, int all,
                        char *err, size_t errlen);
/* Encode the value at idx (all = 1: a list of documents) and push the
 * text. Returns UH_OK, or UH_EINVAL / UH_ELIMIT with a message in err. */
int uh_yaml_encode_push(lua_State *L, int idx, int all,
                        char *err, size_t errlen);

int luaopen_uphook_yaml(lua_State *L);

/* Internal, shared by yaml.c and yaml_emit.c. */
int uh_yaml_plain_is_string(const char *s, size_t n);
int uh_yaml_encode_main(lua_State *L);

#endif

/* Small helpers shared by every Lua binding: the null sentinel, the
 * array marker and the error enum.
 *
 * null: yaml.null == json.null is a light userdata holding NULL.  It
 * stands for an explicit null inside tables (where Lua nil cannot).
 *
 * arrays: every sequence a codec decodes gets the metatable stored in
 * the registry under UH_ARRAY_MT, so that an empty sequence re-encodes
 * as [] and not as {}.  Encoders treat a table as a sequence when it has
 * that metatable, or when it is non-empty with keys exactly 1..n.
 */
#ifndef UH_LUAX_H
#define UH_LUAX_H
#include <lua.h>
#include <lauxlib.h>

#define UH_ARRAY_MT "uphook.array"
/* seconds a run may take without --timeout (lua/core/run.lua
 * DEFAULT_TIMEOUT, held equal by tests/tree/constants_test.py) */
#define UH_DEFAULT_TIMEOUT 900
#define UH_STR_(x) #x
#define UH_STR(x) UH_STR_(x)   /* a macro's value as a string literal */

/* One append-only error enum for the whole host (curl style). */
typedef enum {
  UH_OK = 0,
  UH_ENOMEM,      /* out of memory */
  UH_EIO,         /* read/write/fsync failed (see errno) */
  UH_ENOENT,      /* no such file or object */
  UH_EESCAPE,     /* path leaves its root */
  UH_EINVAL,      /* invalid argument or input */
  UH_EPARSE,      /* malformed YAML/JSON/args/journal */
  UH_ELIMIT,      /* a size, depth or count limit was hit */
  UH_ECHECKSUM,   /* sha256 mismatch */
  UH_EHTTP,       /* HTTP status error */
  UH_ENET,        /* connection or TLS error */
  UH_ETIMEOUT,    /* deadline passed */
  UH_EDENIED,     /* permission not declared / not allowed */
  UH_EPROTO,      /* broker-child protocol violation */
  UH_ECRASH,      /* child died */
  UH_ELOCKED,     /* lock held by someone else */
  UH_ELAST        /* keep last */
} uh_err;

const char *uh_strerror(uh_err e);

void uh_pushnull(lua_State *L);
int uh_isnull(lua_State *L, int idx);
/* Set the array metatable on the table at idx (creating it once). */
void uh_markarray(lua_State *L, int idx);
/* 1 if the table at idx carries the array metatable. */
int uh_hasarraymt(lua_State *L, int idx);
/* 1 if the table at idx should encode as a sequence (see above);
 * stores its length in *n. */
int uh_isarray(lua_State *L, int idx, size_t *n);
/* Open the library table of the array helper into the stack top table:
 * t.null, t.array(tbl) -> tbl (marks), t.isarray(tbl). */
void uh_setnullarray(lua_State *L);

/* The one way a binding makes a class: the metatable `name` (created on
 * the first call) holds `methods` (metamethods such as __gc, __close and
 * __tostring among them) and is its own __index.  [] -> [] */
void uh_newclass(lua_State *L, const char *name, const luaL_Reg *methods);
/* The metatable `name` of a userdata that only needs freeing: `close`
 * is both its __gc and its __close.  [] -> [mt] */
void uh_pushcloser(lua_State *L, const char *name, lua_CFunction close);

#endif

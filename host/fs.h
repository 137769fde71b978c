/* File operations confined beneath an absolute root directory.
 *
 * A relative path is resolved with openat2(RESOLVE_BENEATH |
 * RESOLVE_NO_MAGICLINKS) from an O_PATH fd of the root, so neither `..`
 * nor a symlink can lead out of it; symlinks that stay inside are
 * followed.  Where the kernel lacks openat2 (ENOSYS) a component-by-
 * component O_NOFOLLOW walk is used instead, which refuses every symlink.
 */
#ifndef UH_FS_H
#define UH_FS_H
#include <stddef.h>
#include <sys/types.h>
#include <lua.h>
#include "luax.h"

/* Nonzero: use the O_NOFOLLOW walk (set when openat2 is ENOSYS; tests
 * set it to exercise the fallback). */
extern int uh_fs_walk_only;

/* fs.pin(path) (host/fs_pin.c): resolve a root folder once and hold its
 * descriptor; uh_fs_pinned gives it for a root path fs.pin returned, or
 * -1.  Every fs.* call on a pinned root resolves beneath the descriptor. */
int fs_pin(lua_State *L);
int uh_fs_pinned(lua_State *L, const char *root);

/* Push the name of group gid, or nil when it has none (host/fs_usage.c). */
void uh_fs_push_group(lua_State *L, gid_t gid);

/* fs.usage(dir, cap) -> bytes (host/fs_usage.c): what the files and
 * folders beneath dir take, each charged at least one 4 KiB block;
 * counting stops once past cap.  0 when dir does not exist. */
int fs_usage(lua_State *L);

int luaopen_uphook_fs(lua_State *L);

#endif

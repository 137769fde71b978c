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

/* Lexical check: UH_OK, UH_EESCAPE (absolute, or a `..` component) or
 * UH_EINVAL (empty, NUL byte, too long, or not naming a file: a trailing
 * `/` or a last component `.`). */
uh_err uh_fs_checkrel(const char *rel, size_t len);

/* Open rel (already checked) beneath the directory rootfd.  Returns an fd
 * or -1 with errno; EXDEV means the path leads out of the root, ELOOP a
 * refused symlink (a magic link, a loop, or any symlink in the walk). */
int uh_fs_openat(int rootfd, const char *rel, int flags, mode_t mode);

/* Nonzero: use the O_NOFOLLOW walk (set when openat2 is ENOSYS; tests
 * set it to exercise the fallback). */
extern int uh_fs_walk_only;

int luaopen_uphook_fs(lua_State *L);

#endif

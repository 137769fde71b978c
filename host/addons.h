/* Addon repositories and addon lookup (docs/contract.md §2).
 *
 * A repository is a folder holding addons.yaml and addons/<name>/.  The
 * repositories are the --addons folders, in order, then every
 * $SNAP_COMMON/addons/<repo>/ in byte order of the name.  A repository's
 * name is its folder's basename.
 *
 * Decisions:
 * - An --addons folder without a readable addons.yaml is an error (the
 *   user asked for it); a $SNAP_COMMON/addons/<repo>/ without one, or
 *   that is not a directory, or whose name starts with '.', is skipped
 *   (the first with a warning).
 * - A repository whose name equals an earlier one's is skipped with a
 *   warning: an --addons folder shadows the installed repository of the
 *   same name, so "repo/name" always means one folder.
 * - An addons.yaml that does not parse, is over UH_ADDONS_MAX_BYTES, nests
 *   deeper than UH_ADDONS_MAX_DEPTH or has a field of the wrong type or
 *   length is an error "<file>:<line>: <problem>", whichever repository it
 *   is in.
 * - An addon entry whose name is not a plain folder name ([A-Za-z0-9._-],
 *   not "." or ".."), that repeats an earlier name of the same repository,
 *   or whose folder addons/<name>/ is missing is skipped with a warning.
 * Warnings are kept, not printed: see uh_repos_warning().
 */
#ifndef UH_ADDONS_H
#define UH_ADDONS_H
#include <limits.h>
#include <stddef.h>

#define UH_ADDONS_MAX_BYTES (4u << 20)  /* addons.yaml size bound */
#define UH_ADDONS_MAX_DEPTH 64          /* YAML nesting bound */
#define UH_ADDON_MAX_ARCHS 16

struct uh_addon {
  char repo[128];          /* repository name (folder basename) */
  char name[128];
  char dir[PATH_MAX];      /* <repo dir>/addons/<name> */
  char version[64];        /* "" when addons.yaml has none */
  char check_status[256];
  char description[512];
  char archs[UH_ADDON_MAX_ARCHS][32]; /* supported_architectures */
  int narchs;
};

struct uh_repos; /* opaque */

/* Load the repositories.  extra_dirs: the --addons folders (n of them);
 * snap_common: $SNAP_COMMON or NULL.  NULL with err on error. */
struct uh_repos *uh_repos_load(const char *const *extra_dirs, int n,
                               const char *snap_common, char *err,
                               size_t errlen);
void uh_repos_free(struct uh_repos *);

/* name is "addon" or "repo/addon".  0 and *out filled when found; -1 with
 * err when not found ("addon 'x' not found in: repoA, repoB"); -2 when a
 * bare name is in several repositories (err lists "repoA/x, repoB/x"). */
int uh_repos_find(const struct uh_repos *, const char *name,
                  struct uh_addon *out, char *err, size_t errlen);

/* All addons of all repositories, in search order, then file order. */
size_t uh_repos_count(const struct uh_repos *);
const struct uh_addon *uh_repos_at(const struct uh_repos *, size_t i);

/* Repository names in search order (for messages and `uphook list`). */
size_t uh_repos_nrepos(const struct uh_repos *);
const char *uh_repos_repo(const struct uh_repos *, size_t i);

/* Warnings collected while loading (skipped repositories and entries). */
size_t uh_repos_nwarnings(const struct uh_repos *);
const char *uh_repos_warning(const struct uh_repos *, size_t i);

enum { UH_HOOK_NONE = 0, UH_HOOK_LUA = 1, UH_HOOK_EXEC = 2 };

/* What to run for an addon, in docs/contract.md §2 order: UH_HOOK_LUA with the path
 * of upgrade.lua (a regular file, symlinks followed), else UH_HOOK_EXEC
 * with the path of `upgrade` (a regular file or a symlink to one, e.g.
 * to enable, with an execute bit), else UH_HOOK_NONE and path "".
 * -1 when the path does not fit in pathlen. */
int uh_addon_hook(const struct uh_addon *, char *path, size_t pathlen);

#endif

/* addons.yaml: the input is a repository's addons.yaml, in a folder that
 * holds addons/{a,b,dns,core}/; the repositories are loaded, every addon
 * is looked up by its name and by repo/name and its hook resolved. */
#include <sys/stat.h>
#include "fuzz.h"
#include "addons.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  static char dir[128], file[160];
  static const char *const names[] = { "a", "b", "dns", "core" };
  const char *dirs[1];
  struct uh_repos *r;
  struct uh_addon a;
  char err[1024], path[PATH_MAX + 32], q[300];
  size_t i, n;
  if (!dir[0]) {
    snprintf(dir, sizeof dir, "%s/repo", fuzz_tmpdir());
    mkdir(dir, 0700);
    snprintf(path, sizeof path, "%s/addons", dir);
    mkdir(path, 0700);
    for (i = 0; i < 4; i++) {
      snprintf(path, sizeof path, "%s/addons/%s", dir, names[i]);
      mkdir(path, 0700);
    }
    snprintf(path, sizeof path, "%s/addons/a/upgrade.lua", dir);
    fuzz_write_file(path, "return {}\n", 10);
    snprintf(file, sizeof file, "%s/addons.yaml", dir);
  }
  fuzz_write_file(file, data, size);
  dirs[0] = dir;
  r = uh_repos_load(dirs, 1, NULL, err, sizeof err);
  if (!r) {
    if (!err[0])
      fuzz_fail("load failed without a message");
    return 0;
  }
  n = uh_repos_count(r);
  for (i = 0; i < n; i++) {
    const struct uh_addon *e = uh_repos_at(r, i);
    if (!memchr(e->name, '\0', sizeof e->name)
        || !memchr(e->version, '\0', sizeof e->version))
      fuzz_fail("unterminated field");
    if (uh_repos_find(r, e->name, &a, err, sizeof err) != 0)
      fuzz_fail("addon %s listed but not found: %s", e->name, err);
    snprintf(q, sizeof q, "%s/%s", e->repo, e->name);
    if (uh_repos_find(r, q, &a, err, sizeof err) != 0)
      fuzz_fail("addon %s listed but not found: %s", q, err);
    uh_addon_hook(&a, path, sizeof path);
  }
  uh_repos_find(r, "nope", &a, err, sizeof err);
  for (i = 0; i < uh_repos_nwarnings(r); i++)
    if (!uh_repos_warning(r, i))
      fuzz_fail("NULL warning");
  uh_repos_free(r);
  return 0;
}

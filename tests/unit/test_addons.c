/* Unit tests for host/addons.c: repositories, lookup and hook selection. */
#include "unit.h"
#include "addons.h"

#include <errno.h>
#include <ftw.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[64];

static void put(const char *rel, const char *text, mode_t mode)
{
  char path[PATH_MAX];
  FILE *f;
  snprintf(path, sizeof path, "%s/%s", root, rel);
  f = fopen(path, "w");
  if (!f) { perror(path); exit(2); }
  fputs(text, f);
  fclose(f);
  chmod(path, mode);
}

static void dir(const char *fmt, ...)
{
  char rel[1024], path[PATH_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(rel, sizeof rel, fmt, ap);
  va_end(ap);
  snprintf(path, sizeof path, "%s/%s", root, rel);
  if (mkdir(path, 0755) && errno != EEXIST) { perror(path); exit(2); }
}

static const char *at(const char *rel)
{
  static char bufs[4][PATH_MAX];
  static int k;
  k = (k + 1) % 4;
  snprintf(bufs[k], sizeof bufs[k], "%s/%s", root, rel);
  return bufs[k];
}

/* A repository folder rel with addons.yaml listing names (folders made). */
static void repo(const char *rel, const char *names)
{
  char yaml[4096], buf[PATH_MAX], n[128];
  const char *p = names;
  size_t pos, len;
  dir("%s", rel);
  dir("%s/addons", rel);
  pos = (size_t)snprintf(yaml, sizeof yaml,
    "microk8s-addons:\n  description: test repo\n  addons:\n");
  for (; *p; p += len + (p[len] == ' ')) {       /* space-separated names */
    len = strcspn(p, " ");
    if (len == 0 || len >= sizeof n) continue;
    memcpy(n, p, len);
    n[len] = 0;
    pos += (size_t)snprintf(yaml + pos, sizeof yaml - pos,
      "    - name: \"%s\"\n      description: the %s addon\n"
      "      version: \"1.0.0\"\n      check_status: \"deployment.apps/%s\"\n"
      "      supported_architectures:\n        - amd64\n        - arm64\n",
      n, n, n);
    dir("%s/addons/%s", rel, n);
  }
  snprintf(buf, sizeof buf, "%s/addons.yaml", rel);
  put(buf, yaml, 0644);
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *f)
{
  (void)st; (void)flag; (void)f;
  return remove(p);
}

static void fresh(void)
{
  if (root[0]) nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
  snprintf(root, sizeof root, "/tmp/uh_addons_XXXXXX");
  if (!mkdtemp(root)) { perror("mkdtemp"); exit(2); }
  dir("common");
  dir("common/addons");
}

static struct uh_repos *load(const char **extra, int n, char *err)
{
  return uh_repos_load(extra, n, at("common"), err, 512);
}

static void test_fields_parsed(void)
{
  char err[512];
  const struct uh_addon *a;
  struct uh_repos *r;
  fresh();
  repo("common/addons/core", "dns hostpath-storage");
  r = load(NULL, 0, err);
  CHECK(r != NULL);
  if (!r) { fprintf(stderr, "  %s\n", err); return; }
  CHECK(uh_repos_count(r) == 2);
  a = uh_repos_at(r, 1);
  CHECK_STR(a->repo, "core");
  CHECK_STR(a->name, "hostpath-storage");
  CHECK_STR(a->version, "1.0.0");
  CHECK_STR(a->description, "the hostpath-storage addon");
  CHECK_STR(a->check_status, "deployment.apps/hostpath-storage");
  CHECK(a->narchs == 2);
  CHECK_STR(a->archs[1], "arm64");
  CHECK_STR(a->dir, at("common/addons/core/addons/hostpath-storage"));
  CHECK(uh_repos_at(r, 2) == NULL);
  CHECK(uh_repos_nwarnings(r) == 0);
  uh_repos_free(r);
}

static void test_extra_first_and_name_order(void)
{
  char err[512];
  const char *extra[] = { NULL, NULL };
  struct uh_repos *r;
  fresh();
  repo("mine", "only-mine");
  repo("second/", "second-one");
  repo("common/addons/zeta", "z");
  repo("common/addons/alpha", "a");
  repo("common/addons/Mid", "m");
  put("common/addons/not-a-dir", "x", 0644);
  dir("common/addons/empty");           /* no addons.yaml: skipped */
  dir("common/addons/.hidden");
  extra[0] = at("mine");
  extra[1] = at("second/");
  r = load(extra, 2, err);
  CHECK(r != NULL);
  if (!r) { fprintf(stderr, "  %s\n", err); return; }
  CHECK(uh_repos_nrepos(r) == 5);
  CHECK_STR(uh_repos_repo(r, 0), "mine");
  CHECK_STR(uh_repos_repo(r, 1), "second");
  CHECK_STR(uh_repos_repo(r, 2), "Mid");       /* byte order: 'M' < 'a' */
  CHECK_STR(uh_repos_repo(r, 3), "alpha");
  CHECK_STR(uh_repos_repo(r, 4), "zeta");
  CHECK(uh_repos_count(r) == 5);
  CHECK_STR(uh_repos_at(r, 0)->name, "only-mine");
  CHECK_STR(uh_repos_at(r, 4)->name, "z");
  CHECK(uh_repos_nwarnings(r) == 1);
  CHECK(strstr(uh_repos_warning(r, 0), "empty: skipped repository: no addons.yaml") != NULL);
  uh_repos_free(r);
}

static void test_select_ambiguous_not_found(void)
{
  char err[512];
  const char *extra[] = { NULL };
  struct uh_addon a;
  struct uh_repos *r;
  fresh();
  repo("extra", "dns");
  repo("common/addons/core", "dns storage");
  repo("common/addons/community", "storage cilium");
  extra[0] = at("extra");
  r = load(extra, 1, err);
  CHECK(r != NULL);
  if (!r) return;
  CHECK(uh_repos_find(r, "cilium", &a, err, sizeof err) == 0);
  CHECK_STR(a.repo, "community");
  CHECK(uh_repos_find(r, "core/storage", &a, err, sizeof err) == 0);
  CHECK_STR(a.repo, "core");
  CHECK_STR(a.dir, at("common/addons/core/addons/storage"));
  CHECK(uh_repos_find(r, "extra/dns", &a, err, sizeof err) == 0);
  CHECK_STR(a.dir, at("extra/addons/dns"));
  CHECK(uh_repos_find(r, "storage", &a, err, sizeof err) == -2);
  CHECK_STR(err, "addon 'storage' is in several repositories: "
                 "community/storage, core/storage");
  CHECK(uh_repos_find(r, "dns", &a, err, sizeof err) == -2);
  CHECK_STR(err, "addon 'dns' is in several repositories: extra/dns, core/dns");
  CHECK(uh_repos_find(r, "nope", &a, err, sizeof err) == -1);
  CHECK_STR(err, "addon 'nope' not found in: extra, community, core");
  CHECK(uh_repos_find(r, "core/cilium", &a, err, sizeof err) == -1);
  CHECK_STR(err, "addon 'cilium' not found in: core");
  CHECK(uh_repos_find(r, "other/dns", &a, err, sizeof err) == -1);
  CHECK_STR(err, "repository 'other' not found; repositories: extra, community, core");
  CHECK(uh_repos_find(r, "a/b/c", &a, err, sizeof err) == -1);
  CHECK(uh_repos_find(r, "", &a, err, sizeof err) == -1);
  uh_repos_free(r);
  r = load(NULL, 0, err);               /* no repositories at all */
  uh_repos_free(r);
  fresh();
  r = uh_repos_load(NULL, 0, NULL, err, sizeof err);
  CHECK(r != NULL);
  CHECK(uh_repos_find(r, "dns", &a, err, sizeof err) == -1);
  CHECK_STR(err, "addon 'dns' not found in: (no addon repositories)");
  uh_repos_free(r);
}

static void test_hook_selection(void)
{
  char err[512], path[PATH_MAX];
  struct uh_addon a;
  struct uh_repos *r;
  fresh();
  repo("common/addons/core", "both exec noexec none link dirlua");
  put("common/addons/core/addons/both/upgrade.lua", "return {}", 0644);
  put("common/addons/core/addons/both/upgrade", "#!/bin/sh\n", 0755);
  put("common/addons/core/addons/exec/upgrade", "#!/bin/sh\n", 0755);
  put("common/addons/core/addons/noexec/upgrade", "#!/bin/sh\n", 0644);
  put("common/addons/core/addons/link/enable", "#!/bin/sh\n", 0755);
  CHECK(symlink("enable", at("common/addons/core/addons/link/upgrade")) == 0);
  dir("common/addons/core/addons/dirlua/upgrade.lua");
  r = load(NULL, 0, err);
  CHECK(r != NULL);
  if (!r) return;
  CHECK(uh_repos_find(r, "both", &a, err, sizeof err) == 0);
  CHECK(uh_addon_hook(&a, path, sizeof path) == UH_HOOK_LUA);
  CHECK_STR(path, at("common/addons/core/addons/both/upgrade.lua"));
  CHECK(uh_repos_find(r, "exec", &a, err, sizeof err) == 0);
  CHECK(uh_addon_hook(&a, path, sizeof path) == UH_HOOK_EXEC);
  CHECK_STR(path, at("common/addons/core/addons/exec/upgrade"));
  CHECK(uh_repos_find(r, "noexec", &a, err, sizeof err) == 0);
  CHECK(uh_addon_hook(&a, path, sizeof path) == UH_HOOK_NONE);
  CHECK_STR(path, "");
  CHECK(uh_repos_find(r, "none", &a, err, sizeof err) == 0);
  CHECK(uh_addon_hook(&a, path, sizeof path) == UH_HOOK_NONE);
  CHECK(uh_repos_find(r, "link", &a, err, sizeof err) == 0);
  CHECK(uh_addon_hook(&a, path, sizeof path) == UH_HOOK_EXEC);
  CHECK(uh_repos_find(r, "dirlua", &a, err, sizeof err) == 0);
  CHECK(uh_addon_hook(&a, path, sizeof path) == UH_HOOK_NONE);
  CHECK(uh_addon_hook(&a, path, 8) == -1);
  uh_repos_free(r);
}

/* Load a repository whose addons.yaml is text; return the error. */
static const char *bad(const char *text)
{
  static char err[512];
  const char *extra[1];
  struct uh_repos *r;
  fresh();
  repo("r", "");
  put("r/addons.yaml", text, 0644);
  extra[0] = at("r");
  r = uh_repos_load(extra, 1, NULL, err, sizeof err);
  if (r) { uh_repos_free(r); return "(loaded)"; }
  return err;
}

static void check_err(const char *text, const char *want_suffix)
{
  char want[PATH_MAX + 256];
  const char *got = bad(text);
  snprintf(want, sizeof want, "%s%s", at("r/addons.yaml"), want_suffix);
  if (strncmp(got, want, strlen(want))) {
    unit_cur_failed = 1;
    fprintf(stderr, "  got  \"%s\"\n  want \"%s...\"\n", got, want);
  }
}

static void test_bad_yaml_names_file_and_line(void)
{
  check_err("microk8s-addons:\n  addons:\n    - name: a\n   bad: [\n",
            ":4: ");
  check_err("microk8s-addons:\n  addons:\n    - name: \"x\n",
            ":4: found unexpected end of stream while scanning a quoted "
            "scalar started on line 3");
  check_err("microk8s-addons:\n  addons: []\n  description: [\n"
            "z: 1\n", ":5: did not find expected ',' or ']' while parsing a "
            "flow sequence started on line 3");
  check_err("microk8s-addons: {addons: []}\n---\n[\n", ":4: ");
  check_err("", ":1: empty file");
  check_err("other: 1\n", ":2: no 'microk8s-addons' key");
  check_err("microk8s-addons: 3\n", ":1: 'microk8s-addons' must be a mapping");
  check_err("microk8s-addons:\n  addons: {}\n", ":2: 'addons' must be a list");
  check_err("microk8s-addons:\n  addons:\n    - name: [a]\n",
            ":3: 'name' must be a string");
  check_err("microk8s-addons:\n  addons:\n    - version: 1\n",
            ":3: addon entry without a 'name'");
  check_err("microk8s-addons:\n  addons:\n    - a\n",
            ":3: an entry of 'addons' must be a mapping");
  check_err("microk8s-addons:\n  addons:\n    - name: a\n"
            "      supported_architectures: amd64\n",
            ":4: 'supported_architectures' must be a list");
  check_err("- [\n", ":1: expected a mapping");
}

static void test_limits(void)
{
  char *big, deep[1024];
  size_t i, n = UH_ADDONS_MAX_BYTES + 10;
  const char *got;
  big = malloc(n + 1);
  memset(big, '#', n);
  big[n] = 0;
  got = bad(big);
  CHECK(strstr(got, "larger than") != NULL);
  free(big);
  i = (size_t)snprintf(deep, sizeof deep, "microk8s-addons:\n  x: ");
  memset(deep + i, '[', 200);
  deep[i + 200] = 0;
  CHECK(strstr(bad(deep), ":2: nested too deeply") != NULL);
  i = (size_t)snprintf(deep, sizeof deep, "microk8s-addons: {addons: []}\nx: ");
  memset(deep + i, '{', 200);
  deep[i + 200] = 0;
  CHECK(strstr(bad(deep), ":2: nested too deeply") != NULL);
  snprintf(deep, sizeof deep, "microk8s-addons:\n  addons:\n    - name: a\n"
           "      version: \"%0200d\"\n", 1);
  CHECK(strstr(bad(deep), ":4: 'version' is longer than 63 bytes") != NULL);
  CHECK(strstr(bad("a: &x [1]\nb: *x\nmicrok8s-addons: {addons: []}\n"),
               "(loaded)") != NULL);
}

static void test_skipped_entries_and_repos(void)
{
  char err[512];
  const char *extra[] = { NULL };
  struct uh_repos *r;
  fresh();
  repo("common/addons/core", "good");
  put("common/addons/core/addons.yaml",
      "microk8s-addons:\n  addons:\n"
      "    - name: good\n      extra: {nested: [1, {x: y}]}\n"
      "    - name: gone\n"
      "    - name: ../../etc\n"
      "    - name: good\n"
      "  unknown: [1, 2]\n", 0644);
  repo("core", "mine");                 /* an --addons repo named core too */
  extra[0] = at("core");
  r = load(extra, 1, err);
  CHECK(r != NULL);
  if (!r) { fprintf(stderr, "  %s\n", err); return; }
  CHECK(uh_repos_count(r) == 1);
  CHECK_STR(uh_repos_at(r, 0)->name, "mine");
  CHECK(uh_repos_nwarnings(r) == 1);
  CHECK(strstr(uh_repos_warning(r, 0), "an earlier one is also named 'core'") != NULL);
  uh_repos_free(r);
  r = load(NULL, 0, err);
  CHECK(r != NULL);
  if (!r) return;
  CHECK(uh_repos_count(r) == 1);
  CHECK(uh_repos_nwarnings(r) == 3);
  CHECK(strstr(uh_repos_warning(r, 0), ":5: skipped addon 'gone': no folder") != NULL);
  CHECK(strstr(uh_repos_warning(r, 1), ":6: skipped addon '../../etc': not a plain") != NULL);
  CHECK(strstr(uh_repos_warning(r, 2), ":7: skipped addon 'good': listed twice") != NULL);
  uh_repos_free(r);
}

static void test_extra_dir_errors(void)
{
  char err[512];
  const char *extra[] = { NULL };
  fresh();
  dir("noyaml");
  extra[0] = at("noyaml");
  CHECK(load(extra, 1, err) == NULL);
  CHECK(strstr(err, "noyaml: no addons.yaml") != NULL);
  extra[0] = at("missing");
  CHECK(load(extra, 1, err) == NULL);
  CHECK(strstr(err, "missing: not a directory") != NULL);
  extra[0] = "";
  CHECK(load(extra, 1, err) == NULL);
  repo("common/addons/broken", "x");
  put("common/addons/broken/addons.yaml", "microk8s-addons: [\n", 0644);
  CHECK(load(NULL, 0, err) == NULL);    /* a broken installed repo is an error */
  CHECK(strstr(err, "broken/addons.yaml:1: ") != NULL);
}

int main(void)
{
  RUN(test_fields_parsed);
  RUN(test_extra_first_and_name_order);
  RUN(test_select_ambiguous_not_found);
  RUN(test_hook_selection);
  RUN(test_bad_yaml_names_file_and_line);
  RUN(test_limits);
  RUN(test_skipped_entries_and_repos);
  RUN(test_extra_dir_errors);
  if (root[0]) nftw(root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
  return UNIT_END();
}

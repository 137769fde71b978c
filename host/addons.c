/* Addon repositories: addons.yaml parsing (libyaml events) and lookup.
 * See addons.h for the rules. */
#include "addons.h"
#include "osutil.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
/* host/yaml.h shadows libyaml's header on -Ihost; this asks it to
 * forward to the real one (harmless when it is absent). */
#define UH_YAML_LIBYAML
#include <yaml.h>

struct uh_repos {
  struct uh_addon *v;
  size_t n, cap;
  char (*repos)[128];
  size_t nrepos, repocap;
  char **warn;
  size_t nwarn, warncap;
};

/* Append a formatted string at *pos, keeping buf NUL-terminated; output
 * that does not fit is cut (these are messages). */
static void appendf(char *buf, size_t len, size_t *pos, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void appendf(char *buf, size_t len, size_t *pos, const char *fmt, ...)
{
  va_list ap;
  int r;
  if (!buf || len == 0 || *pos >= len - 1) return;
  va_start(ap, fmt);
  r = vsnprintf(buf + *pos, len - *pos, fmt, ap);
  va_end(ap);
  if (r < 0) return;
  *pos = ((size_t)r >= len - *pos) ? len - 1 : *pos + (size_t)r;
}

#define SETERR(...) do { size_t p_ = 0; if (err && errlen) err[0] = 0; \
  appendf(err, errlen, &p_, __VA_ARGS__); } while (0)

static int grow(void **p, size_t *cap, size_t n, size_t size)
{
  size_t ncap;
  void *q;
  if (n < *cap) return 0;
  ncap = *cap ? *cap * 2 : 8;
  q = realloc(*p, ncap * size);
  if (!q) return -1;
  *p = q;
  *cap = ncap;
  return 0;
}

static void warn(struct uh_repos *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void warn(struct uh_repos *r, const char *fmt, ...)
{
  char buf[PATH_MAX + 256];
  va_list ap;
  void *w = r->warn;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if (grow(&w, &r->warncap, r->nwarn, sizeof(char *))) return;
  r->warn = w;
  if ((r->warn[r->nwarn] = strdup(buf)) != NULL) r->nwarn++;
}

/* Copy src into dst[len]; -1 when it does not fit. */
static int copy(char *dst, size_t len, const char *src)
{
  int r = snprintf(dst, len, "%s", src);
  return (r < 0 || (size_t)r >= len) ? -1 : 0;
}

/* --- reading addons.yaml ------------------------------------------- */

/* Read a regular file of at most UH_ADDONS_MAX_BYTES.  *buf is malloc'd.
 * Returns 0, -1 with err, or 1 when it does not exist. */
static int read_file(const char *path, char **buf, size_t *len, char *err,
                     size_t errlen)
{
  struct stat st;
  size_t got = 0;
  /* non-blocking: a FIFO addons.yaml opens at once and is refused */
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0 && errno == ENOENT) return 1;
  if (fd < 0) { SETERR("%s: %s", path, strerror(errno)); return -1; }
  if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
    SETERR("%s: not a regular file (a FIFO, device or socket is refused)",
           path);
    close(fd);
    return -1;
  }
  if ((unsigned long long)st.st_size > UH_ADDONS_MAX_BYTES) {
    SETERR("%s: larger than %u bytes", path, UH_ADDONS_MAX_BYTES);
    close(fd);
    return -1;
  }
  *buf = malloc((size_t)st.st_size + 1);
  if (!*buf) { SETERR("%s: out of memory", path); close(fd); return -1; }
  while (got < (size_t)st.st_size) {
    ssize_t r = read(fd, *buf + got, (size_t)st.st_size - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;  /* shrank while reading: parse what we have */
    got += (size_t)r;
  }
  close(fd);
  (*buf)[got] = 0;
  *len = got;
  return 0;
}

/* An event reader over one file, tracking the nesting depth. */
struct yp {
  yaml_parser_t p;
  yaml_event_t ev;
  int have;            /* ev holds an event to delete */
  int depth;
  const char *file;
  char *err;
  size_t errlen;
};

static unsigned long line_of(const struct yp *y)
{
  return (unsigned long)y->ev.start_mark.line + 1;
}

static int yfail(struct yp *y, const char *what)
{
  char *err = y->err;
  size_t errlen = y->errlen;
  SETERR("%s:%lu: %s", y->file, line_of(y), what);
  return -1;
}

static int ynext(struct yp *y)
{
  char *err = y->err;
  size_t errlen = y->errlen;
  if (y->have) yaml_event_delete(&y->ev);
  y->have = 0;
  if (!yaml_parser_parse(&y->p, &y->ev)) {
    unsigned long line = (unsigned long)y->p.problem_mark.line + 1;
    unsigned long from = (unsigned long)y->p.context_mark.line + 1;
    size_t pos = 0;
    if (err && errlen) err[0] = 0;
    appendf(err, errlen, &pos, "%s:%lu: %s", y->file, line,
            y->p.problem ? y->p.problem : "invalid YAML");
    if (y->p.context)
      appendf(err, errlen, &pos, " %s", y->p.context);
    if (y->p.context && from != line)
      appendf(err, errlen, &pos, " started on line %lu", from);
    return -1;
  }
  y->have = 1;
  if (y->ev.type == YAML_SEQUENCE_START_EVENT ||
      y->ev.type == YAML_MAPPING_START_EVENT) {
    if (++y->depth > UH_ADDONS_MAX_DEPTH)
      return yfail(y, "nested too deeply");
  } else if (y->ev.type == YAML_SEQUENCE_END_EVENT ||
             y->ev.type == YAML_MAPPING_END_EVENT) {
    y->depth--;
  }
  return 0;
}

/* The current event starts a node: consume the whole node. */
static int yskip(struct yp *y)
{
  int level = y->depth;
  if (y->ev.type != YAML_SEQUENCE_START_EVENT &&
      y->ev.type != YAML_MAPPING_START_EVENT)
    return 0;
  while (y->depth >= level)
    if (ynext(y)) return -1;
  return 0;
}

static const char *yscalar(const struct yp *y)
{
  return (const char *)y->ev.data.scalar.value;
}

/* The current event must be a scalar; copy it into dst[len]. */
static int yscalar_to(struct yp *y, char *dst, size_t len, const char *field)
{
  char what[160];
  if (y->ev.type != YAML_SCALAR_EVENT) {
    snprintf(what, sizeof what, "'%s' must be a string", field);
    return yfail(y, what);
  }
  if (copy(dst, len, yscalar(y))) {
    snprintf(what, sizeof what, "'%s' is longer than %zu bytes", field,
             len - 1);
    return yfail(y, what);
  }
  return 0;
}

static int parse_archs(struct yp *y, struct uh_addon *a)
{
  if (y->ev.type != YAML_SEQUENCE_START_EVENT)
    return yfail(y, "'supported_architectures' must be a list");
  for (;;) {
    if (ynext(y)) return -1;
    if (y->ev.type == YAML_SEQUENCE_END_EVENT) return 0;
    if (a->narchs >= UH_ADDON_MAX_ARCHS)
      return yfail(y, "too many supported_architectures");
    if (yscalar_to(y, a->archs[a->narchs], sizeof a->archs[0],
                   "supported_architectures"))
      return -1;
    a->narchs++;
  }
}

/* One addon entry; the current event is its MAPPING_START. */
static int parse_addon(struct yp *y, struct uh_addon *a, unsigned long *line)
{
  memset(a, 0, sizeof *a);
  *line = line_of(y);
  if (y->ev.type != YAML_MAPPING_START_EVENT)
    return yfail(y, "an entry of 'addons' must be a mapping");
  for (;;) {
    char key[64];
    if (ynext(y)) return -1;
    if (y->ev.type == YAML_MAPPING_END_EVENT) break;
    if (y->ev.type != YAML_SCALAR_EVENT || copy(key, sizeof key, yscalar(y))) {
      if (yskip(y) || ynext(y) || yskip(y)) return -1;
      continue;
    }
    if (ynext(y)) return -1;
    if (!strcmp(key, "name")) {
      if (yscalar_to(y, a->name, sizeof a->name, "name")) return -1;
    } else if (!strcmp(key, "version")) {
      if (yscalar_to(y, a->version, sizeof a->version, "version")) return -1;
    } else if (!strcmp(key, "description")) {
      if (yscalar_to(y, a->description, sizeof a->description, "description"))
        return -1;
    } else if (!strcmp(key, "check_status")) {
      if (yscalar_to(y, a->check_status, sizeof a->check_status,
                     "check_status"))
        return -1;
    } else if (!strcmp(key, "supported_architectures")) {
      if (parse_archs(y, a)) return -1;
    } else if (yskip(y)) {
      return -1;
    }
  }
  if (!a->name[0]) {
    char *err = y->err;
    size_t errlen = y->errlen;
    SETERR("%s:%lu: addon entry without a 'name'", y->file, *line);
    return -1;
  }
  return 0;
}

/* A plain folder name: no path tricks. */
static int name_ok(const char *s)
{
  size_t i;
  if (!s[0] || !strcmp(s, ".") || !strcmp(s, "..")) return 0;
  for (i = 0; s[i]; i++) {
    char c = s[i];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
          (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-'))
      return 0;
  }
  return 1;
}

static int is_dir(const char *path)
{
  struct stat st;
  return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Check and keep one parsed entry of repository `repo` at `dir`. */
static int add_addon(struct uh_repos *r, struct uh_addon *a, const char *repo,
                     const char *dir, const char *file, unsigned long line,
                     size_t first)
{
  size_t i;
  void *v = r->v;
  if (!name_ok(a->name)) {
    warn(r, "%s:%lu: skipped addon '%s': not a plain folder name", file, line,
         a->name);
    return 0;
  }
  for (i = first; i < r->n; i++)
    if (!strcmp(r->v[i].name, a->name)) {
      warn(r, "%s:%lu: skipped addon '%s': listed twice", file, line, a->name);
      return 0;
    }
  if (copy(a->repo, sizeof a->repo, repo) ||
      snprintf(a->dir, sizeof a->dir, "%s/addons/%s", dir, a->name) >=
          (int)sizeof a->dir) {
    warn(r, "%s:%lu: skipped addon '%s': path too long", file, line, a->name);
    return 0;
  }
  if (!is_dir(a->dir)) {
    warn(r, "%s:%lu: skipped addon '%s': no folder %s", file, line, a->name,
         a->dir);
    return 0;
  }
  if (grow(&v, &r->cap, r->n, sizeof *r->v)) return -1;
  r->v = v;
  r->v[r->n++] = *a;
  return 0;
}

/* The body of `addons:`; the current event is its value. */
static int parse_list(struct yp *y, struct uh_repos *r, const char *repo,
                      const char *dir)
{
  size_t first = r->n;
  struct uh_addon *a;
  if (y->ev.type != YAML_SEQUENCE_START_EVENT)
    return yfail(y, "'addons' must be a list");
  if (!(a = malloc(sizeof *a))) return yfail(y, "out of memory");
  for (;;) {
    unsigned long line;
    if (ynext(y)) break;
    if (y->ev.type == YAML_SEQUENCE_END_EVENT) { free(a); return 0; }
    if (parse_addon(y, a, &line)) break;
    if (add_addon(r, a, repo, dir, y->file, line, first)) {
      yfail(y, "out of memory");
      break;
    }
  }
  free(a);
  return -1;
}

/* Find key `want` in the mapping that the current event starts and leave
 * the parser on its value; 1 when absent (the mapping was consumed). */
static int find_key(struct yp *y, const char *want, const char *what)
{
  if (y->ev.type != YAML_MAPPING_START_EVENT) return yfail(y, what);
  for (;;) {
    int match;
    if (ynext(y)) return -1;
    if (y->ev.type == YAML_MAPPING_END_EVENT) return 1;
    match = y->ev.type == YAML_SCALAR_EVENT && !strcmp(yscalar(y), want);
    if (yskip(y) || ynext(y)) return -1;
    if (match) return 0;
    if (yskip(y)) return -1;
  }
}

static int parse_doc(struct yp *y, struct uh_repos *r, const char *repo,
                     const char *dir)
{
  int k;
  if (ynext(y) || ynext(y)) return -1;           /* STREAM_START, DOC_START */
  if (y->ev.type == YAML_STREAM_END_EVENT)
    return yfail(y, "empty file, expected 'microk8s-addons'");
  if (ynext(y)) return -1;                       /* the root node */
  k = find_key(y, "microk8s-addons", "expected a mapping with 'microk8s-addons'");
  if (k == 1) return yfail(y, "no 'microk8s-addons' key");
  if (k) return -1;
  k = find_key(y, "addons", "'microk8s-addons' must be a mapping");
  if (k == 1) return yfail(y, "no 'addons' list under 'microk8s-addons'");
  if (k) return -1;
  if (parse_list(y, r, repo, dir)) return -1;
  while (y->ev.type != YAML_STREAM_END_EVENT)    /* check the rest parses */
    if (ynext(y)) return -1;
  return 0;
}

/* Load one repository; 1 when it has no addons.yaml. */
static int load_repo(struct uh_repos *r, const char *dir, const char *repo,
                     char *err, size_t errlen)
{
  char file[PATH_MAX];
  char *buf = NULL;
  size_t len = 0;
  struct yp y;
  int rc;
  if (snprintf(file, sizeof file, "%s/addons.yaml", dir) >= (int)sizeof file) {
    SETERR("%s: path too long", dir);
    return -1;
  }
  rc = read_file(file, &buf, &len, err, errlen);
  if (rc) return rc;
  memset(&y, 0, sizeof y);
  y.file = file;
  y.err = err;
  y.errlen = errlen;
  if (!yaml_parser_initialize(&y.p)) {
    SETERR("%s: out of memory", file);
    free(buf);
    return -1;
  }
  yaml_parser_set_input_string(&y.p, (const unsigned char *)buf, len);
  rc = parse_doc(&y, r, repo, dir);
  if (y.have) yaml_event_delete(&y.ev);
  yaml_parser_delete(&y.p);
  free(buf);
  return rc;
}

/* A folder of hook folders without addons.yaml (this repository's
 * hooks/, given as --addons): each <dir>/<name>/upgrade.lua is an addon
 * with no version or check_status. 1 when there is none. */
static int load_hook_folders(struct uh_repos *r, const char *dir,
                             const char *repo)
{
  struct dirent **names;
  int i, n = scandir(dir, &names, NULL, alphasort), found = 0, rc = 0;
  if (n < 0) return 1;
  for (i = 0; i < n; i++) {
    struct uh_addon a;
    char hook[PATH_MAX];
    struct stat st;
    memset(&a, 0, sizeof a);
    if (rc == 0 && name_ok(names[i]->d_name)
        && !copy(a.name, sizeof a.name, names[i]->d_name)
        && !copy(a.repo, sizeof a.repo, repo)
        && snprintf(a.dir, sizeof a.dir, "%s/%s", dir, a.name)
               < (int)sizeof a.dir
        && snprintf(hook, sizeof hook, "%s/upgrade.lua", a.dir)
               < (int)sizeof hook
        && stat(hook, &st) == 0 && S_ISREG(st.st_mode)) {
      void *v = r->v;
      if (grow(&v, &r->cap, r->n, sizeof *r->v)) rc = -1;
      else { r->v = v; r->v[r->n++] = a; found = 1; }
    }
    free(names[i]);
  }
  free(names);
  return rc ? rc : !found;
}

/* Register repository `name`; 1 when the name is already taken. */
static int add_repo(struct uh_repos *r, const char *name)
{
  size_t i;
  void *v = r->repos;
  for (i = 0; i < r->nrepos; i++)
    if (!strcmp(r->repos[i], name)) return 1;
  if (grow(&v, &r->repocap, r->nrepos, sizeof *r->repos)) return -1;
  r->repos = v;
  if (copy(r->repos[r->nrepos], sizeof r->repos[0], name)) return -1;
  r->nrepos++;
  return 0;
}

/* Load the repository at dir; required: the user named it. */
static int open_repo(struct uh_repos *r, const char *dir, const char *name,
                     int required, char *err, size_t errlen)
{
  int rc;
  size_t nrepos = r->nrepos;
  if (!name_ok(name) || strlen(name) >= sizeof r->repos[0]) {
    if (required) { SETERR("%s: not a usable repository name", dir); return -1; }
    warn(r, "%s: skipped repository: not a usable name", dir);
    return 0;
  }
  if (required && !is_dir(dir)) {
    SETERR("%s: not a directory", dir);
    return -1;
  }
  rc = add_repo(r, name);
  if (rc == 1) {
    warn(r, "%s: skipped repository: an earlier one is also named '%s'", dir,
         name);
    return 0;
  }
  if (rc) { SETERR("out of memory"); return -1; }
  rc = load_repo(r, dir, name, err, errlen);
  if (rc == 1 && required)
    rc = load_hook_folders(r, dir, name);
  if (rc == 1) {
    r->nrepos = nrepos;
    if (required) {
      SETERR("%s: no addons.yaml, and no <addon>/upgrade.lua folders", dir);
      return -1;
    }
    warn(r, "%s: skipped repository: no addons.yaml", dir);
    return 0;
  }
  return rc;
}

static int cmp_names(const void *a, const void *b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every $SNAP_COMMON/addons/<repo>/ in byte order of the name. */
static int scan_snap_common(struct uh_repos *r, const char *snap_common,
                            char *err, size_t errlen)
{
  char base[PATH_MAX], dir[PATH_MAX];
  char **names = NULL;
  size_t n = 0, cap = 0, i;
  struct dirent *de;
  DIR *d;
  int rc = 0;
  if (snprintf(base, sizeof base, "%s/addons", snap_common) >= (int)sizeof base) {
    SETERR("%s: path too long", snap_common);
    return -1;
  }
  if (!(d = opendir(base))) {
    if (errno == ENOENT || errno == ENOTDIR) return 0;
    SETERR("%s: %s", base, strerror(errno));
    return -1;
  }
  while ((de = readdir(d)) != NULL) {
    void *v = names;
    if (de->d_name[0] == '.') continue;
    if (grow(&v, &cap, n, sizeof *names)) { rc = -1; break; }
    names = v;
    if (!(names[n] = strdup(de->d_name))) { rc = -1; break; }
    n++;
  }
  closedir(d);
  if (rc) SETERR("out of memory");
  if (!rc && n) qsort(names, n, sizeof *names, cmp_names);
  for (i = 0; !rc && i < n; i++) {
    if (snprintf(dir, sizeof dir, "%s/%s", base, names[i]) >= (int)sizeof dir) {
      warn(r, "%s/%s: skipped repository: path too long", base, names[i]);
      continue;
    }
    if (is_dir(dir)) rc = open_repo(r, dir, names[i], 0, err, errlen);
  }
  for (i = 0; i < n; i++) free(names[i]);
  free(names);
  return rc;
}

/* The basename of dir, ignoring trailing slashes. */
static int dir_name(const char *dir, char *out, size_t outlen)
{
  size_t end = strlen(dir), start;
  while (end > 1 && dir[end - 1] == '/') end--;
  start = end;
  while (start > 0 && dir[start - 1] != '/') start--;
  if (end - start >= outlen) return -1;
  memcpy(out, dir + start, end - start);
  out[end - start] = 0;
  return 0;
}

/* The repository's name: its folder's, after resolving "." and ".."
 * (`--addons .` from inside a repository). */
static int repo_name(const char *dir, char *out, size_t outlen)
{
  char *real;
  int rc;
  if (dir_name(dir, out, outlen) == 0 && strcmp(out, ".")
      && strcmp(out, "..") && strcmp(out, "/"))
    return 0;
  real = realpath(dir, NULL);
  if (!real)
    return -1;
  rc = dir_name(real, out, outlen);
  free(real);
  return rc;
}

struct uh_repos *uh_repos_load(const char *const *extra_dirs, int n,
                               const char *snap_common, char *err,
                               size_t errlen)
{
  struct uh_repos *r = calloc(1, sizeof *r);
  int i;
  if (err && errlen) err[0] = 0;
  if (!r) { SETERR("out of memory"); return NULL; }
  for (i = 0; i < n; i++) {
    char name[128];
    if (!extra_dirs[i] || !extra_dirs[i][0]) {
      SETERR("--addons: empty folder name");
      goto fail;
    }
    if (repo_name(extra_dirs[i], name, sizeof name)) {
      SETERR("%s: not a usable repository name", extra_dirs[i]);
      goto fail;
    }
    if (open_repo(r, extra_dirs[i], name, 1, err, errlen)) goto fail;
  }
  if (snap_common && snap_common[0] &&
      scan_snap_common(r, snap_common, err, errlen))
    goto fail;
  return r;
fail:
  uh_repos_free(r);
  return NULL;
}

void uh_repos_free(struct uh_repos *r)
{
  size_t i;
  if (!r) return;
  for (i = 0; i < r->nwarn; i++) free(r->warn[i]);
  free(r->warn);
  free(r->repos);
  free(r->v);
  free(r);
}

size_t uh_repos_count(const struct uh_repos *r) { return r ? r->n : 0; }

const struct uh_addon *uh_repos_at(const struct uh_repos *r, size_t i)
{
  return (r && i < r->n) ? &r->v[i] : NULL;
}

size_t uh_repos_nrepos(const struct uh_repos *r) { return r ? r->nrepos : 0; }

const char *uh_repos_repo(const struct uh_repos *r, size_t i)
{
  return (r && i < r->nrepos) ? r->repos[i] : NULL;
}

size_t uh_repos_nwarnings(const struct uh_repos *r) { return r ? r->nwarn : 0; }

const char *uh_repos_warning(const struct uh_repos *r, size_t i)
{
  return (r && i < r->nwarn) ? r->warn[i] : NULL;
}

/* "a, b, c" of the repository names, or a note when there are none. */
static void list_repos(const struct uh_repos *r, char *err, size_t errlen,
                       size_t *pos)
{
  size_t i;
  if (r->nrepos == 0) appendf(err, errlen, pos, "(no addon repositories)");
  for (i = 0; i < r->nrepos; i++)
    appendf(err, errlen, pos, "%s%s", i ? ", " : "", r->repos[i]);
}

static int find_in_repo(const struct uh_repos *r, const char *name,
                        struct uh_addon *out, char *err, size_t errlen)
{
  const char *slash = strchr(name, '/');
  size_t rlen = (size_t)(slash - name), i, pos = 0;
  int known = 0;
  for (i = 0; i < r->nrepos; i++)
    if (strlen(r->repos[i]) == rlen && !strncmp(r->repos[i], name, rlen))
      known = 1;
  if (err && errlen) err[0] = 0;
  if (!known) {
    appendf(err, errlen, &pos, "repository '%.*s' not found; repositories: ",
            (int)rlen, name);
    list_repos(r, err, errlen, &pos);
    return -1;
  }
  for (i = 0; i < r->n; i++)
    if (strlen(r->v[i].repo) == rlen && !strncmp(r->v[i].repo, name, rlen) &&
        !strcmp(r->v[i].name, slash + 1)) {
      *out = r->v[i];
      return 0;
    }
  {
    const char **names = calloc(r->n ? r->n : 1, sizeof *names), *near;
    size_t k = 0;
    for (i = 0; names && i < r->n; i++)
      if (strlen(r->v[i].repo) == rlen && !strncmp(r->v[i].repo, name, rlen))
        names[k++] = r->v[i].name;
    near = names ? uh_closest(slash + 1, names, k) : NULL;
    if (near)
      SETERR("addon '%s' not found in: %.*s; did you mean '%.*s/%s'?",
             slash + 1, (int)rlen, name, (int)rlen, name, near);
    else
      SETERR("addon '%s' not found in: %.*s", slash + 1, (int)rlen, name);
    free(names);
  }
  return -1;
}

int uh_repos_find(const struct uh_repos *r, const char *name,
                  struct uh_addon *out, char *err, size_t errlen)
{
  size_t i, hits = 0, pos = 0;
  const struct uh_addon *hit = NULL;
  if (err && errlen) err[0] = 0;
  if (!r || !name || !name[0] || !out) { SETERR("no addon name"); return -1; }
  if (strchr(name, '/')) {
    if (strchr(name, '/') != strrchr(name, '/') || name[0] == '/') {
      SETERR("addon '%s': expected <addon> or <repository>/<addon>", name);
      return -1;
    }
    return find_in_repo(r, name, out, err, errlen);
  }
  for (i = 0; i < r->n; i++)
    if (!strcmp(r->v[i].name, name)) {
      if (++hits == 1) hit = &r->v[i];
    }
  if (hits == 1) { *out = *hit; return 0; }
  if (hits == 0) {
    const char **names = calloc(r->n ? r->n : 1, sizeof *names), *near;
    for (i = 0; names && i < r->n; i++)
      names[i] = r->v[i].name;
    near = names ? uh_closest(name, names, r->n) : NULL;
    if (near)
      appendf(err, errlen, &pos, "addon '%s' not found; did you mean '%s'? "
              "Repositories: ", name, near);
    else
      appendf(err, errlen, &pos, "addon '%s' not found in: ", name);
    free(names);
    list_repos(r, err, errlen, &pos);
    return -1;
  }
  appendf(err, errlen, &pos, "addon '%s' is in several repositories: ", name);
  for (i = 0, hits = 0; i < r->n; i++)
    if (!strcmp(r->v[i].name, name))
      appendf(err, errlen, &pos, "%s%s/%s", hits++ ? ", " : "", r->v[i].repo,
              name);
  return -2;
}

int uh_addon_hook(const struct uh_addon *a, char *path, size_t pathlen)
{
  struct stat st;
  if (!path || pathlen == 0) return -1;
  path[0] = 0;
  if (snprintf(path, pathlen, "%s/upgrade.lua", a->dir) >= (int)pathlen) {
    path[0] = 0;
    return -1;
  }
  if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) return UH_HOOK_LUA;
  if (snprintf(path, pathlen, "%s/upgrade", a->dir) >= (int)pathlen) {
    path[0] = 0;
    return -1;
  }
  if (stat(path, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 0111))
    return UH_HOOK_EXEC;
  path[0] = 0;
  return UH_HOOK_NONE;
}

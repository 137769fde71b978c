/* helm.chart(path): the files of a packaged chart (a .tgz as `helm
 * package` writes it), read with libarchive, for the release record
 * (docs/internals.md, "C families"):
 *
 *   chart(path) -> { files = { ["Chart.yaml"] = bytes,
 *                              ["templates/x.yaml"] = bytes, ... } }
 *                | nil, message
 *
 * Names are given without the chart's top folder, as Helm's loader
 * keeps them.  The archive is untrusted: it is refused whole, naming the
 * entry, for an absolute name, a `..` component, a link, a device or
 * FIFO, a file outside the top folder, one over Helm's own bounds (5 MiB
 * a file, 100 MiB in all: MaxDecompressedFileSize and
 * MaxDecompressedChartSize) or more than MAX_ENTRIES entries.  Tested by
 * tests/unit/test_helm.c.
 *
 * libarchive is loaded on first use, as libcurl is (host/curl_lazy.c):
 * it pulls in a dozen libraries (libxml2, nettle, zstd, lz4, acl...)
 * that doubled the time of `uphook version` when linked. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <archive.h>
#include <archive_entry.h>
#include <lua.h>
#include <lauxlib.h>
#include "helm.h"

#define MAX_FILE (5 << 20)
#define MAX_TOTAL (100 << 20)
#define MAX_ENTRIES 10000
#define SONAME "libarchive.so.13"

/* The entry points used, as archive.h declares them. */
static struct {
  struct archive *(*read_new)(void);
  int (*support_filter_gzip)(struct archive *);
  int (*support_format_tar)(struct archive *);
  int (*open_fd)(struct archive *, int, size_t);
  int (*next_header)(struct archive *, struct archive_entry **);
  la_ssize_t (*read_data)(struct archive *, void *, size_t);
  int (*read_free)(struct archive *);
  const char *(*error_string)(struct archive *);
  const char *(*pathname)(struct archive_entry *);
  la_int64_t (*size)(struct archive_entry *);
  const char *(*hardlink)(struct archive_entry *);
  __LA_MODE_T (*filetype)(struct archive_entry *);
} A;

#define SYM(field, name) \
  (*(void **)(&A.field) = dlsym(h, name)) == NULL

/* NULL once libarchive is loaded, else why it cannot be */
static const char *load(void)
{
  static void *h;
  if (h)
    return NULL;
  h = dlopen(SONAME, RTLD_NOW | RTLD_LOCAL);
  if (!h || SYM(read_new, "archive_read_new")
      || SYM(support_filter_gzip, "archive_read_support_filter_gzip")
      || SYM(support_format_tar, "archive_read_support_format_tar")
      || SYM(open_fd, "archive_read_open_fd")
      || SYM(next_header, "archive_read_next_header")
      || SYM(read_data, "archive_read_data")
      || SYM(read_free, "archive_read_free")
      || SYM(error_string, "archive_error_string")
      || SYM(pathname, "archive_entry_pathname")
      || SYM(size, "archive_entry_size")
      || SYM(hardlink, "archive_entry_hardlink")
      || SYM(filetype, "archive_entry_filetype")) {
    h = NULL;
    return "cannot load " SONAME;
  }
  return NULL;
}

/* What is wrong with an entry's name, or NULL; *rest: the name inside
 * the top folder ("" for the folder itself). */
static const char *bad_name(const char *name, const char **rest)
{
  const char *p, *slash;
  if (!*name)
    return "has an empty name";
  if (*name == '/')
    return "has an absolute name";
  for (p = name; p; p = slash ? slash + 1 : NULL) {
    slash = strchr(p, '/');
    if ((slash ? (size_t)(slash - p) : strlen(p)) == 2
        && p[0] == '.' && p[1] == '.')
      return "has a '..' component";
  }
  slash = strchr(name, '/');
  if (!slash)
    return "lies outside the chart's top folder";
  *rest = slash + 1;
  return NULL;
}

/* Read the current entry's data (size bytes declared) and set it as
 * files[rest]; NULL, or what went wrong. */
static const char *read_entry(lua_State *L, struct archive *a,
                              la_int64_t size, const char *rest)
{
  char *buf = malloc(size > 0 ? (size_t)size : 1);
  size_t got = 0;
  la_ssize_t r;
  if (!buf)
    return "cannot be held in memory";
  while ((r = A.read_data(a, buf + got, (size_t)size - got)) > 0)
    got += (size_t)r;
  if (r < 0 || got != (size_t)size) {
    free(buf);
    return r < 0 ? A.error_string(a) : "is truncated";
  }
  lua_pushlstring(L, buf, got);
  free(buf);
  lua_setfield(L, -2, rest);
  return NULL;
}

/* Read every entry into the table on the top; NULL, or what is wrong
 * (with the entry's name in *entry when one is to blame). */
static const char *read_all(lua_State *L, struct archive *a,
                            const char **entry)
{
  struct archive_entry *e;
  la_int64_t total = 0;
  int n = 0, rc;
  while ((rc = A.next_header(a, &e)) == ARCHIVE_OK
         || rc == ARCHIVE_WARN) {
    const char *name = A.pathname(e), *rest = NULL, *why;
    la_int64_t size = A.size(e);
    *entry = name ? name : "?";
    if (!name)
      return "has no name";
    if (++n > MAX_ENTRIES)
      return "is past the limit of 10000 entries";
    if ((why = bad_name(name, &rest)) != NULL)
      return why;
    if (A.hardlink(e) || A.filetype(e) == AE_IFLNK)
      return "is a link (a chart holds only files and folders)";
    if (A.filetype(e) == AE_IFDIR)
      continue;
    if (A.filetype(e) != AE_IFREG)
      return "is not a regular file";
    if (!*rest || rest[strlen(rest) - 1] == '/')
      return "is a file named as a folder";
    if (size < 0 || size > MAX_FILE)
      return "is larger than 5 MiB (Helm's bound on a chart's file)";
    if ((total += size) > MAX_TOTAL)
      return "takes the chart past 100 MiB (Helm's bound on a chart)";
    if ((why = read_entry(L, a, size, rest)) != NULL)
      return why;
  }
  *entry = NULL;
  return rc == ARCHIVE_EOF ? NULL : A.error_string(a);
}

static int chart_fail(lua_State *L, const char *path, const char *entry,
                      const char *why)
{
  luaL_pushfail(L);
  if (entry)
    lua_pushfstring(L, "chart %s: the entry '%s' %s", path, entry, why);
  else
    lua_pushfstring(L, "chart %s: %s", path, why ? why : "unreadable");
  return 2;
}

int helm_chart(lua_State *L)
{
  const char *path = luaL_checkstring(L, 1), *why, *entry = NULL;
  struct archive *a;
  struct stat st;
  int fd;
  if ((why = load()) != NULL)
    return chart_fail(L, path, NULL, why);
  fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0)
    return chart_fail(L, path, NULL, strerror(errno));
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    return chart_fail(L, path, NULL, "not a regular file");
  }
  a = A.read_new();
  if (!a) {
    close(fd);
    return luaL_error(L, "chart: out of memory");
  }
  A.support_filter_gzip(a);
  A.support_format_tar(a);
  lua_createtable(L, 0, 1);
  lua_createtable(L, 0, 16);
  if (A.open_fd(a, fd, 65536) != ARCHIVE_OK)
    why = A.error_string(a);
  else
    why = read_all(L, a, &entry);
  if (why) {
    chart_fail(L, path, entry, why);
    A.read_free(a);
    close(fd);
    return 2;
  }
  A.read_free(a);
  close(fd);
  lua_setfield(L, -2, "files");
  return 1;
}

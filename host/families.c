/* The C families of the trusted parent state, by module name. */
#include "families.h"
#include "fs.h"
#include "hash.h"
#include "http.h"
#include "supervise.h"
#include "sys.h"
#include "yaml.h"
#if __has_include("argsfile.h")
#include "argsfile.h"
#define HAVE_ARGSFILE 1
#endif
#if __has_include("journal.h")
#include "journal.h"
#define HAVE_JOURNAL 1
#endif
#if __has_include("json.h")
#include "json.h"
#define HAVE_JSON 1
#endif

const struct uh_family uh_families[] = {
#ifdef HAVE_ARGSFILE
  { "uphook.c.argsfile", luaopen_uphook_argsfile },
#endif
  { "uphook.c.fs", luaopen_uphook_fs },
  { "uphook.c.hash", luaopen_uphook_hash },
  { "uphook.c.http", luaopen_uphook_http },
#ifdef HAVE_JOURNAL
  { "uphook.c.journal", luaopen_uphook_journal },
#endif
#ifdef HAVE_JSON
  { "uphook.c.json", luaopen_uphook_json },
#endif
  { "uphook.c.sandbox", luaopen_uphook_sandbox },
  { "uphook.c.sys", luaopen_uphook_sys },
  { "uphook.c.yaml", luaopen_uphook_yaml },
  { NULL, NULL }
};

/* The C families of the trusted parent state, by module name. */
#include "agent.h"
#include "argsfile.h"
#include "broker.h"
#include "cli.h"
#include "families.h"
#include "fs.h"
#include "hash.h"
#include "helm.h"
#include "http.h"
#include "journal.h"
#include "json.h"
#include "kube.h"
#include "sys.h"
#include "tables.h"
#include "testpoint.h"
#include "yaml.h"

const struct uh_family uh_families[] = {
  { "uphook.c.agent", luaopen_uphook_agent },
  { "uphook.c.argsfile", luaopen_uphook_argsfile },
  { "uphook.c.broker", luaopen_uphook_broker },
  { "uphook.c.cli", luaopen_uphook_cli },
  { "uphook.c.fs", luaopen_uphook_fs },
  { "uphook.c.hash", luaopen_uphook_hash },
  { "uphook.c.helm", luaopen_uphook_helm },
  { "uphook.c.http", luaopen_uphook_http },
  { "uphook.c.journal", luaopen_uphook_journal },
  { "uphook.c.json", luaopen_uphook_json },
  { "uphook.c.kube", luaopen_uphook_kube },
  { "uphook.c.sys", luaopen_uphook_sys },
  { "uphook.c.tables", luaopen_uphook_tables },
  { "uphook.c.testpoint", luaopen_uphook_testpoint },
  { "uphook.c.yaml", luaopen_uphook_yaml },
  { NULL, NULL }
};

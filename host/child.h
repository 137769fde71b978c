/* The hook child: a fresh Lua state with the sandboxed environment,
 * confined by host/confine.c, talking to the broker over two pipes. */
#ifndef UH_CHILD_H
#define UH_CHILD_H
#include <stddef.h>
#include "confine.h"

struct uh_child_conf {
  const char *src;        /* the hook's source text */
  size_t len;
  const char *chunkname;  /* "@/path/to/upgrade.lua" */
  size_t mem_limit;       /* bytes of Lua memory (--memory-limit) */
  double deadline;        /* CLOCK_MONOTONIC seconds (--timeout) */
  double timeout;         /* seconds, for messages */
  struct uh_limits lim;
  int unconfined;         /* test-only: skip uh_confine_enter */
  int test;               /* a *_test.lua file, not a hook (testchild.c) */
};

/* Primitives that the child forwards to the broker: the one list of the
 * hook's world.  NULL-terminated "family.name" strings. */
extern const char *const uh_child_rpc_prims[];

/* host/child_hook.c.  [hook] -> [hook, {types = {k = typename},
 * data = {k = v}}]: the hook table's field types and data fields (a
 * param's `check` function becomes data.__param_checks[name] = true). */
struct lua_State;
int uh_child_describe(struct lua_State *L);
/* The "__params" phase: [{values = {name = value}, ctx = ctx}] ->
 * [..., {name = problem}], against the hook kept in the registry under
 * "uphook.hook". */
int uh_child_check_params(struct lua_State *L);

/* Child entry point after fork: never returns. */
void uh_child_main(int rfd, int wfd, const struct uh_child_conf *conf)
  __attribute__((noreturn));

#endif

/* Build tool, not part of uphook: compile the Lua sources of lua/ and
 * stdlib/ to Lua bytecode and write them as the C table host/embedded.h
 * declares, so that an installed uphook needs no Lua files beside it and
 * no command compiles its engine at start (docs/internals.md, "Embedded
 * modules").  The bytecode keeps its debug information: tracebacks name
 * the file and line as the source would.  A syntax error fails the build
 * and names the file.  Module names: lua/engine/phases.lua -> "uphook.engine.phases",
 * lua/backend/mock/cluster.lua -> "uphook.backend.mock.cluster", stdlib/semver.lua ->
 * "semver".
 *
 * usage: embed FILE.lua... > embedded.c */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <lua.h>
#include <lauxlib.h>

struct sink {
  FILE *out;
  size_t n;            /* bytes written so far, for line breaks */
};

static int write_bytes(lua_State *L, const void *p, size_t sz, void *ud)
{
  struct sink *s = ud;
  const unsigned char *b = p;
  size_t i;
  (void)L;
  for (i = 0; i < sz; i++, s->n++)
    fprintf(s->out, "%u,%s", b[i], (s->n % 24 == 23) ? "\n" : "");
  return 0;
}

/* "lua/backend/mock/cluster.lua" -> "uphook.backend.mock.cluster", "stdlib/x.lua" -> "x";
 * NULL for a path under neither folder. */
static char *module_name(const char *path)
{
  const char *rest, *prefix;
  size_t n;
  char *out, *p;
  if (strncmp(path, "lua/", 4) == 0) {
    rest = path + 4;
    prefix = "uphook.";
  } else if (strncmp(path, "stdlib/", 7) == 0) {
    rest = path + 7;
    prefix = "";
  } else {
    return NULL;
  }
  n = strlen(rest);
  if (n < 5 || strcmp(rest + n - 4, ".lua") != 0)
    return NULL;
  out = malloc(strlen(prefix) + n + 1);
  if (!out)
    return NULL;
  snprintf(out, strlen(prefix) + n + 1, "%s%.*s", prefix, (int)(n - 4), rest);
  for (p = out; *p; p++)
    if (*p == '/')
      *p = '.';
  return out;
}

/* One source as `static const unsigned char srcI[]`; 0 or 1 (reported). */
static int compile_one(lua_State *L, const char *path, int i)
{
  struct sink s = { stdout, 0 };
  if (luaL_loadfilex(L, path, "t") != LUA_OK) {
    fprintf(stderr, "embed: %s\n", lua_tostring(L, -1));
    lua_pop(L, 1);
    return 1;
  }
  printf("static const unsigned char src%d[] = {\n", i);
  lua_dump(L, write_bytes, &s, 0);
  printf("0};\n");
  lua_pop(L, 1);
  return 0;
}

int main(int argc, char **argv)
{
  lua_State *L = luaL_newstate();
  int i, bad = 0;
  if (!L)
    return 1;
  printf("#include \"embedded.h\"\n");
  for (i = 1; i < argc; i++)
    bad |= compile_one(L, argv[i], i);
  printf("const struct uh_embedded uh_embedded[] = {\n");
  for (i = 1; i < argc && !bad; i++) {
    char *name = module_name(argv[i]);
    if (!name) {
      fprintf(stderr, "embed: %s: not a .lua file under lua/ or stdlib/\n",
              argv[i]);
      bad = 1;
      break;
    }
    printf("  {\"%s\", \"@%s\", (const char *)src%d, sizeof src%d - 1},\n",
           name, argv[i], i, i);
    free(name);
  }
  printf("  {0, 0, 0, 0}\n};\n");
  lua_close(L);
  return bad || fflush(stdout) != 0;
}

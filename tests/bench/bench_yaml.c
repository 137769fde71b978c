/* bench_yaml: median time of uphook's yaml decode_all against a bare
 * libyaml event parse (yaml_parser_parse loop only) over the same files,
 * read into memory first, runs interleaved.
 * usage: bench_yaml RUNS FILE...   prints "uphook MS" and "libyaml MS"
 *        bench_yaml parse FILE     reads FILE and parses it once, the
 *                                  whole process the measure (bench_hook.sh) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <lauxlib.h>
#include <lualib.h>
#include <yaml.h>  /* host/yaml.h: uphook API + libyaml */

typedef struct { char *s; size_t n; } text;

static double now_ms(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int bare_parse(const text *t)
{
  yaml_parser_t p;
  yaml_event_t ev;
  int done = 0, ok = 1;
  yaml_parser_initialize(&p);
  yaml_parser_set_input_string(&p, (const unsigned char *)t->s, t->n);
  while (!done) {
    if (!yaml_parser_parse(&p, &ev)) {
      ok = 0;
      break;
    }
    done = ev.type == YAML_STREAM_END_EVENT;
    yaml_event_delete(&ev);
  }
  yaml_parser_delete(&p);
  return ok;
}

static int cmp(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static int load(const char *path, text *t)
{
  FILE *f = fopen(path, "rb");
  long n;
  if (!f || fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 ||
      fseek(f, 0, SEEK_SET) || !(t->s = malloc((size_t)n + 1)) ||
      fread(t->s, 1, (size_t)n, f) != (size_t)n) {
    perror(path);
    return 0;
  }
  t->n = (size_t)n;
  fclose(f);
  return 1;
}

/* The whole-process side of bench_hook.sh: read the file, parse it. */
static int parse_once(const char *path)
{
  text t;
  return load(path, &t) && bare_parse(&t) ? 0 : 1;
}

int main(int argc, char **argv)
{
  int runs = argc > 2 ? (int)strtol(argv[1], NULL, 10) : 0, nf = argc - 2;
  int r, i, docs = 0;
  text *files = calloc((size_t)(nf > 0 ? nf : 1), sizeof *files);
  double *tu = calloc((size_t)(runs > 0 ? runs : 1), sizeof(double));
  double *tl = calloc((size_t)(runs > 0 ? runs : 1), sizeof(double));
  size_t bytes = 0;
  char err[256];
  lua_State *L;
  if (argc == 3 && strcmp(argv[1], "parse") == 0)
    return parse_once(argv[2]);
  L = luaL_newstate();
  if (runs < 1 || nf < 1) {
    fprintf(stderr, "usage: bench_yaml RUNS FILE...\n");
    return 2;
  }
  for (i = 0; i < nf; i++) {
    if (!load(argv[i + 2], &files[i]))
      return 1;
    bytes += files[i].n;
  }
  for (r = 0; r < runs; r++) {
    double t0 = now_ms();
    for (i = 0; i < nf; i++) {
      if (uh_yaml_decode_push(L, files[i].s, files[i].n, 1, err, sizeof err)) {
        fprintf(stderr, "%s: %s\n", argv[i + 2], err);
        return 1;
      }
      if (r == 0)
        docs += (int)lua_rawlen(L, -1);
      lua_pop(L, 1);
    }
    lua_gc(L, LUA_GCCOLLECT, 0);  /* inside the timing: GC is part of it */
    tu[r] = now_ms() - t0;
    t0 = now_ms();
    for (i = 0; i < nf; i++)
      if (!bare_parse(&files[i]))
        return 1;
    tl[r] = now_ms() - t0;
  }
  qsort(tu, (size_t)runs, sizeof *tu, cmp);
  qsort(tl, (size_t)runs, sizeof *tl, cmp);
  printf("files %d bytes %zu docs %d\n", nf, bytes, docs);
  printf("uphook %.1f\nlibyaml %.1f\n", tu[runs / 2], tl[runs / 2]);
  lua_close(L);
  return 0;
}

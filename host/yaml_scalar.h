/* Plain scalar resolution of uphook.c.yaml, shared by the decoder
 * (host/yaml.c) and the emitter (host/yaml_emit.c, through
 * uh_yaml_plain_is_string): a scalar resolves as Kubernetes' YAML does
 * (sigs.k8s.io/yaml over go-yaml v2: YAML 1.1 booleans, octal 0755,
 * timestamps stay strings). */
#ifndef UH_YAML_SCALAR_H
#define UH_YAML_SCALAR_H
#include <stddef.h>
#include <lua.h>

enum { R_STR, R_NULL, R_BOOL, R_INT, R_FLOAT };

typedef struct {
  int kind;
  int b;
  lua_Integer i;
  double d;
} yscalar;

/* Resolve the plain scalar s[0..n) into v; returns v->kind. */
int uh_yaml_resolve_plain(const char *s, size_t n, yscalar *v);

#endif

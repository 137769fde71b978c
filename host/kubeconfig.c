/* Kubeconfig discovery and parsing (see kubeconfig.h). */
#include "kubeconfig.h"
#include "arena.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <openssl/evp.h>
#include <yaml.h>

#define KC_FILE_MAX (1 << 20)      /* a kubeconfig or credential file */
#define KC_ARENA (512u << 10)      /* every credential of one context */

void uh_kubeconfig_free(uh_kubeconfig *kc)
{
  uh_arena_free(&kc->arena);
  memset(&kc->ca, 0, sizeof kc->ca);
  kc->cert = kc->key = kc->token = kc->username = kc->password = kc->ca;
}

/* ---- files ---- */

static int exists(const char *path)
{
  struct stat st;
  return path && *path && stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

uh_err uh_kubeconfig_find(const char *explicit_path, const char *snap_data,
                          const char *kubeconfig_env, const char *home,
                          char *out, size_t outlen, char *err,
                          size_t errlen)
{
  char path[PATH_MAX];
  if (explicit_path && *explicit_path) {
    snprintf(out, outlen, "%s", explicit_path);
    return UH_OK;
  }
  if (snap_data && *snap_data) {
    snprintf(path, sizeof path, "%s/credentials/client.config", snap_data);
    if (exists(path))
      return snprintf(out, outlen, "%s", path), UH_OK;
  }
  for (const char *p = kubeconfig_env; p && *p;) {
    const char *colon = strchr(p, ':');
    size_t n = colon ? (size_t)(colon - p) : strlen(p);
    if (n > 0 && n < sizeof path) {
      memcpy(path, p, n);
      path[n] = '\0';
      if (exists(path))
        return snprintf(out, outlen, "%s", path), UH_OK;
    }
    p += n + (colon != NULL);
  }
  if (home && *home) {
    snprintf(path, sizeof path, "%s/.kube/config", home);
    if (exists(path))
      return snprintf(out, outlen, "%s", path), UH_OK;
  }
  snprintf(err, errlen, "no kubeconfig found: tried --kubeconfig, "
           "%s/credentials/client.config, $KUBECONFIG and "
           "%s/.kube/config", snap_data ? snap_data : "$SNAP_DATA",
           home ? home : "~");
  return UH_ENOENT;
}

/* ---- YAML document navigation ---- */

typedef struct kc_parse {
  uh_kubeconfig *kc;
  yaml_document_t *doc;
  char dir[PATH_MAX];        /* the kubeconfig's folder */
  char where[UH_KC_NAME_MAX + 32];   /* "users[admin]" */
  char *err;
  size_t errlen;
} kc_parse;

static yaml_node_t *map_get(yaml_document_t *d, yaml_node_t *m,
                            const char *key)
{
  if (!m || m->type != YAML_MAPPING_NODE)
    return NULL;
  for (yaml_node_pair_t *p = m->data.mapping.pairs.start;
       p < m->data.mapping.pairs.top; p++) {
    yaml_node_t *k = yaml_document_get_node(d, p->key);
    if (k && k->type == YAML_SCALAR_NODE &&
        strcmp((const char *)k->data.scalar.value, key) == 0)
      return yaml_document_get_node(d, p->value);
  }
  return NULL;
}

static const char *scalar(yaml_node_t *n)
{
  if (!n || n->type != YAML_SCALAR_NODE)
    return NULL;
  return (const char *)n->data.scalar.value;
}

/* The entry of list `list` (clusters, contexts, users) named `name`,
 * returning its `field` mapping. */
static yaml_node_t *named(kc_parse *p, const char *list, const char *name,
                          const char *field)
{
  yaml_node_t *root = yaml_document_get_root_node(p->doc);
  yaml_node_t *seq = map_get(p->doc, root, list);
  if (!seq || seq->type != YAML_SEQUENCE_NODE)
    return NULL;
  for (yaml_node_item_t *i = seq->data.sequence.items.start;
       i < seq->data.sequence.items.top; i++) {
    yaml_node_t *e = yaml_document_get_node(p->doc, *i);
    const char *n = scalar(map_get(p->doc, e, "name"));
    if (n && strcmp(n, name) == 0)
      return map_get(p->doc, e, field);
  }
  return NULL;
}

static uh_err fail(kc_parse *p, uh_err e, const char *field,
                   const char *why)
{
  char label[UH_KC_NAME_MAX + 96];
  snprintf(label, sizeof label, "%s%s%s", p->where,
           *p->where && field ? "." : "", field ? field : "");
  snprintf(p->err, p->errlen, "kubeconfig %s: %s%s%s", p->kc->file, label,
           *label ? ": " : "", why);
  return e;
}

/* ---- credentials into the arena ---- */

static uh_err put_base64(kc_parse *p, const char *field, const char *s,
                         uh_kc_blob *b)
{
  size_t n = strlen(s);
  int outl = 0, finl = 0;
  char *dst = uh_arena_take(&p->kc->arena, n / 4 * 3 + 3);
  EVP_ENCODE_CTX *ctx = EVP_ENCODE_CTX_new();
  if (!dst || !ctx) {
    EVP_ENCODE_CTX_free(ctx);
    return fail(p, UH_ELIMIT, field, "too large");
  }
  EVP_DecodeInit(ctx);
  if (n > INT32_MAX ||
      EVP_DecodeUpdate(ctx, (unsigned char *)dst, &outl,
                       (const unsigned char *)s, (int)n) < 0 ||
      EVP_DecodeFinal(ctx, (unsigned char *)dst + outl, &finl) < 0) {
    EVP_ENCODE_CTX_free(ctx);
    return fail(p, UH_EPARSE, field, "not valid base64");
  }
  EVP_ENCODE_CTX_free(ctx);
  dst[outl + finl] = '\0';
  b->data = dst;
  b->len = (size_t)(outl + finl);
  return b->len ? UH_OK : fail(p, UH_EINVAL, field, "empty");
}

static uh_err put_text(kc_parse *p, const char *field, const char *s,
                       size_t n, uh_kc_blob *b)
{
  char *dst = uh_arena_take(&p->kc->arena, n);
  if (!dst)
    return fail(p, UH_ELIMIT, field, "too large");
  memcpy(dst, s, n);
  b->data = dst;
  b->len = n;
  return UH_OK;
}

/* A credential file named by `field`, relative to the kubeconfig's
 * folder; `trim` strips surrounding whitespace (token files). */
static uh_err put_file(kc_parse *p, const char *field, const char *name,
                       uh_kc_blob *b, int trim)
{
  char path[PATH_MAX], msg[PATH_MAX + 64], *buf = NULL, *s;
  size_t len = 0;
  int errnum;
  uh_err e;
  int w = name[0] == '/' ? snprintf(path, sizeof path, "%s", name)
          : snprintf(path, sizeof path, "%s/%s", p->dir, name);
  if (w < 0 || (size_t)w >= sizeof path)
    return fail(p, UH_ELIMIT, field, "the path is too long");
  if ((e = uh_secret_read(path, KC_FILE_MAX, &buf, &len, &errnum)) != UH_OK) {
    snprintf(msg, sizeof msg, "cannot read %s: %s", path,
             errnum ? strerror(errnum) : uh_strerror(e));
    return fail(p, e, field, msg);
  }
  s = buf;
  if (trim) {
    while (len && (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r'))
      s++, len--;
    while (len && strchr(" \t\r\n", s[len - 1]))
      len--;
  }
  e = len ? put_text(p, field, s, len, b)
          : fail(p, UH_EINVAL, field, "the file is empty");
  uh_secret_drop(buf, len + (size_t)(s - buf));
  return e;
}

/* `field-data` (base64) or `field` (a file) into b; absent is fine. */
static uh_err put_pem(kc_parse *p, yaml_node_t *m, const char *field,
                      uh_kc_blob *b)
{
  char data[64];
  const char *v;
  snprintf(data, sizeof data, "%s-data", field);
  if ((v = scalar(map_get(p->doc, m, data))) && *v)
    return put_base64(p, data, v, b);
  if ((v = scalar(map_get(p->doc, m, field))) && *v)
    return put_file(p, field, v, b, 0);
  return UH_OK;
}

/* ---- the current context ---- */

static uh_err load_cluster(kc_parse *p, const char *name)
{
  yaml_node_t *c = named(p, "clusters", name, "cluster");
  const char *server, *insecure;
  size_t n;
  snprintf(p->where, sizeof p->where, "clusters[%s]", name);
  if (!c)
    return fail(p, UH_EINVAL, NULL, "no such cluster");
  server = scalar(map_get(p->doc, c, "server"));
  if (!server || strncmp(server, "https://", 8) != 0)
    return fail(p, UH_EINVAL, "server", server ? "not an https:// URL"
                                               : "missing");
  n = strlen(server);
  while (n > 8 && server[n - 1] == '/')
    n--;
  if (n >= sizeof p->kc->server)
    return fail(p, UH_ELIMIT, "server", "too long");
  memcpy(p->kc->server, server, n);
  p->kc->server[n] = '\0';
  insecure = scalar(map_get(p->doc, c, "insecure-skip-tls-verify"));
  p->kc->insecure = insecure && strcmp(insecure, "true") == 0;
  return put_pem(p, c, "certificate-authority", &p->kc->ca);
}

static uh_err load_user(kc_parse *p, const char *name)
{
  yaml_node_t *u = named(p, "users", name, "user");
  uh_kubeconfig *kc = p->kc;
  const char *v;
  uh_err e;
  snprintf(p->where, sizeof p->where, "users[%s]", name);
  if (!u)
    return fail(p, UH_EINVAL, NULL, "no such user");
  if ((e = put_pem(p, u, "client-certificate", &kc->cert)) != UH_OK ||
      (e = put_pem(p, u, "client-key", &kc->key)) != UH_OK)
    return e;
  if (!kc->cert.len != !kc->key.len)
    return fail(p, UH_EINVAL, kc->cert.len ? "client-key" :
                "client-certificate", "missing (a client certificate "
                "needs both a certificate and a key)");
  if ((v = scalar(map_get(p->doc, u, "token"))) && *v)
    e = put_text(p, "token", v, strlen(v), &kc->token);
  else if ((v = scalar(map_get(p->doc, u, "tokenFile"))) && *v)
    e = put_file(p, "tokenFile", v, &kc->token, 1);
  if (e != UH_OK)
    return e;
  if ((v = scalar(map_get(p->doc, u, "username"))) && *v) {
    if ((e = put_text(p, "username", v, strlen(v), &kc->username)))
      return e;
    v = scalar(map_get(p->doc, u, "password"));
    if ((e = put_text(p, "password", v ? v : "", v ? strlen(v) : 0,
                      &kc->password)))
      return e;
  }
  if (!kc->cert.len && !kc->token.len && !kc->username.len &&
      (map_get(p->doc, u, "exec") || map_get(p->doc, u, "auth-provider")))
    return fail(p, UH_EINVAL, map_get(p->doc, u, "exec") ? "exec" :
                "auth-provider", "credential plugins are not supported");
  return UH_OK;
}

static uh_err load_context(kc_parse *p)
{
  yaml_node_t *root = yaml_document_get_root_node(p->doc), *ctx;
  const char *cur = scalar(map_get(p->doc, root, "current-context"));
  const char *cluster, *user, *ns;
  uh_err e;
  if (!root || root->type != YAML_MAPPING_NODE)
    return fail(p, UH_EPARSE, NULL, "not a kubeconfig (no mapping)");
  if (!cur || !*cur)
    return fail(p, UH_EINVAL, "current-context", "not set");
  snprintf(p->kc->context, sizeof p->kc->context, "%s", cur);
  snprintf(p->where, sizeof p->where, "contexts[%s]", cur);
  if (!(ctx = named(p, "contexts", cur, "context")))
    return fail(p, UH_EINVAL, NULL, "no such context (current-context)");
  cluster = scalar(map_get(p->doc, ctx, "cluster"));
  user = scalar(map_get(p->doc, ctx, "user"));
  ns = scalar(map_get(p->doc, ctx, "namespace"));
  if (!cluster || !*cluster)
    return fail(p, UH_EINVAL, "cluster", "missing");
  snprintf(p->kc->nsdefault, sizeof p->kc->nsdefault, "%s", ns ? ns : "");
  if ((e = load_cluster(p, cluster)) != UH_OK)
    return e;
  if (!user || !*user)
    return UH_OK;               /* anonymous */
  return load_user(p, user);
}

/* ---- parse ---- */

/* Zero what libyaml copied of the file: every scalar and its buffers. */
static void wipe_yaml(yaml_parser_t *ps, yaml_document_t *doc)
{
  for (yaml_node_t *n = doc->nodes.start; n && n < doc->nodes.top; n++)
    if (n->type == YAML_SCALAR_NODE && n->data.scalar.value)
      explicit_bzero(n->data.scalar.value, n->data.scalar.length);
  if (ps->buffer.start)
    explicit_bzero(ps->buffer.start,
                   (size_t)(ps->buffer.end - ps->buffer.start));
}

static void dir_of(const char *path, char *dir, size_t n)
{
  const char *slash = strrchr(path, '/');
  if (!slash)
    snprintf(dir, n, ".");
  else if (slash == path)
    snprintf(dir, n, "/");
  else
    snprintf(dir, n, "%.*s", (int)(slash - path), path);
}

static uh_err parse_text(kc_parse *p, const char *text, size_t len)
{
  yaml_parser_t ps;
  yaml_document_t doc;
  uh_err e;
  if (!yaml_parser_initialize(&ps))
    return fail(p, UH_ENOMEM, NULL, "out of memory");
  yaml_parser_set_input_string(&ps, (const unsigned char *)text, len);
  if (!yaml_parser_load(&ps, &doc)) {
    char why[160];
    snprintf(why, sizeof why, "invalid YAML at line %lu: %s",
             (unsigned long)ps.problem_mark.line + 1,
             ps.problem ? ps.problem : "parse error");
    wipe_yaml(&ps, &(yaml_document_t){0});
    yaml_parser_delete(&ps);
    return fail(p, UH_EPARSE, NULL, why);
  }
  p->doc = &doc;
  e = yaml_document_get_root_node(&doc) ? load_context(p)
      : fail(p, UH_EPARSE, NULL, "the file is empty");
  wipe_yaml(&ps, &doc);
  yaml_document_delete(&doc);
  yaml_parser_delete(&ps);
  return e;
}

uh_err uh_kubeconfig_load(const char *path, uh_kubeconfig *kc, char *err,
                          size_t errlen)
{
  kc_parse p = { .kc = kc, .err = err, .errlen = errlen };
  char *text = NULL;
  size_t len = 0;
  int errnum;
  uh_err e;
  memset(kc, 0, sizeof *kc);
  snprintf(kc->file, sizeof kc->file, "%s", path);
  dir_of(path, p.dir, sizeof p.dir);
  if ((e = uh_secret_read(path, KC_FILE_MAX, &text, &len, &errnum)) != UH_OK) {
    snprintf(err, errlen, "kubeconfig %s: cannot read it: %s", path,
             errnum ? strerror(errnum) : uh_strerror(e));
    return e;
  }
  if ((e = uh_arena_open(&kc->arena, KC_ARENA)) != UH_OK) {
    snprintf(err, errlen, "kubeconfig %s: out of memory", path);
  } else {
    e = parse_text(&p, text, len);
  }
  uh_secret_drop(text, len);
  if (e != UH_OK)
    uh_kubeconfig_free(kc);
  return e;
}

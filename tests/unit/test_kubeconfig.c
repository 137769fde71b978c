/* host/kubeconfig.c: lookup order, fields of the current context,
 * relative paths, base64, errors that name file and field but never a
 * value, and credentials that a forked child cannot read. */
#include "unit.h"
#include "kubeconfig.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[64];

static void put(const char *name, const char *text)
{
  char path[256];
  FILE *f;
  snprintf(path, sizeof path, "%s/%s", dir, name);
  f = fopen(path, "w");
  if (f) {
    fputs(text, f);
    fclose(f);
  }
}

static const char *at(const char *name)
{
  static char path[4][256];
  static int n;
  n = (n + 1) % 4;
  snprintf(path[n], sizeof path[n], "%s/%s", dir, name);
  return path[n];
}

#define HEAD "apiVersion: v1\nkind: Config\ncurrent-context: b\n" \
  "contexts:\n- name: a\n  context: {cluster: other, user: nobody}\n" \
  "- name: b\n  context: {cluster: c, user: u, namespace: team}\n" \
  "clusters:\n- name: other\n  cluster: {server: 'https://wrong:1'}\n" \
  "- name: c\n  cluster:\n    server: https://10.0.0.1:16443/\n"

/* "-----BEGIN CERTIFICATE-----\nCA\n" */
#define CA64 "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCkNBCg=="

static uh_err load(const char *name, uh_kubeconfig *kc, char *err)
{
  return uh_kubeconfig_load(at(name), kc, err, 512);
}

static void test_cert_data(void)
{
  uh_kubeconfig kc;
  char err[512] = "";
  put("data", HEAD "    certificate-authority-data: " CA64 "\n"
      "users:\n- name: u\n  user:\n"
      "    client-certificate-data: Q0VSVA==\n"
      "    client-key-data: \"S0VZ\\nS0VZ\"\n");
  CHECK(load("data", &kc, err) == UH_OK);
  CHECK_STR(kc.server, "https://10.0.0.1:16443");
  CHECK_STR(kc.nsdefault, "team");
  CHECK_STR(kc.ca.data, "-----BEGIN CERTIFICATE-----\nCA\n");
  CHECK_STR(kc.cert.data, "CERT");
  CHECK(kc.key.len == 6 && memcmp(kc.key.data, "KEYKEY", 6) == 0);
  CHECK(!kc.insecure && kc.token.len == 0 && kc.username.len == 0);
  uh_kubeconfig_free(&kc);
  uh_kubeconfig_free(&kc);          /* twice is fine */
}

static void test_files_relative(void)
{
  uh_kubeconfig kc;
  char err[512] = "";
  mkdir(at("sub"), 0700);
  put("sub/ca.pem", "CAFILE\n");
  put("sub/c.pem", "CERTFILE\n");
  put("sub/k.pem", "KEYFILE\n");
  put("sub/tok", "\n  file-token \n");
  put("sub/kc", HEAD "    certificate-authority: ca.pem\n"
      "users:\n- name: u\n  user:\n    client-certificate: c.pem\n"
      "    client-key: k.pem\n    tokenFile: tok\n");
  CHECK(load("sub/kc", &kc, err) == UH_OK);
  CHECK_STR(kc.ca.data, "CAFILE\n");
  CHECK_STR(kc.cert.data, "CERTFILE\n");
  CHECK_STR(kc.key.data, "KEYFILE\n");
  CHECK_STR(kc.token.data, "file-token");
  uh_kubeconfig_free(&kc);
}

static void test_token_basic_insecure(void)
{
  uh_kubeconfig kc;
  char err[512] = "";
  put("tok", HEAD "    insecure-skip-tls-verify: true\n"
      "users:\n- name: u\n  user: {token: abc.def}\n");
  CHECK(load("tok", &kc, err) == UH_OK);
  CHECK(kc.insecure == 1);
  CHECK_STR(kc.token.data, "abc.def");
  uh_kubeconfig_free(&kc);
  put("basic", HEAD "users:\n- name: u\n  user: {username: al, "
      "password: 'p w'}\n");
  CHECK(load("basic", &kc, err) == UH_OK);
  CHECK_STR(kc.username.data, "al");
  CHECK_STR(kc.password.data, "p w");
  uh_kubeconfig_free(&kc);
}

static void test_errors(void)
{
  uh_kubeconfig kc;
  char err[512] = "";
  CHECK(load("absent", &kc, err) == UH_ENOENT);
  CHECK(strstr(err, "absent") && strstr(err, "No such file"));
  put("bad", "clusters: [\n - {a: b\n");
  CHECK(load("bad", &kc, err) == UH_EPARSE);
  CHECK(strstr(err, "/bad: invalid YAML at line") != NULL);
  put("b64", HEAD "users:\n- name: u\n  user:\n"
      "    client-certificate-data: TOPSECRET*&^\n"
      "    client-key-data: Q0VSVA==\n");
  CHECK(load("b64", &kc, err) == UH_EPARSE);
  CHECK(strstr(err, "users[u].client-certificate-data: not valid base64"));
  CHECK(strstr(err, "TOPSECRET") == NULL);
  put("nofile", HEAD "users:\n- name: u\n  user: {tokenFile: gone}\n");
  CHECK(load("nofile", &kc, err) == UH_ENOENT);
  CHECK(strstr(err, "users[u].tokenFile: cannot read ") != NULL);
  put("http", "current-context: x\ncontexts: [{name: x, context: "
      "{cluster: c}}]\nclusters: [{name: c, cluster: {server: "
      "'http://x'}}]\n");
  CHECK(load("http", &kc, err) == UH_EINVAL);
  CHECK(strstr(err, "clusters[c].server: not an https:// URL") != NULL);
  put("noctx", "current-context: zz\ncontexts: []\n");
  CHECK(load("noctx", &kc, err) == UH_EINVAL);
  CHECK(strstr(err, "contexts[zz]: no such context") != NULL);
  put("exec", HEAD "users:\n- name: u\n  user: {exec: {command: x}}\n");
  CHECK(load("exec", &kc, err) == UH_EINVAL);
  CHECK(strstr(err, "users[u].exec: credential plugins") != NULL);
}

static void test_find_order(void)
{
  char out[512], err[512], env[512];
  mkdir(at("snap"), 0700);
  mkdir(at("snap/credentials"), 0700);
  mkdir(at("home"), 0700);
  mkdir(at("home/.kube"), 0700);
  put("home/.kube/config", "x");
  put("envkc", "x");
  CHECK(uh_kubeconfig_find("/given", at("snap"), NULL, at("home"), out,
                           sizeof out, err, sizeof err) == UH_OK);
  CHECK_STR(out, "/given");
  snprintf(env, sizeof env, "/nonexistent:%s:%s", at("envkc"),
           at("home/.kube/config"));
  CHECK(uh_kubeconfig_find(NULL, at("snap"), env, at("home"), out,
                           sizeof out, err, sizeof err) == UH_OK);
  CHECK_STR(out, at("envkc"));
  put("snap/credentials/client.config", "x");
  CHECK(uh_kubeconfig_find(NULL, at("snap"), env, at("home"), out,
                           sizeof out, err, sizeof err) == UH_OK);
  CHECK_STR(out, at("snap/credentials/client.config"));
  CHECK(uh_kubeconfig_find(NULL, NULL, "", at("home"), out, sizeof out,
                           err, sizeof err) == UH_OK);
  CHECK_STR(out, at("home/.kube/config"));
  CHECK(uh_kubeconfig_find(NULL, "/nonexistent", "/nope", "/nonexistent",
                           out, sizeof out, err, sizeof err) == UH_ENOENT);
  CHECK(strstr(err, "no kubeconfig found") != NULL);
}

/* The hook child is forked from the broker: it must see no credential. */
static void test_wiped_on_fork(void)
{
  uh_kubeconfig kc;
  char err[512] = "";
  pid_t pid;
  int st = -1;
  put("fork", HEAD "users:\n- name: u\n  user: {token: forked-secret}\n");
  CHECK(load("fork", &kc, err) == UH_OK);
  CHECK_STR(kc.token.data, "forked-secret");
  pid = fork();
  if (pid == 0)
    _exit(memchr(kc.token.data, 'f', kc.token.len) ? 1 : 0);
  waitpid(pid, &st, 0);
  CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  CHECK_STR(kc.token.data, "forked-secret");   /* the parent keeps it */
  uh_kubeconfig_free(&kc);
}

int main(void)
{
  snprintf(dir, sizeof dir, "/tmp/test_kubeconfig.XXXXXX");
  if (!mkdtemp(dir))
    return 1;
  RUN(test_cert_data);
  RUN(test_files_relative);
  RUN(test_token_basic_insecure);
  RUN(test_errors);
  RUN(test_find_order);
  RUN(test_wiped_on_fork);
  if (fork() == 0) {
    execl("/bin/rm", "rm", "-rf", dir, (char *)NULL);
    _exit(127);
  }
  wait(NULL);
  return UNIT_END();
}

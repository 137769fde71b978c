/* uphook.c.argsfile on real-looking MicroK8s args files. */
#include "argsfile.h"
#include "unit.h"

#include <lualib.h>
#include <lauxlib.h>

static lua_State *newstate(void)
{
  lua_State *L = luaL_newstate();
  luaL_openlibs(L);
  luaL_requiref(L, "uphook.c.argsfile", luaopen_uphook_argsfile, 0);
  lua_setglobal(L, "A");
  return L;
}

/* The stock kubelet args of a MicroK8s 1.29 node, plus odd corners. */
static const char *KUBELET =
  "KUBELET = [[\n"
  "--kubeconfig=${SNAP_DATA}/credentials/kubelet.config\n"
  "--cert-dir=${SNAP_DATA}/certs\n"
  "--client-ca-file=${SNAP_DATA}/certs/ca.crt\n"
  "--anonymous-auth=false\n"
  "--root-dir=${SNAP_COMMON}/var/lib/kubelet\n"
  "--fail-swap-on=false\n"
  "--eviction-hard=\"memory.available<100Mi,nodefs.available<1Gi,imagefs.available<1Gi\"\n"
  "--container-runtime-endpoint=${SNAP_COMMON}/run/containerd.sock\n"
  "--containerd=${SNAP_COMMON}/run/containerd.sock\n"
  "--node-labels=\"microk8s.io/cluster=true,node.kubernetes.io/microk8s-controlplane=microk8s-controlplane\"\n"
  "--authentication-token-webhook=true\n"
  "--read-only-port=0\n"
  "# cluster DNS, set by the dns addon\n"
  "--cluster-domain=cluster.local\n"
  "--cluster-dns=10.152.183.10\n"
  "\n"
  "  --v 2\n"
  "--serialize-image-pulls\n"
  "--pod-infra-container-image='registry.k8s.io/pause:3.7'\n"
  "--feature-gates=\"A=true B=false\"   \n"
  "]]\n";

static void t_parse(void)
{
  lua_State *L = newstate();
  CHECK(LUA_RUN(L, KUBELET));
  CHECK(LUA_RUN(L,
    "local t = A.parse(KUBELET)\n"
    "assert(t['--kubeconfig'] == '${SNAP_DATA}/credentials/kubelet.config')\n"
    "assert(t['--anonymous-auth'] == 'false')\n"
    "assert(t['--eviction-hard'] == 'memory.available<100Mi,nodefs.available<1Gi,imagefs.available<1Gi')\n"
    "assert(t['--node-labels']:find('^microk8s.io/cluster=true,'))\n"
    "assert(t['--cluster-dns'] == '10.152.183.10')\n"
    "assert(t['--v'] == '2')\n"
    "assert(t['--serialize-image-pulls'] == true)\n"
    "assert(t['--pod-infra-container-image'] == 'registry.k8s.io/pause:3.7')\n"
    "assert(t['--feature-gates'] == 'A=true B=false')\n"
    "local n = 0; for k in pairs(t) do n = n + 1; assert(k:sub(1, 2) == '--') end\n"
    "assert(n == 18, n)\n"
    "t = A.parse('--a=1\\r\\n# --b=2\\r\\n--c\\r\\n--d=\\n--a=3')\n"   /* CRLF, last wins, no final newline */
    "assert(t['--a'] == '3' and t['--b'] == nil and t['--c'] == true and t['--d'] == '')\n"
    "assert(next(A.parse('')) == nil and next(A.parse('\\n\\n# x\\n')) == nil)\n"
    "assert(not pcall(A.parse, {}))\n"));
  lua_close(L);
}

static void t_edit(void)
{
  lua_State *L = newstate();
  CHECK(LUA_RUN(L, KUBELET));
  CHECK(LUA_RUN(L,
    "local function lines(s) local t = {} for l in (s .. (s:sub(-1) == '\\n' and '' or '\\n')):gmatch('(.-)\\n') do t[#t + 1] = l end return t end\n"
    /* no change: same bytes, changed = false */
    "local out, ch = A.edit(KUBELET, {})\n"
    "assert(out == KUBELET and ch == false)\n"
    "out, ch = A.edit(KUBELET, {['--cluster-dns'] = '10.152.183.10',\n"
    "  ['--serialize-image-pulls'] = true, ['--absent'] = false,\n"
    "  ['--feature-gates'] = 'A=true B=false'})\n"
    "assert(out == KUBELET and ch == false)\n"
    /* set in place, keep separator and quote style */
    "out, ch = A.edit(KUBELET, {['--cluster-dns'] = '10.152.183.20', ['--v'] = '4',\n"
    "  ['--eviction-hard'] = 'memory.available<200Mi',\n"
    "  ['--pod-infra-container-image'] = 'registry.k8s.io/pause:3.9',\n"
    "  ['--feature-gates'] = 'C=true'})\n"
    "assert(ch == true)\n"
    "local a, b = lines(KUBELET), lines(out)\n"
    "assert(#a == #b)\n"
    "assert(b[15] == '--cluster-dns=10.152.183.20', b[15])\n"
    "assert(b[17] == '  --v 4', b[17])\n"
    "assert(b[7] == '--eviction-hard=\"memory.available<200Mi\"', b[7])\n"
    "assert(b[19] == \"--pod-infra-container-image='registry.k8s.io/pause:3.9'\", b[19])\n"
    "assert(b[20] == '--feature-gates=\"C=true\"   ', b[20])\n"
    "for i, l in ipairs(a) do if i ~= 7 and i ~= 15 and i ~= 17 and i ~= 19 and i ~= 20 then\n"
    "  assert(l == b[i], i) end end\n"
    /* remove, bare, append (sorted, '=' style), comments kept */
    "out, ch = A.edit(KUBELET, {['--read-only-port'] = false, ['--v'] = true,\n"
    "  ['--zeta'] = 'z', ['--alpha'] = true, ['--node-ip'] = '10.0.0.5',\n"
    "  ['--cluster-domain'] = false})\n"
    "b = lines(out)\n"
    "assert(#b == #a - 2 + 3 and ch)\n"
    "assert(not out:find('read%-only%-port') and not out:find('cluster%-domain'))\n"
    "assert(out:find('\\n  --v\\n', 1, true))\n"
    "assert(out:find('# cluster DNS, set by the dns addon\\n--cluster-dns', 1, true))\n"
    "assert(out:sub(-#'--alpha\\n--node-ip=10.0.0.5\\n--zeta=z\\n' - 1) ==\n"
    "       '\\n--alpha\\n--node-ip=10.0.0.5\\n--zeta=z\\n', out)\n"
    "assert(A.parse(out)['--v'] == true and A.parse(out)['--node-ip'] == '10.0.0.5')\n"
    /* removing twice and setting back round-trips through parse */
    "local out2 = A.edit(out, {['--zeta'] = false, ['--alpha'] = false, ['--node-ip'] = false})\n"
    "assert(select(2, A.edit(out2, {['--zeta'] = false})) == false)\n"));
  lua_close(L);
}

static void t_edit_corners(void)
{
  lua_State *L = newstate();
  CHECK(LUA_RUN(L,
    /* no trailing newline: edited in place, appended after a newline */
    "local out = A.edit('--a=1\\n--b=2', {['--b'] = '3'})\n"
    "assert(out == '--a=1\\n--b=3', out)\n"
    "out = A.edit('--a=1\\n--b=2', {['--c'] = 'x'})\n"
    "assert(out == '--a=1\\n--b=2\\n--c=x\\n', out)\n"
    "out = A.edit('--a=1\\n--b=2', {['--b'] = false, ['--c'] = true})\n"
    "assert(out == '--a=1\\n--c\\n', out)\n"
    "out = A.edit('', {['--c'] = 'x'}); assert(out == '--c=x\\n', out)\n"
    /* CRLF lines keep their \\r; duplicates are all updated */
    "out = A.edit('--a=1\\r\\n--a 2\\r\\n', {['--a'] = '5'})\n"
    "assert(out == '--a=5\\r\\n--a 5\\r\\n', out)\n"
    "out = A.edit('--a=1\\n# --a=1\\n--a\\n', {['--a'] = false})\n"
    "assert(out == '# --a=1\\n', out)\n"
    /* bare to value uses '=', value to bare drops it */
    "assert(A.edit('--x\\n', {['--x'] = 'v'}) == '--x=v\\n')\n"
    "assert(A.edit('--x v  \\n', {['--x'] = true}) == '--x  \\n')\n"
    /* quoting: spaces and shell syntax are quoted, $VARs kept */
    "out = A.edit('', {['--a'] = 'x y', ['--b'] = '$(rm -rf /)', ['--c'] = '${SNAP_DATA}/x',\n"
    "  ['--d'] = 'a\"b`c\\\\', ['--e'] = '', ['--f'] = '$HOME/x $1'})\n"
    "local t = A.parse(out)\n"
    "assert(t['--a'] == 'x y' and t['--b'] == '$(rm -rf /)' and t['--d'] == 'a\"b`c\\\\' and t['--e'] == '')\n"
    "assert(out:find('--b=\"\\\\$(rm -rf /)\"\\n', 1, true), out)\n"
    "assert(out:find('--c=${SNAP_DATA}/x\\n', 1, true), out)\n"
    "assert(out:find('--f=\"$HOME/x \\\\$1\"\\n', 1, true), out)\n"
    /* misuse raises */
    "for _, c in ipairs{{[1] = 'x'}, {['nodash'] = 'x'}, {['--a b'] = 'x'},\n"
    "    {['--a=b'] = 'x'}, {['--a'] = 'x\\ny'}, {['--a'] = 'x\\0'}, {['--a'] = 1},\n"
    "    {['--a'] = {}}, {['-'] = true}} do\n"
    "  assert(not pcall(A.edit, '--a=1\\n', c)) end\n"
    "assert(not pcall(A.edit, '', 'x'))\n"));
  lua_close(L);
}

static void t_scan_c(void)
{
  uh_argline a;
  char out[32];
  const char *l = "  --flag \"a b\"\t\r";
  CHECK(uh_args_scan(l, strlen(l), &a) == 1);
  CHECK(a.flag == 2 && a.flag_len == 6 && a.sep_len == 1);
  CHECK(a.val == 9 && a.val_len == 5 && a.tail == 14);
  CHECK(uh_args_unquote(l + a.val, a.val_len, out) == 3 && !memcmp(out, "a b", 3));
  CHECK(uh_args_scan("# --x", 5, &a) == 0);
  CHECK(uh_args_scan("", 0, &a) == 0);
  CHECK(uh_args_scan("--x", 3, &a) == 1 && a.sep_len == 0 && a.val_len == 0);
  CHECK(uh_args_unquote("'a\\b'\"c\\$\"\\ d", 13, out) == 7 &&
        !memcmp(out, "a\\bc$ d", 7));
}

int main(void)
{
  RUN(t_parse);
  RUN(t_edit);
  RUN(t_edit_corners);
  RUN(t_scan_c);
  return UNIT_END();
}

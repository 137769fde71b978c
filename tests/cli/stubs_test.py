"""The LuaLS stubs (docs/meta/) against the names uphook really registers.

Sources of truth, each read from the code:
  * host/prims.def: the broker-backed primitives (host/child.c's stubs),
    the registry-only primitives (pushed as literals), the allow lists
    (base_kept, string_kept, ...) and what build_env adds;
  * host/luax.c, host/yaml.c, host/json.c: the pure yaml/json functions;
  * lua/engine/prims/*.lua: the broker handlers H.<family>_<name>;
  * lua/cmd/test.lua, lua/cmd/testlib.lua and lua/cmd/testenv.lua: the
    uphook.test API (t.*; Env:* in testenv.lua);
  * the binary itself: a probe hook lists every global it can see.
Any name present on one side only is a failure. The negative checks run
the same comparison on doctored copies and require it to fail.

Also checks that docs/reference.md is what docs/gen.py generates.
"""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
FILES = {
    "child": "host/child.c",
    "primsdef": "host/prims.def",
    "luax": "host/luax.c",
    "yaml": "host/yaml.c",
    "json": "host/json.c",
    # the handlers: lua/engine/prims/<family>.lua, kube.lua first (the
    # one the negative checks edit), the other families beside it
    "prims": "lua/engine/prims/kube.lua",
    "runner": "lua/cmd/test.lua",
    "test": "lua/cmd/testenv.lua",
    "testlib": "lua/cmd/testlib.lua",
    "stub": "docs/meta/uphook.lua",
    "stub_test": "docs/meta/uphook/test.lua",
}
# Broker handlers the hook cannot name: reached through the registry.
# Exported harness functions that are the runner's, not a test's.
TEST_INTERNAL = {"run", "main", "take_cases"}

passed = failed = 0


def ok(name):
    global passed
    passed += 1
    print("ok   " + name)


def not_ok(name, lines):
    global failed
    failed += 1
    print("FAIL " + name)
    for line in lines[:30]:
        print("    | " + line)


def read(paths, key):
    with open(paths[key], encoding="utf-8") as f:
        return f.read()


def c_string_array(text, name):
    m = re.search(r"\b" + re.escape(name) + r"\[\]\s*=\s*\{(.*?)\};", text,
                  re.S)
    if not m:
        raise SystemExit("no array %s" % name)
    return set(re.findall(r'"([^"]+)"', m.group(1)))


def c_function_body(text, name):
    m = re.search(r"\n(?:static )?\w[\w\s\*]*\b" + re.escape(name)
                  + r"\([^)]*\)\n\{(.*?)\n\}", text, re.S)
    if not m:
        raise SystemExit("no function %s" % name)
    return m.group(1)


def luaL_reg(text, name):
    m = re.search(re.escape(name) + r"\[\]\s*=\s*\{(.*?)\};", text, re.S)
    return set(re.findall(r'\{\s*"(\w+)"', m.group(1)))


def registered(paths):
    """What the sandbox gives a hook: {'rpc', 'registry', 'pure',
    'allow'} where allow maps a library ('basic' for globals) to names."""
    sb = read(paths, "child")
    # the primitives' one list, which child.c makes its stubs from
    rpc = set(re.findall(r'^UH_PRIM\("([\w.]+)", [01]\)', read(paths, "primsdef"),
                         re.M))
    build = c_function_body(sb, "build_env")
    registry = set(re.findall(r'lua_pushliteral\(L, "(\w+\.\w+)"\)', build))
    # yaml and json: their luaL_Reg plus what uh_setnullarray adds
    nullarray = set(re.findall(r'lua_setfield\(L, -2, "(\w+)"\)',
                               c_function_body(read(paths, "luax"),
                                               "uh_setnullarray")))
    pure = set()
    for fam, reg in (("yaml", "yaml_funcs"), ("json", "json_funcs")):
        for n in luaL_reg(read(paths, fam), reg) | nullarray:
            pure.add(fam + "." + n)
    opb = c_function_body(sb, "open_pure_libs")
    for n in re.findall(r'lua_getfield\(L, -2, "(\w+)"\);\s*'
                        r'lua_setfield\(L, -2, "\1"\);', opb):
        pure.add("hash." + n)
    allow = {"basic": c_string_array(sb, "base_kept")}
    for n in re.findall(r'lua_setfield\(L, env, "(\w+)"\)', build):
        allow["basic"].add(n)
    for lib, arr in re.findall(r'\{ "(\w+)", luaopen_\w+, (\w+) \}', sb):
        allow[lib] = c_string_array(sb, arr)
    return {"rpc": rpc, "registry": registry, "pure": pure, "allow": allow}


def handlers(paths):
    text = read(paths, "prims")
    for f in sorted(glob.glob(os.path.join(ROOT, "lua", "engine", "prims",
                                           "*.lua"))):
        if os.path.basename(f) != os.path.basename(FILES["prims"]):
            with open(f, encoding="utf-8") as fh:
                text += fh.read()
    out = set()
    for h in re.findall(r"^function H\.(\w+)\(", text, re.M):
        m = re.match(r"^(__[a-z]+|[a-z]+)_(\w+)$", h)
        out.add(m.group(1) + "." + m.group(2) if m else h)
    for levels, fam in re.findall(
            r'for _, \w+ in ipairs \{([^}]*)\} do\s*\n\s*H\["(\w+)_" \.\.',
            text):
        for lv in re.findall(r'"(\w+)"', levels):
            out.add(fam + "." + lv)
    return out


def stubs(paths):
    text = read(paths, "stub")
    funcs = set(re.findall(r"^function (\w+\.\w+)\(", text, re.M))
    fields = set(re.findall(r"^(\w+\.\w+) = ", text, re.M))
    allow = {}
    for lib, names in re.findall(r"^-- allow (\w+): (.*)$", text, re.M):
        allow[lib] = set(names.split())
    return funcs | fields, allow


def test_api(paths):
    impl = read(paths, "runner") + "\n" + read(paths, "testlib")
    have = set(re.findall(r"^function M\.(\w+)\(", impl, re.M))
    have |= set(re.findall(r"^M\.(\w+) = ", impl, re.M))
    have -= TEST_INTERNAL
    env = set(re.findall(r"^function Env:(\w+)\(", read(paths, "test"),
                         re.M))
    stub = read(paths, "stub_test")
    return (have, set(re.findall(r"^function t\.(\w+)\(", stub, re.M)),
            env, set(re.findall(r"^function Env:(\w+)\(", stub, re.M)))


def diff(what, a_name, a, b_name, b):
    out = []
    for n in sorted(a - b):
        out.append("%s: %s is in %s but not in %s" % (what, n, a_name,
                                                      b_name))
    for n in sorted(b - a):
        out.append("%s: %s is in %s but not in %s" % (what, n, b_name,
                                                      a_name))
    return out


def compare(paths):
    """Every drift between the sources: a list of messages."""
    reg, hs = registered(paths), handlers(paths)
    stub_names, stub_allow = stubs(paths)
    problems = []
    problems += diff("broker", "uh_child_rpc_prims + registry",
                     reg["rpc"] | reg["registry"], "lua/engine/prims/*.lua H", hs)
    problems += diff("stubs", "the sandbox (rpc + pure)",
                     reg["rpc"] | reg["pure"], "docs/meta/uphook.lua",
                     stub_names)
    for lib in sorted(set(reg["allow"]) | set(stub_allow)):
        problems += diff("allow " + lib, "host/child.c",
                         reg["allow"].get(lib, set()), "the stub's allow "
                         "line", stub_allow.get(lib, set()))
    have, t_stub, env, env_stub = test_api(paths)
    problems += diff("uphook.test", "lua/cmd/test.lua", have,
                     "docs/meta/uphook/test.lua", t_stub)
    problems += diff("uphook.test Env", "lua/cmd/test.lua", env,
                     "docs/meta/uphook/test.lua", env_stub)
    return problems


def expected_globals(paths):
    names, allow = stubs(paths)
    out = set(names)
    for lib, ns in allow.items():
        for n in ns:
            out.add(n if lib == "basic" else lib + "." + n)
    return out


PROBE = r'''
local out = {}
for k, v in pairs(_G) do
  if type(v) == "table" and k ~= "_G" then
    for f in pairs(v) do out[#out + 1] = k .. "." .. tostring(f) end
    out[#out + 1] = k
  else out[#out + 1] = k end
end
table.sort(out)
return { version = "2.0.0", from = ">=1.0.0 <2.0.0", permissions = {},
  detect = function()
    log.info("GLOBALS %s", table.concat(out, " "))
    return "1.0.0"
  end,
  upgrade = function() end }
'''


def runtime_globals(uphook, tmp):
    repo = os.path.join(tmp, "repo")
    os.makedirs(os.path.join(repo, "addons", "probe"))
    with open(os.path.join(repo, "addons.yaml"), "w") as f:
        f.write("microk8s-addons:\n  addons:\n    - name: probe\n"
                "      version: 1.0.0\n"
                "      check_status: deployment.apps/probe\n")
    with open(os.path.join(repo, "addons", "probe", "upgrade.lua"), "w") as f:
        f.write(PROBE)
    cluster = os.path.join(tmp, "cluster.yaml")
    with open(cluster, "w") as f:
        f.write("apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n---\n"
                "apiVersion: apps/v1\nkind: Deployment\n"
                "metadata: {name: probe, namespace: default}\n")
    p = subprocess.run([uphook, "--addons", repo, "--offline", cluster,
                        "--state-dir", os.path.join(tmp, "state"),
                        "--output", "json", "plan", "probe"],
                       capture_output=True, text=True, timeout=60)
    m = re.search(r"GLOBALS ([^\"]*)", p.stdout)
    if not m:
        return None, p.stdout + p.stderr
    names = set(m.group(1).split())
    # a library table is listed by its fields; the bare name is implied
    tables = {n.split(".")[0] for n in names if "." in n}
    return {n for n in names if n not in tables}, None


def doctor(paths, tmp, key, fn):
    """A copy of the sources with one file edited by fn(text)."""
    out = dict(paths)
    dst = os.path.join(tmp, key + "_" + os.path.basename(paths[key]))
    with open(paths[key], encoding="utf-8") as f:
        text = f.read()
    new = fn(text)
    assert new != text, "the doctoring of %s changed nothing" % key
    with open(dst, "w", encoding="utf-8") as f:
        f.write(new)
    out[key] = dst
    return out


def main():
    paths = {k: os.path.join(ROOT, v) for k, v in FILES.items()}
    tmp = tempfile.mkdtemp(prefix="uphook-stubs.")
    try:
        problems = compare(paths)
        if problems:
            not_ok("stubs agree with child.c, prims.lua and test.lua",
                   problems)
        else:
            ok("stubs agree with child.c, prims.lua and test.lua")

        uphook = os.environ.get("UPHOOK") or os.path.join(ROOT, "build",
                                                          "uphook")
        if os.access(uphook, os.X_OK):
            got, err = runtime_globals(uphook, tmp)
            if got is None:
                not_ok("probe hook lists its globals", err.splitlines())
            else:
                want = expected_globals(paths)
                d = diff("runtime", "the running sandbox", got, "the stubs",
                         want)
                if d:
                    not_ok("every global a hook sees is in the stubs, and "
                           "nothing more", d)
                else:
                    ok("every global a hook sees is in the stubs, and "
                       "nothing more (%d names)" % len(got))
        else:
            not_ok("probe hook lists its globals", ["no binary " + uphook])

        # Negative checks: one name added or removed on one side only.
        cases = [
            ("a primitive added to host/prims.def only", "primsdef",
             lambda s: s.replace('UH_PRIM("kube.wait", 0)',
                                 'UH_PRIM("kube.wait", 0)\n'
                                 'UH_PRIM("kube.patch", 1)', 1), "kube.patch"),
            ("a handler added to lua/engine/prims/kube.lua only", "prims",
             lambda s: s.replace("function H.kube_get(",
                                 "function H.kube_patch(run) end\n\n"
                                 "function H.kube_get(", 1), "kube.patch"),
            ("a stub function removed", "stub",
             lambda s: s.replace("function kube.get(kind, name, namespace)"
                                 " end", "", 1), "kube.get"),
            ("a stub function added", "stub",
             lambda s: s + "\nfunction net.upload(url) end\n", "net.upload"),
            ("a library function allowed in the sandbox only", "child",
             lambda s: s.replace('"byte", "char",', '"byte", "char", "dump",',
                                 1), "dump"),
            ("a global allowed in the stub only", "stub",
             lambda s: s.replace("-- allow basic: _G", "-- allow basic: _G "
                                 "print", 1), "print"),
            ("an Env method added to the harness only", "test",
             lambda s: s.replace("function Env:get(",
                                 "function Env:tick() end\nfunction Env:get(",
                                 1), "tick"),
            ("a t.* function removed from the test stub", "stub_test",
             lambda s: s.replace("function t.skip(name, why) end", "", 1),
             "skip"),
        ]
        for name, key, fn, needle in cases:
            found = compare(doctor(paths, tmp, key, fn))
            hits = [p for p in found if needle in p]
            if hits:
                ok("drift is caught: " + name + " (" + hits[0] + ")")
            else:
                not_ok("drift is caught: " + name,
                       ["the comparison found: %r" % found])

        # The runtime comparison catches a global the stubs lack, too.
        doctored = doctor(paths, tmp, "stub",
                          lambda s: s.replace("function log.step(fmt, ...) "
                                              "end", "", 1))
        if os.access(uphook, os.X_OK) and got is not None:
            d = diff("runtime", "the running sandbox", got, "the stubs",
                     expected_globals(doctored))
            if any("log.step" in p for p in d):
                ok("drift is caught: the probe sees log.step, a doctored "
                   "stub lacks it")
            else:
                not_ok("drift is caught by the probe", d or ["no drift"])

        gen = subprocess.run([sys.executable,
                              os.path.join(ROOT, "docs", "gen.py"),
                              "--check"], capture_output=True, text=True,
                             cwd=ROOT)
        if gen.returncode == 0:
            ok("docs/reference.md is generated from the annotations "
               "(make docs)")
        else:
            not_ok("docs/reference.md is up to date: run make docs",
                   (gen.stdout + gen.stderr).splitlines())
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())

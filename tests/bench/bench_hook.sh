#!/bin/sh
# Big YAML through a hook, whole process against whole process: `uphook
# plan` of a hook that addon.reads 11.6 MB of YAML (tests/data/corpus/
# large, its 20 files as one multi-document file made here) and logs its
# length, of one that logs #yaml.decode_all of it, and of an empty hook;
# against a process that reads the file and runs libyaml's bare event
# parse (bench_yaml parse). With make helm's Helm, also a hook that
# logs #helm.render of kube-prometheus-stack 88.5.3 (hooks/observability/
# charts) against `helm template --include-crds` of it. Medians of $RUNS
# interleaved runs. The render's goal, 3.0x: helm.render renders twice,
# the two Helms at once, and decodes both outputs to find the values the
# chart generates (docs/guide.md "Helm addons"); then the objects go to
# the hook.
set -eu
BUILD=${BUILD:-build}
RUNS=${RUNS:-7}
UPHOOK=${UPHOOK:-$(pwd)/build/uphook}
PKGS="lua5.4 yaml-0.1 jansson msgpack libcurl libcrypto libseccomp"
BIN=$BUILD/bench/bench_yaml
T=$(mktemp -d /tmp/uphook-bench.XXXXXX)
trap 'rm -rf "$T"' EXIT

make -s BUILD="$BUILD" "$BUILD/libuphook.a"
mkdir -p "$BUILD/bench"
${CC:-cc} -O2 -std=c11 -D_GNU_SOURCE -Ihost $(pkg-config --cflags $PKGS) \
  -o "$BIN" tests/bench/bench_yaml.c "$BUILD/libuphook.a" \
  $(pkg-config --libs $PKGS)

# the corpus as one stream: each file one or more documents, its own
# leading `---` dropped for the one written before it
mkdir -p "$T/repo/addons"
for f in tests/data/corpus/large/*.yaml; do
  echo "---"
  awk '!body && /^---[ \t]*$/ { next }
       !body && !/^[ \t]*(#|$)/ { body = 1 } { print }' "$f"
done >"$T/crds.yaml"
: >"$T/world.yaml"
{ echo "microk8s-addons:"; echo "  addons:"; } >"$T/repo/addons.yaml"
hook() {   # NAME BODY: an addon whose check phase runs BODY
  mkdir "$T/repo/addons/$1"
  ln "$T/crds.yaml" "$T/repo/addons/$1/crds.yaml"
  printf '    - name: %s\n      description: %s\n      version: "1.0.1"\n' \
    "$1" "$1" >>"$T/repo/addons.yaml"
  printf 'return { version = "1.0.1", from = "1.0.0", permissions = {},\n  detect = function() return "1.0.0" end,\n  check = function() %s end,\n  upgrade = function() end }\n' \
    "$2" >"$T/repo/addons/$1/upgrade.lua"
}
hook empty 'log.info("nothing")'
hook read 'log.info("read %d", #addon.read("crds.yaml"))'
hook decode 'log.info("decoded %d", #yaml.decode_all(addon.read("crds.yaml")))'
HELM=$(pwd)/build/helm/v3/helm
CHART=hooks/observability/charts/kube-prometheus-stack-88.5.3.tgz
if [ -x "$HELM" ]; then
  hook render 'log.info("rendered %d", #helm.render { release = "kps",
    namespace = "observability", chart = "charts/kps.tgz" })'
  mkdir "$T/repo/addons/render/charts"
  cp "$CHART" "$T/repo/addons/render/charts/kps.tgz"
fi
plan() {
  rm -rf "$T/state"
  PATH="$(dirname "$HELM"):$PATH" "$UPHOOK" --addons "$T/repo" --offline "$T/world.yaml" \
    --state-dir "$T/state" plan "$1"
}
BYTES=$(wc -c <"$T/crds.yaml")
plan read | grep -q "check: read $BYTES\$" || { echo "(the read hook failed)"; plan read; exit 1; }
DOCS=$(plan decode | sed -n 's/.*check: decoded \([0-9]*\)$/\1/p')
[ -n "$DOCS" ] || { echo "(the decode hook failed)"; plan decode; exit 1; }
"$BIN" parse "$T/crds.yaml" || { echo "(libyaml cannot parse it)"; exit 1; }
if [ -x "$HELM" ]; then
  plan render | grep -q "check: rendered [0-9]" || { echo "(the render hook failed)"; plan render; exit 1; }
fi

# each run: the wall time and the CPU time of the process and the
# children it waited for (the hook child, Helm), in ms
RENDER=""; [ -x "$HELM" ] && RENDER=1
PATH="$(dirname "$HELM"):$PATH" python3 - "$RUNS" "$T" "$UPHOOK" "$BIN" \
    "$HELM" "$CHART" "$RENDER" >"$T/times" <<'PY'
import os, resource, shutil, subprocess, sys, time
runs, T, uphook, bench, helm, chart, render = sys.argv[1:8]
def plan(addon):
    shutil.rmtree(T + "/state", ignore_errors=True)
    return [uphook, "--addons", T + "/repo", "--offline", T + "/world.yaml",
            "--state-dir", T + "/state", "plan", addon]
cmds = [(a, plan(a)) for a in ("empty", "read", "decode")]
cmds.append(("libyaml", [bench, "parse", T + "/crds.yaml"]))
if render:
    cmds.append(("render", plan("render")))
    cmds.append(("helm", [helm, "template", "kps", chart, "-n", "observability",
                          "--include-crds"]))
for _ in range(int(runs)):
    for name, argv in cmds:
        if argv[-2] == "plan":
            argv = plan(argv[-1])
        r0, t0 = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        t1, r1 = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime)
        print(name, "%.2f" % ((t1 - t0) * 1e3), "%.2f" % (cpu * 1e3))
PY
med() { awk -v k="$1" -v c="${2:-2}" '$1 == k { print $c }' "$T/times" | sort -n \
  | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
awk -v e="$(med empty)" -v r="$(med read)" -v d="$(med decode)" \
    -v l="$(med libyaml)" -v ec="$(med empty 3)" -v rc="$(med read 3)" \
    -v dc="$(med decode 3)" -v lc="$(med libyaml 3)" \
    -v mb="$(echo "$BYTES" | awk '{ print $1 / 1e6 }')" \
    -v docs="$DOCS" -v runs="$RUNS" 'BEGIN {
  printf "a hook and %.1f MB of YAML (%d documents), uphook plan, median of %d interleaved runs\n", mb, docs, runs
  printf "  %-44s %9s %9s\n", "", "ms", "CPU ms"
  printf "  %-44s %9.1f %9.1f\n", "plan, an empty hook", e, ec
  printf "  %-44s %9.1f %9.1f  the read: %.1f ms, %.0f MB/s\n", "plan, addon.read, #s", r, rc, r - e, mb / (r - e > 0.1 ? r - e : 0.1) * 1e3
  printf "  %-44s %9.1f %9.1f  %.2fx libyaml (CPU %.2fx)\n", "plan, #yaml.decode_all(addon.read(...))", d, dc, d / l, dc / lc
  printf "  %-44s %9.1f %9.1f\n", "libyaml: read + bare event parse, a process", l, lc
  printf "  goal: the read adds <= 20 ms: %s\n", (r - e <= 20 ? "met" : "MISSED")
  printf "  goal: the decode hook within 2.0x libyaml: %s\n", (d / l <= 2 ? "met" : "MISSED")
}'
if [ -n "$RENDER" ]; then
  awk -v r="$(med render)" -v h="$(med helm)" -v rc="$(med render 3)" \
      -v hc="$(med helm 3)" 'BEGIN {
    printf "  %-44s %9.1f %9.1f  %.2fx helm template\n", "plan, #helm.render(kube-prometheus-stack)", r, rc, r / h
    printf "  %-44s %9.1f %9.1f\n", "helm template --include-crds, a process", h, hc
    printf "  goal: the render hook within 3.0x helm template: %s\n", (r / h <= 3 ? "met" : "MISSED")
  }'
else
  echo "  (no Helm in build/helm/v3: make helm; the render row is left out)"
fi

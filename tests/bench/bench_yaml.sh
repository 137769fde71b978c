#!/bin/sh
# YAML decode speed on tests/data/corpus/large, side by side in one run:
# uphook's yaml decode_all, a bare libyaml event parse of the same bytes
# (yaml_parser_parse loop only), and PyYAML's CSafeLoader. Inputs are
# read into memory first; each figure is the median of $RUNS runs.
set -eu
BUILD=${BUILD:-build}
RUNS=${RUNS:-7}
CORPUS=${CORPUS:-tests/data/corpus/large}
PKGS="lua5.4 yaml-0.1 jansson msgpack libcurl libcrypto libseccomp"
BIN=$BUILD/bench/bench_yaml

make -s BUILD="$BUILD" "$BUILD/libuphook.a"
mkdir -p "$BUILD/bench"
${CC:-cc} -O2 -std=c11 -D_GNU_SOURCE -Ihost $(pkg-config --cflags $PKGS) \
  -o "$BIN" tests/bench/bench_yaml.c "$BUILD/libuphook.a" \
  $(pkg-config --libs $PKGS)

set -- "$CORPUS"/*.yaml
C_OUT=$("$BIN" "$RUNS" "$@")
PY_MS=$(python3 - "$RUNS" "$@" <<'PY'
import sys, time, yaml
runs, files = int(sys.argv[1]), sys.argv[2:]
texts = [open(f, encoding="utf-8").read() for f in files]
times = []
for _ in range(runs):
    t0 = time.perf_counter()
    for t in texts:
        list(yaml.load_all(t, Loader=yaml.CSafeLoader))
    times.append((time.perf_counter() - t0) * 1e3)
print("%.1f" % sorted(times)[runs // 2])
PY
)
echo "$C_OUT" | awk -v py="$PY_MS" -v runs="$RUNS" '
  /^files/   { files = $2; mb = $4 / 1e6; docs = $6 }
  /^uphook/  { up = $2 }
  /^libyaml/ { ly = $2 }
  END {
    printf "yaml decode_all: %d files, %.1f MB, %d documents, median of %d runs\n", files, mb, docs, runs
    printf "  %-34s %9s %8s %12s\n", "", "ms", "MB/s", "vs libyaml"
    printf "  %-34s %9.1f %8.1f %11.2fx\n", "bare libyaml event parse", ly, mb / ly * 1e3, 1
    printf "  %-34s %9.1f %8.1f %11.2fx\n", "uphook yaml.decode_all", up, mb / up * 1e3, up / ly
    printf "  %-34s %9.1f %8.1f %11.2fx\n", "PyYAML load_all CSafeLoader", py, mb / py * 1e3, py / ly
    printf "  goal: decode_all within 2x of libyaml: %s\n", (up / ly <= 2 ? "met" : "MISSED")
  }'

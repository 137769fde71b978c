#!/bin/sh
# make bench: run every tests/bench/bench_*.sh; each prints its own table
# of medians and ratios, measured side by side in this one run.
BUILD=${1:-build}
UPHOOK=$(cd "$(dirname "$BUILD/uphook")" && pwd)/uphook
export UPHOOK BUILD
echo "uphook benchmarks on $(nproc) cores, $(date -u +%Y-%m-%d)"
for b in tests/bench/bench_*.sh; do
  [ -f "$b" ] || continue
  echo "== $b"
  sh "$b" || echo "(benchmark $b failed)"
done

#!/bin/sh
# SHA-256 of a 512 MiB file: uh_sha256_fd vs `openssl dgst -sha256` vs
# `sha256sum`, interleaved runs from a warm page cache, medians and
# ratios.  Goal: uh_sha256_fd within 1.15x of openssl.
set -eu
BUILD=${BUILD:-build}
RUNS=${RUNS:-7}
MIB=${MIB:-512}
PKGS="lua5.4 yaml-0.1 libcurl libcrypto jansson libseccomp msgpack"
[ -f "$BUILD/libuphook.a" ] || make -s "$BUILD/libuphook.a" BUILD="$BUILD"
work=$(mktemp -d "${TMPDIR:-/tmp}/uphook-bench-hash.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM
bin=$work/bench_hash
# shellcheck disable=SC2086  # pkg-config output is a word list
cc -O2 -std=c11 -D_GNU_SOURCE -Ihost -o "$bin" tests/bench/bench_hash.c \
  "$BUILD/libuphook.a" $(pkg-config --cflags --libs $PKGS)
file=$work/data.bin
head -c $((MIB * 1024 * 1024)) /dev/urandom > "$file"
cat "$file" > /dev/null   # warm the page cache: we measure hashing

now() { date +%s.%N; }
# time_one NAME CMD...: run once, append seconds to $work/NAME, keep sum
time_one() {
  name=$1; shift
  t0=$(now)
  "$@" > "$work/$name.out"
  t1=$(now)
  echo "$t1 - $t0" | bc -l >> "$work/$name.t"
}
median() { sort -n "$1" | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

i=0
while [ $i -lt "$RUNS" ]; do
  time_one uphook "$bin" "$file"
  time_one openssl openssl dgst -sha256 "$file"
  time_one sha256sum sha256sum "$file"
  i=$((i + 1))
done

h1=$(cut -c1-64 "$work/uphook.out")
h2=$(sed 's/.*= //' "$work/openssl.out")
h3=$(cut -c1-64 "$work/sha256sum.out")
if [ "$h1" != "$h2" ] || [ "$h1" != "$h3" ]; then
  echo "digests differ: $h1 $h2 $h3"; exit 1
fi
mu=$(median "$work/uphook.t"); mo=$(median "$work/openssl.t")
ms=$(median "$work/sha256sum.t")
printf 'sha256 of %d MiB, median of %d runs (warm cache)\n' "$MIB" "$RUNS"
printf '  %-22s %7.3f s  %7.0f MiB/s  %5.2fx openssl\n' \
  uh_sha256_fd "$mu" "$(echo "$MIB / $mu" | bc -l)" "$(echo "$mu / $mo" | bc -l)" \
  "openssl dgst -sha256" "$mo" "$(echo "$MIB / $mo" | bc -l)" 1 \
  sha256sum "$ms" "$(echo "$MIB / $ms" | bc -l)" "$(echo "$ms / $mo" | bc -l)"
ok=$(echo "$mu <= 1.15 * $mo" | bc -l)
[ "$ok" = 1 ] && echo "  goal (<= 1.15x openssl): met" || echo "  goal (<= 1.15x openssl): MISSED"

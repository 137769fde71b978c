#!/bin/sh
# Download + verify 1 GiB over loopback TLS: uphook's download() against
# `curl -o /dev/null` and `curl -o f && sha256sum f`, side by side,
# median of $RUNS (default 5) interleaved runs.  Two more rows separate
# the costs: `curl -o f && sync f` (the disk write uphook must also do)
# and uphook with its cache on tmpfs (hash + memory write only).
#
# Server: `openssl s_server -WWW` (single-threaded C; Python's http.server
# tops out far below curl).  Its CPU time per transfer is printed too: when
# it is close to the wall time, the server is what limits all three.
set -eu
BUILD=${BUILD:-build}
RUNS=${RUNS:-5}
SIZE_MB=${SIZE_MB:-1024}
PKGS="lua5.4 yaml-0.1 libcurl libcrypto jansson libseccomp msgpack"
T=$(mktemp -d /tmp/uphook-bench-dl.XXXXXX)
SRV=""
cleanup() { [ -n "$SRV" ] && kill "$SRV" 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT INT TERM

[ -f "$BUILD/libuphook.a" ] || make -s "$BUILD/libuphook.a"
# shellcheck disable=SC2046
cc -O2 -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -Ihost $(pkg-config --cflags $PKGS) \
  -o "$T/bench_download" tests/bench/bench_download.c \
  "$BUILD/libuphook.a" $(pkg-config --libs $PKGS)

python3 -c "
import sys
b = bytes(range(256)) * 4096
with open(sys.argv[1], 'wb') as f:
    for _ in range(int(sys.argv[2])): f.write(b)
" "$T/big.bin" "$SIZE_MB"
SUM=$(openssl dgst -sha256 -r "$T/big.bin" | cut -d' ' -f1)
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
  -keyout "$T/key.pem" -out "$T/cert.pem" -days 1 -subj /CN=127.0.0.1 \
  -addext subjectAltName=IP:127.0.0.1 >/dev/null 2>&1
(cd "$T" && exec openssl s_server -accept 127.0.0.1:0 -cert cert.pem \
  -key key.pem -WWW >server.log 2>&1) &
SRV=$!
for _ in 1 2 3 4 5 6 7 8 9 10; do
  PORT=$(sed -n 's/^ACCEPT .*:\([0-9]*\)$/\1/p' "$T/server.log")
  [ -n "$PORT" ] && break
  sleep 0.2
done
URL="https://127.0.0.1:$PORT/big.bin"
SPID=$(pgrep -P "$SRV" openssl || echo "$SRV")

now() { date +%s.%N; }
cpu() { awk '{print $14 + $15}' "/proc/$SPID/stat"; }   # server ticks
tick=$(getconf CLK_TCK)

run() {   # run NAME CMD...: append "seconds server_cpu" to $T/NAME
  name=$1; shift
  sync
  c0=$(cpu); t0=$(now)
  "$@" >/dev/null
  t1=$(now); c1=$(cpu)
  echo "$t0 $t1 $c0 $c1" | awk -v k="$tick" \
    '{printf "%.3f %.3f\n", $2 - $1, ($4 - $3) / k}' >>"$T/$name"
}
curl_null() { curl -s --cacert "$T/cert.pem" -o /dev/null "$URL"; }
curl_sync() {
  curl -s --cacert "$T/cert.pem" -o "$T/f" "$URL" && sync "$T/f" &&
    rm -f "$T/f"
}
uphook_disk() {
  rm -rf "$T/cache"
  "$T/bench_download" "$URL" "$SUM" "$T/cache" "$T/cert.pem"
}
uphook_tmpfs() {
  rm -rf "$SHM"
  "$T/bench_download" "$URL" "$SUM" "$SHM" "$T/cert.pem"
}
curl_sum() {
  curl -s --cacert "$T/cert.pem" -o "$T/f" "$URL" && sha256sum "$T/f" &&
    rm -f "$T/f"
}
SHM=""
if [ -d /dev/shm ] && [ -w /dev/shm ]; then SHM=/dev/shm/uphook-bench-$$; fi
ROWS="curl_null curl_sync uphook_disk ${SHM:+uphook_tmpfs} curl_sum"
LOAD=$(cut -d' ' -f1-3 /proc/loadavg)
curl_null >/dev/null                               # warm the page cache
i=0
while [ "$i" -lt "$RUNS" ]; do
  for r in $ROWS; do run "$r" "$r"; done
  i=$((i + 1))
done
[ -n "$SHM" ] && rm -rf "$SHM"

median() { sort -n "$T/$1" | awk '{a[NR] = $0} END {print a[int((NR + 1) / 2)]}'; }
base=$(median curl_null | cut -d' ' -f1)
echo "$SIZE_MB MiB over loopback TLS from openssl s_server, median of $RUNS runs"
echo "(load average before: $LOAD; $(nproc) cores; other work on the host skews this)"
printf "%-44s %8s %7s %12s\n" "" seconds "x curl" "server cpu s"
for n in $ROWS; do
  m=$(median "$n")
  s=${m% *}; c=${m#* }
  case $n in
    curl_null) label="curl -o /dev/null" ;;
    curl_sync) label="curl -o f && sync f (write+fsync, no hash)" ;;
    uphook_disk) label="uphook download (hash+write+fsync, disk)" ;;
    uphook_tmpfs) label="uphook download (hash+write+fsync, tmpfs)" ;;
    curl_sum) label="curl -o f && sha256sum f" ;;
  esac
  printf "%-44s %8s %7s %12s\n" "$label" "$s" \
    "$(awk -v a="$s" -v b="$base" 'BEGIN {printf "%.2f", a / b}')" "$c"
done

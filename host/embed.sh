#!/bin/sh
# Turn Lua sources into a C table so an installed uphook needs no Lua
# files beside it.  Module names: lua/engine.lua -> "uphook.engine",
# lua/mock/cluster.lua -> "uphook.mock.cluster", stdlib/semver.lua ->
# "semver".
set -e
echo '#include "embedded.h"'
i=0
for f in "$@"; do
  echo "static const unsigned char src$i[] = {"
  od -An -v -tx1 "$f" | sed 's/ *\([0-9a-f][0-9a-f]\)/0x\1,/g'
  echo "0};"
  i=$((i+1))
done
echo 'const struct uh_embedded uh_embedded[] = {'
i=0
for f in "$@"; do
  case "$f" in
    lua/*) m=$(echo "$f" | sed 's|^lua/|uphook.|; s|\.lua$||; s|/|.|g') ;;
    stdlib/*) m=$(echo "$f" | sed 's|^stdlib/||; s|\.lua$||; s|/|.|g') ;;
  esac
  echo "  {\"$m\", \"@$f\", (const char *)src$i, sizeof src$i - 1},"
  i=$((i+1))
done
echo '  {0, 0, 0, 0}'
echo '};'

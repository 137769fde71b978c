# The mock cluster's speed (tests/bench/bench_mock.lua), with the system
# Lua interpreter: the mock cluster is pure Lua.  This was a unit-test
# threshold; a CPU-speed goal belongs here, beside the other figures.
if ! command -v lua5.4 >/dev/null 2>&1; then
  echo "(no lua5.4 interpreter: apt-get install lua5.4)"; exit 0
fi
lua5.4 tests/bench/bench_mock.lua

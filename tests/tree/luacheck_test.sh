# luacheck (Debian's lua-check, installed by make deps) over lua/,
# stdlib/ and hooks/, as .luacheckrc configures it: no warning in any
# file. .luacheckrc says where code runs (the engine with Lua's whole
# library; hooks and the standard library in the sandbox, whose globals
# it reads from docs/meta/uphook.lua) and which patterns are on purpose.
# Doctored sources (put through luacheck under a real file's name, so
# that the same configuration applies) must draw the warnings they are
# made to draw, so the check is shown to be able to fail.
# Run from the repository root: sh tests/tree/luacheck_test.sh
. tests/cli/lib.sh

if ! command -v luacheck >/dev/null 2>&1; then
  echo "luacheck is not installed (make deps installs lua-check)" >"$OUT"
  not_ok "luacheck is installed"
  finish; exit
fi

for dir in lua stdlib hooks; do
  run luacheck --codes --formatter plain "$dir"
  n=$(find "$dir" -name '*.lua' | wc -l)
  if [ "$RC" -eq 0 ] && [ ! -s "$OUT" ] && [ "$n" -gt 0 ]; then
    ok "$dir/: no luacheck warning ($n files)"
  else
    not_ok "$dir/: luacheck warns (or found no file)"
  fi
done

# as FILE TEXT: luacheck TEXT as if it were FILE
as() {
  printf '%s\n' "$2" >"$TMP/doctored.lua"
  run luacheck --codes --formatter plain --filename "$1" - <"$TMP/doctored.lua"
}
# doctored FILE CODE TEXT: TEXT, checked as if it were FILE, draws CODE
doctored() {
  as "$1" "$3"
  if grep -q "($2)" "$OUT"; then ok "a doctored $1 draws $2"
  else not_ok "a doctored $1 draws $2"; fi
}
# a hook has no print, no os (the sandbox's allow list)
doctored hooks/dns/upgrade.lua W113 'print(os.time())'
# a primitive's family has only the functions the stubs declare
doctored hooks/dns/upgrade.lua W143 'kube.aply({})'
# the engine's modules: an unused local, a shadowed one
doctored lua/engine/plan.lua W211 'local unused = 1'
doctored lua/engine/plan.lua W421 'local a = 1
do local a = 2; print(a) end
print(a)'
# the host's internals are the standard library's, not a hook's
doctored hooks/dns/upgrade.lua W113 '__uphook.sleep(1)'
as stdlib/retry.lua 'local M = {} function M.f() __uphook.sleep(1) end return M'
expect "... which the standard library calls without a warning" 0
finish

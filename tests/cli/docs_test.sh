# The man page and the bash completion cover every option `--help`
# lists, per command; the completion handles --addons=DIR; `make install`
# writes the installed paths of its PREFIX into the man page, and `make
# uninstall` removes what install put there.
. tests/cli/lib.sh

BUILD=${BUILD:-build}
commands="upgrade plan list doctor recover fixture test lint help version"
export COMPLETION
MAN=$TMP/man.txt
# the roff source with its escapes undone: \- is -
sed 's/\\-/-/g; s/\\f[BIRP]//g' docs/uphook.1 > "$MAN"

# complete WORDS...: what the completion offers for the last word
COMPLETION=$(pwd)/docs/uphook.bash-completion
complete_words() {
  bash -c '. "$COMPLETION"
    COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _uphook
    printf "%s\n" "${COMPREPLY[@]}"' uphook "$@"
}

for c in "" $commands; do
  "$UPHOOK" $c --help > "$TMP/help" 2>&1
  opts=$(sed -n 's/^  \(-[a-zA-Z], \)\{0,1\} *\(--[a-z][a-z-]*\).*/\2/p' "$TMP/help" | sort -u)
  [ -n "$opts" ] || { not_ok "uphook $c --help lists options"; continue; }
  if [ -z "$c" ]; then comp=$(complete_words uphook --)
  else comp=$(complete_words uphook "$c" --); fi
  miss_man=""; miss_comp=""
  for o in $opts; do
    grep -qE -- "(^|[^a-z-])$o([^a-z-]|\$)" "$MAN" || miss_man="$miss_man $o"
    echo "$comp" | grep -qx -- "$o" || miss_comp="$miss_comp $o"
  done
  name=${c:-uphook}
  if [ -z "$miss_man" ]; then ok "man page: every option of '$name --help'"
  else echo "missing:$miss_man" >"$OUT"; not_ok "man page: every option of '$name --help'"; fi
  if [ -z "$miss_comp" ]; then ok "completion: every option of '$name --help'"
  else echo "missing:$miss_comp" >"$OUT"; not_ok "completion: every option of '$name --help'"; fi
done
"$UPHOOK" --help | sed -n 's/^  \([a-z][a-z-]*\) .*/\1/p' | sort > "$TMP/cmds"
complete_words uphook "" | sort > "$TMP/ccmds"
cmp -s "$TMP/cmds" "$TMP/ccmds" && ok "completion: the commands of --help" \
  || { diff "$TMP/cmds" "$TMP/ccmds" >"$OUT"; not_ok "completion: the commands of --help"; }

# test and lint: the default path is `.` (the addon repository), as
# --help and the man page say, and the completion offers the folder's files
man_section() {     # the man page's paragraph of a command, on one line
  sed -n "/^\.BR $1 \"/,/^\.\(RS\|TP\)\$/p" docs/uphook.1 | tr '\n' ' ' |
    sed 's/\.IR //g'
}
for c in test lint; do
  "$UPHOOK" $c --help > "$TMP/help" 2>&1
  if grep -q "(default: \.[,)]" "$TMP/help" && ! grep -q "hooks/" "$TMP/help"
  then ok "uphook $c --help: the default path is ."
  else cp "$TMP/help" "$OUT"; not_ok "uphook $c --help: the default path is ."; fi
  man_section $c > "$OUT"
  if grep -qE "default( path is)? \. [,;]" "$OUT" && ! grep -q "hooks/" "$OUT"
  then ok "man page: $c's default path is ."
  else not_ok "man page: $c's default path is ."; fi
done
mkdir -p "$TMP/cwd/addons"
( cd "$TMP/cwd" && complete_words uphook test "" ) > "$OUT"
grep -qx 'addons' "$OUT" && ok "completion: uphook test completes paths from ." \
  || not_ok "completion: uphook test completes paths from ."

mkdir -p "$TMP/repos/one" "$TMP/repos/two"
( cd "$TMP" && complete_words uphook --addons=repos/o ) > "$OUT"
grep -qx 'repos/one' "$OUT" && ok "completion: --addons=DIR completes the folder" \
  || not_ok "completion: --addons=DIR completes the folder"
( cd "$TMP" && complete_words uphook --addons = repos/t ) > "$OUT"
grep -qx 'repos/two' "$OUT" && ok "completion: --addons = DIR (COMP_WORDBREAKS split)" \
  || not_ok "completion: --addons = DIR (COMP_WORDBREAKS split)"
make_repo "$TMP/repos/one" hello
( cd "$TMP" && complete_words uphook --addons=repos/one upgrade he ) > "$OUT"
grep -qx 'hello' "$OUT" && ok "completion: addons of an --addons=DIR repository" \
  || not_ok "completion: addons of an --addons=DIR repository"
complete_words uphook --addons hooks plan d > "$OUT"
grep -qx 'dns' "$OUT" && ok "completion: addons of a folder of hooks (--addons hooks, no addons.yaml)" \
  || not_ok "completion: addons of a folder of hooks (--addons hooks, no addons.yaml)"
make_repo "$TMP/repos/two" flag
cp tests/lua/addons/flag/upgrade.lua "$TMP/repos/two/addons/flag/"
( cd "$TMP" && PATH=$(dirname "$UPHOOK"):$PATH \
  complete_words uphook --addons repos/two upgrade flag --s ) > "$OUT"
grep -qx -- '--skip-kubebench-installation' "$OUT" \
  && ok "completion: a hook's flag after its addon (upgrade flag --s)" \
  || not_ok "completion: a hook's flag after its addon (upgrade flag --s)"
( cd "$TMP" && PATH=$(dirname "$UPHOOK"):$PATH \
  complete_words uphook --addons=repos/two plan flag --l ) > "$OUT"
grep -qx -- '--level' "$OUT" && ! grep -q -- '--lock-wait' "$OUT" \
  && ok "completion: a hook's valued parameter (plan flag --l)" \
  || not_ok "completion: a hook's valued parameter (plan flag --l)"

# make install / uninstall under a PREFIX
D=$TMP/dest
make -s install BUILD="$BUILD" DESTDIR="$D" PREFIX=/opt/uh >"$OUT" 2>&1
man_page=$D/opt/uh/share/man/man1/uphook.1
if [ -f "$man_page" ] && grep -q '/opt/uh/share/uphook/meta/' "$man_page" \
   && ! grep -q '/usr/local' "$man_page"; then
  ok "the installed man page names the PREFIX's paths"
else not_ok "the installed man page names the PREFIX's paths"; fi
for f in bin/uphook share/uphook/meta/uphook.lua share/uphook/luarc.json \
         share/bash-completion/completions/uphook; do
  [ -e "$D/opt/uh/$f" ] || echo "missing $f" >>"$OUT"
done
grep -q missing "$OUT" && not_ok "make install puts every file" || ok "make install puts every file"
make -s uninstall DESTDIR="$D" PREFIX=/opt/uh >"$OUT" 2>&1
left=$(find "$D" -type f)
[ -z "$left" ] && ok "make uninstall removes every installed file" \
  || { echo "$left" >"$OUT"; not_ok "make uninstall removes every installed file"; }
D2="$TMP/destdir-root"
make -s install BUILD="$BUILD" DESTDIR="$D2" PREFIX=/ >"$OUT" 2>&1
grep -rl '//share\|//bin' "$D2" >>"$OUT" 2>&1
[ -x "$D2/bin/uphook" ] && ! grep -rqs '//share' "$D2" \
  && ok "make install PREFIX=/: /bin and /share, no //share in any file" \
  || not_ok "make install PREFIX=/: /bin and /share, no //share in any file"

finish

# The lock wait says so (docs/state.md "The node lock"): after a second of
# waiting for the node's addon lock uphook prints who holds it (the PID, and
# `microk8s enable <addon>` for MicroK8s's enable wrapper, read with
# F_GETLK), and the final message names the holder, without errno noise.
. tests/cli/lib.sh

R="$TMP/repo"
make_repo "$R" hello
cp tests/lua/addons/hello/upgrade.lua "$R/addons/hello/"
printf 'apiVersion: v1\nkind: Node\nmetadata:\n  name: n1\n' > "$TMP/cluster.yaml"
W="$TMP/w"
U() { "$UPHOOK" --addons "$R" --offline "$TMP/cluster.yaml" --state-dir "$W" "$@"; }

# hold SCRIPT SECONDS: run SCRIPT (a copy of the holder below, so that its
# command line is what the test wants) holding the lock for SECONDS
HOLDER='import fcntl, os, time
d = os.environ["LOCKDIR"]
os.makedirs(d, exist_ok=True)
f = open(d + "/.microk8s-addon-lock", "w")
fcntl.lockf(f, fcntl.LOCK_EX)
open(d + "/held", "w").close()
end = time.time() + float(os.environ["HOLD"])
release = os.environ.get("RELEASE")
while time.time() < end and not (release and os.path.exists(release)):
    time.sleep(0.05)'
hold() {
  mkdir -p "$(dirname "$1")"; printf '%s\n' "$HOLDER" > "$1"
  rm -f "$W/lock/held"
  LOCKDIR="$W/lock" HOLD=$2 python3 "$1" dns & HPID=$!
  while [ ! -e "$W/lock/held" ]; do sleep 0.05; done
}

# MicroK8s's `microk8s enable dns` runs scripts/wrappers/enable.py dns
hold "$TMP/snap/scripts/wrappers/enable.py" 30
run U upgrade hello --lock-wait 2
expect "held for longer than --lock-wait: exit 5" 5
expect "after a second it says who holds the lock" 5 \
  "waiting for the addon lock \(held by PID $HPID, \`microk8s enable dns\`\) \.\.\."
expect "the final message names the holder and the wait" 5 \
  "the addon lock .*/\.microk8s-addon-lock is held by PID $HPID, \`microk8s enable dns\`; waited 2 s \(--lock-wait\)"
refute "no errno noise" "Resource temporarily unavailable|EAGAIN"
run U upgrade hello --lock-wait 0.5
expect "a wait under a second: no waiting line, the holder named" 5 "held by PID $HPID"
refute "... and no 'waiting for' line" "waiting for the addon lock"
kill $HPID; wait $HPID 2>/dev/null

# another holder: its command line
hold "$TMP/o/h.py" 30
run U upgrade hello --lock-wait 1.5
expect "another holder: its command line" 5 "held by PID $HPID, \`[^\`]*python3[^ ]* $TMP/o/h\.py dns\`"
kill $HPID; wait $HPID 2>/dev/null

# the holder lets go during the wait: the upgrade goes on.  The holder
# lets go once the waiting line is out (or after 60 s), not after a fixed
# time: under valgrind uphook's start alone can take longer than that.
export RELEASE="$TMP/release"; rm -f "$RELEASE"
hold "$TMP/snap/scripts/wrappers/enable.py" 60
# emptied first: the background upgrade's own redirection may come after
# the loop's first look, which would find the last run's waiting line
: >"$OUT"
U upgrade hello --lock-wait 90 >"$OUT" 2>&1 & UPID=$!
n=0
while ! grep -q "waiting for the addon lock" "$OUT" && [ $n -lt 1200 ]; do
  sleep 0.05; n=$((n + 1))
done
# (for a failure's report: was the holder still there, on the same file?)
alive=no; kill -0 $HPID 2>/dev/null && alive=yes
lsl=$(ls -li "$W/lock" 2>&1 | tr '\n' ' ')
: > "$RELEASE"
wait $UPID; RC=$?
unset RELEASE
echo "    holder $HPID alive at release: $alive; $lsl" >>"$OUT"
expect "the lock let go during the wait: the upgrade runs" 0 \
  "waiting for the addon lock \(held by PID $HPID" "Upgraded hello"
wait $HPID 2>/dev/null

# recover waits the same way
hold "$TMP/snap/scripts/wrappers/disable.py" 30
mkdir -p "$W/journal"; : > "$W/journal/hello.journal"
run U recover hello --lock-wait 1.5
expect "recover: the same wait and message" 5 \
  "waiting for the addon lock \(held by PID $HPID, \`microk8s disable dns\`\)" \
  "is held by PID $HPID, \`microk8s disable dns\`"
kill $HPID; wait $HPID 2>/dev/null

finish

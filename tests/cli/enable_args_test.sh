#!/bin/sh
# The real hooks take their arguments as `microk8s enable` takes them, typed
# as a user types them (docs/hooks.md, each hook's "Parameters as enable
# takes them"): hostpath-storage's -r/-d, dns's and metallb's colon forms,
# registry's size=NNGi, cert-manager's -r/-V (another chart refused, saying
# what to run). Offline, from the hooks' own fixtures, through a temporary
# addon repository; the world persists in --state-dir, so each check reads
# what the run left.
# Run from the repository root: sh tests/cli/enable_args_test.sh [build]
. tests/cli/lib.sh

REPO=$TMP/repo
mkdir -p "$REPO/addons"
{ echo "microk8s-addons:"; echo "  addons:"
  for h in hostpath-storage dns metallb registry cert-manager; do
    cp -r "hooks/$h" "$REPO/addons/$h"
    printf '    - name: %s\n      description: %s\n      version: "0"\n' "$h" "$h"
  done; } >"$REPO/addons.yaml"

# up FIXTURE ARGS...: a fresh world from FIXTURE, then uphook ARGS in it
up() {
  fx=$1; shift
  W=$TMP/w.$$.$(date +%s%N)
  mkdir -p "$W"
  run "$UPHOOK" --addons "$REPO" --offline "$fx" --state-dir "$W" "$@"
}
# world PATTERN: the persisted cluster holds PATTERN (grep -E)
world() { grep -qE -- "$1" "$W/offline/cluster.yaml"; }

up hooks/hostpath-storage/fixtures/cluster-1.4.2.yaml upgrade hostpath-storage -r Retain -d false
if [ "$RC" = 0 ] && world '^reclaimPolicy: Retain' \
   && world 'storageclass.kubernetes.io/is-default-class: "?false'; then
  ok "hostpath-storage -r Retain -d false: the class is Retain, not the default"
else not_ok "hostpath-storage -r Retain -d false: the class is Retain, not the default"; fi

up hooks/hostpath-storage/fixtures/cluster-1.4.2.yaml upgrade hostpath-storage -rRetain
if [ "$RC" = 0 ] && world '^reclaimPolicy: Retain'; then ok "hostpath-storage -rRetain (getopt's joined form)"
else not_ok "hostpath-storage -rRetain (getopt's joined form)"; fi

up hooks/hostpath-storage/fixtures/cluster-1.4.2.yaml upgrade hostpath-storage Retain
expect "hostpath-storage with a positional argument it does not declare: exit 2" 2 \
  'hostpath-storage takes no positional arguments, got "Retain"'

up hooks/hostpath-storage/fixtures/cluster-1.4.2.yaml upgrade hostpath-storage -x 1
expect "hostpath-storage -x: exit 2 before anything happens" 2 '-x'

up hooks/dns/fixtures/cluster-1.8.0.yaml upgrade dns:1.1.1.1,8.8.8.8
if [ "$RC" = 0 ] && world 'forward \. 1\.1\.1\.1 8\.8\.8\.8'; then
  ok "dns:1.1.1.1,8.8.8.8 (microk8s's colon form): the Corefile forwards to both"
else not_ok "dns:1.1.1.1,8.8.8.8 (microk8s's colon form): the Corefile forwards to both"; fi

up hooks/dns/fixtures/cluster-1.8.0.yaml plan dns 1.1.1.1,8.8.8.8
expect "dns 1.1.1.1,8.8.8.8 (after the name): the plan shows the forward line" 0 \
  'forward \. 1\.1\.1\.1 8\.8\.8\.8'

up hooks/metallb/fixtures/cluster-v0.9.3.yaml upgrade metallb:10.64.140.43-10.64.140.49,192.168.0.105/32
if [ "$RC" = 0 ] && world '10\.64\.140\.43-10\.64\.140\.49' && world 'kind: IPAddressPool'; then
  ok "metallb:RANGES from v0.9.3: an IPAddressPool with those ranges"
else not_ok "metallb:RANGES from v0.9.3: an IPAddressPool with those ranges"; fi

up hooks/metallb/fixtures/cluster-v0.14.9.yaml upgrade metallb:10.0.0.9-10.0.0.1
expect "metallb:BAD-RANGE: refused before any change, naming it" 4 \
  '10\.0\.0\.9 is above 10\.0\.0\.1'

up hooks/registry/fixtures/cluster-2.7.1.yaml upgrade registry:size=40Gi
expect "registry:size=40Gi (enable's deprecated form) on a class that cannot expand: exit 4" 4 \
  'cannot grow: its StorageClass microk8s-hostpath does not allow volume expansion'

up hooks/registry/fixtures/cluster-2.8.1.yaml upgrade registry --size 60Gi --storageclass ssd-expandable
if [ "$RC" = 0 ] && world 'storage: 60Gi' && world 'image: registry:2\.8\.3'; then
  ok "registry --size 60Gi --storageclass ssd-expandable: the claim grew"
else not_ok "registry --size 60Gi --storageclass ssd-expandable: the claim grew"; fi

up hooks/registry/fixtures/cluster-2.7.1.yaml upgrade registry --size 10Gi
expect "registry --size 10Gi: a usage error, as enable refuses it" 2 'at least 20Gi'

up hooks/cert-manager/fixtures/cluster-v1.8.0.yaml upgrade cert-manager -V v1.19.1
expect "cert-manager -V v1.19.1 (not the chart it ships): refused, saying what to run" 2 \
  'this upgrade installs the chart it ships' 'microk8s enable cert-manager -V v1.19.1'

up hooks/cert-manager/fixtures/cluster-v1.8.0.yaml upgrade cert-manager -r https://example.com/charts
expect "cert-manager -r ANOTHER-REPOSITORY: refused the same way" 2 \
  'this upgrade installs the chart it ships'

run "$UPHOOK" --addons "$REPO" upgrade hostpath-storage --help
expect "upgrade hostpath-storage --help lists -r/-d with their descriptions" 0 \
  '-r, --reclaim-policy' '-d, --default-class' 'Delete'
finish

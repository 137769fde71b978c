#!/bin/sh
# make demo: run the real hostpath-storage hook from hooks/ offline, from a
# cluster made of the real 1.1.0 manifests (placeholders filled as enable
# fills them), through the same CLI a user runs: plan, then upgrade.
#   sh tests/cli/demo.sh [BUILD_DIR]     (default: build)
set -eu
BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
UPHOOK="$ROOT/$BUILD/uphook"
case "$BUILD" in /*) UPHOOK="$BUILD/uphook" ;; esac
FIXTURE="$ROOT/hooks/hostpath-storage/fixtures/cluster-1.1.0.yaml"

[ -x "$UPHOOK" ] || { echo "demo: $UPHOOK is missing: run make first" >&2; exit 2; }

# uphook finds addons through repositories: build a throwaway one whose
# hostpath-storage is the hook folder in this tree.
REPO=$(mktemp -d "${TMPDIR:-/tmp}/uphook-demo.XXXXXX")
STATE=$(mktemp -d "${TMPDIR:-/tmp}/uphook-demo-state.XXXXXX")
trap 'rm -rf "$REPO" "$STATE"' EXIT INT TERM
mkdir -p "$REPO/addons"
ln -s "$ROOT/hooks/hostpath-storage" "$REPO/addons/hostpath-storage"
cat > "$REPO/addons.yaml" <<'YAML'
microk8s-addons:
  addons:
    - name: hostpath-storage
      description: "Storage class; allocates storage from host directory"
      version: "1.6.0"
      check_status: "deployment.apps/hostpath-provisioner"
      supported_architectures:
        - amd64
        - arm64
        - s390x
YAML

run() {
  echo
  echo "\$ uphook $*"
  "$UPHOOK" --addons "$REPO" --offline "$FIXTURE" --state-dir "$STATE" "$@"
}

echo "== hostpath-storage 1.1.0 -> 1.6.0, offline, from ${FIXTURE#$ROOT/}"
run plan hostpath-storage
run upgrade hostpath-storage
echo
echo "== done: the StorageClass was recreated (WaitForFirstConsumer), the"
echo "   provisioner and its RBAC upgraded. The fixture's PVs and PVCs are not"
echo "   in the change list: hooks/hostpath-storage's tests assert they are untouched."

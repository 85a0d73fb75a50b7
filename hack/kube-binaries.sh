#!/usr/bin/env bash
# Builds the real components the end-to-end suite runs into bin/ (git-ignored), all from the Go
# module proxy: etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kubectl and kwok,
# plus kwok's stage definitions, cert-manager's CRDs and helm (hack/helm.sh), and installs the
# Debian packages the rotation scripts use (openssl, curl) when they are missing. A binary
# already built at the pinned version is reused.
#
# First build on 2 cores: about 6 minutes (kube-apiserver alone about 4); seconds once cached.
set -euo pipefail
cd "$(dirname "$0")/.."

# Go 1.26.8 ships known vulnerabilities in net/http and crypto/tls; go1.27.3 fixes them.
export GOTOOLCHAIN=go1.27.3
export CGO_ENABLED=0

ETCD_VERSION=$(awk '$1 == "require" && $2 == "go.etcd.io/etcd/server/v3" {print $3}' hack/etcd/go.mod)
KWOK_VERSION=v0.8.0
# cert-manager's CRDs, to dry-run metacontroller/cert-manager against the apiserver.
CERT_MANAGER_VERSION=v1.21.2
KUBE_VERSION=$(awk '$1 == "require" && $2 == "k8s.io/kubernetes" {print $3}' hack/kube/go.mod)

BIN=$PWD/bin
mkdir -p "$BIN"

source hack/lib.sh # fresh, stamp, say

if ! fresh etcd "$ETCD_VERSION"; then
  say "building etcd $ETCD_VERSION"
  (cd hack/etcd && go build -trimpath -o "$BIN/etcd" go.etcd.io/etcd/server/v3)
  stamp etcd "$ETCD_VERSION"
fi

if ! fresh kwok "$KWOK_VERSION"; then
  say "building kwok $KWOK_VERSION"
  GOBIN=$BIN go install "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION"
  stamp kwok "$KWOK_VERSION"
fi
if [ ! -f "$BIN/kwok-stages/$KWOK_VERSION" ]; then
  src=$(go env GOMODCACHE)/sigs.k8s.io/kwok@$KWOK_VERSION/kustomize/stage
  [ -d "$src" ] || go mod download "sigs.k8s.io/kwok@$KWOK_VERSION"
  rm -rf "$BIN/kwok-stages" && mkdir -p "$BIN/kwok-stages"
  for stage in node/fast/node-initialize node/heartbeat/node-heartbeat pod/fast/pod-ready pod/fast/pod-complete pod/fast/pod-delete; do
    cp "$src/$stage.yaml" "$BIN/kwok-stages/"
  done
  touch "$BIN/kwok-stages/$KWOK_VERSION"
fi

if [ ! -f "$BIN/cert-manager-crds/$CERT_MANAGER_VERSION" ]; then
  say "fetching cert-manager $CERT_MANAGER_VERSION's CRDs from the module proxy"
  src=$(go mod download -json "github.com/cert-manager/cert-manager@$CERT_MANAGER_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  [ -d "$src/deploy/crds" ] || { echo "no deploy/crds in cert-manager $CERT_MANAGER_VERSION" >&2; exit 1; }
  rm -rf "$BIN/cert-manager-crds" && mkdir -p "$BIN/cert-manager-crds"
  cp "$src"/deploy/crds/*.yaml "$BIN/cert-manager-crds/"
  touch "$BIN/cert-manager-crds/$CERT_MANAGER_VERSION"
fi

missing=()
for cmd in kube-apiserver kube-controller-manager kube-scheduler kubectl; do
  fresh "$cmd" "$KUBE_VERSION" || missing+=("k8s.io/kubernetes/cmd/$cmd")
done
if [ ${#missing[@]} -gt 0 ]; then
  say "building ${missing[*]} at $KUBE_VERSION"
  (cd hack/kube && go build -trimpath -o "$BIN/" "${missing[@]}")
  for pkg in "${missing[@]}"; do stamp "${pkg##*/}" "$KUBE_VERSION"; done
fi
# hack/rotate-token.sh and hack/rotate-ca.sh, which the suite runs, need openssl and curl.
need=()
for cmd in openssl curl; do command -v "$cmd" > /dev/null || need+=("$cmd"); done
if [ ${#need[@]} -gt 0 ]; then
  say "installing ${need[*]} from Debian"
  sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get update -qq && $sudo apt-get install -y -qq "${need[@]}" > /dev/null
fi
# The suite installs the Helm chart with helm, built from the module proxy too.
bash hack/helm.sh
say "ready in $BIN: $(cd "$BIN" && ls -1 | tr '\n' ' ')"

#!/usr/bin/env bash
# Builds the parts of the end-to-end suite's real node into bin/ (git-ignored), all from the Go
# module proxy, and installs runc (hack/container-tools.sh) and iproute2 from Debian when missing:
#   kubelet                                  k8s.io/kubernetes at the version of hack/kube/go.mod
#   containerd, containerd-shim-runc-v2, ctr  github.com/containerd/containerd/v2 (CGO_ENABLED=0,
#                                            tags no_btrfs no_devmapper no_zfs)
#   cni-plugins/{bridge,host-local,loopback,portmap}  github.com/containernetworking/plugins
#   node-images/{pause,testapp,testapp-v2,testapp-root}{/,.tar}  hack/node/images: OCI layouts
#                                            and archives of the project's own sandbox image and
#                                            test app, with no Docker engine
#   webapp-e2e-registry                      hack/node/registry: a registry on loopback for them
# A binary already built at the pinned version is reused; the images and the registry, seconds to
# build, are rebuilt when hack/node's sources change.
#
# First build on 2 cores: about 8 minutes (kubelet about 4, containerd about 3); seconds once cached.
set -euo pipefail
cd "$(dirname "$0")/.."

# Go 1.26.8 ships known vulnerabilities in net/http and crypto/tls; go1.27.3 fixes them.
export GOTOOLCHAIN=go1.27.3
export CGO_ENABLED=0

KUBE_VERSION=$(awk '$1 == "require" && $2 == "k8s.io/kubernetes" {print $3}' hack/kube/go.mod)
CONTAINERD_VERSION=v2.4.2
CNI_PLUGINS_VERSION=v1.10.0

BIN=$PWD/bin
mkdir -p "$BIN"

source hack/lib.sh # fresh, stamp, say

bash hack/container-tools.sh runc
# The suite makes the node's bridge with ip (iproute2).
if ! command -v ip > /dev/null; then
  say "installing iproute2 from Debian"
  sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get update -qq && $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends iproute2 > /dev/null
fi

missing=()
for cmd in containerd containerd-shim-runc-v2 ctr; do
  fresh "$cmd" "$CONTAINERD_VERSION" || missing+=("github.com/containerd/containerd/v2/cmd/$cmd@$CONTAINERD_VERSION")
done
if [ ${#missing[@]} -gt 0 ]; then
  say "building containerd, its runc shim and ctr at $CONTAINERD_VERSION"
  GOBIN=$BIN go install -trimpath -tags "no_btrfs no_devmapper no_zfs" \
    -ldflags "-X github.com/containerd/containerd/v2/version.Version=$CONTAINERD_VERSION" "${missing[@]}"
  for pkg in "${missing[@]}"; do pkg=${pkg%@*}; stamp "${pkg##*/}" "$CONTAINERD_VERSION"; done
fi

mkdir -p "$BIN/cni-plugins"
missing=()
for plugin in main/bridge ipam/host-local main/loopback meta/portmap; do
  name=${plugin##*/}
  [ -x "$BIN/cni-plugins/$name" ] && [ "$(cat "$BIN/cni-plugins/.$name.version" 2>/dev/null)" = "$CNI_PLUGINS_VERSION" ] ||
    missing+=("github.com/containernetworking/plugins/plugins/$plugin@$CNI_PLUGINS_VERSION")
done
if [ ${#missing[@]} -gt 0 ]; then
  say "building the CNI plugins bridge, host-local, loopback and portmap at $CNI_PLUGINS_VERSION"
  GOBIN=$BIN/cni-plugins go install -trimpath "${missing[@]}"
  for pkg in "${missing[@]}"; do pkg=${pkg%@*}; echo "$CNI_PLUGINS_VERSION" > "$BIN/cni-plugins/.${pkg##*/}.version"; done
fi

if ! fresh kubelet "$KUBE_VERSION"; then
  say "building k8s.io/kubernetes/cmd/kubelet at $KUBE_VERSION"
  (cd hack/kube && go build -trimpath -o "$BIN/kubelet" k8s.io/kubernetes/cmd/kubelet)
  stamp kubelet "$KUBE_VERSION"
fi
# The images and the registry are stamped with the hash of hack/node's sources: rebuilt when
# those change, never under a suite that is reading them.
NODE_SOURCES=$(find hack/node -type f \( -name '*.go' -o -name 'go.mod' -o -name 'go.sum' \) | LC_ALL=C sort | xargs cat | sha256sum | cut -c1-16)
if ! fresh webapp-e2e-registry "$NODE_SOURCES" || [ "$(cat "$BIN/node-images/.version" 2>/dev/null)" != "$NODE_SOURCES" ]; then
  say "building the node's images and the registry from hack/node ($NODE_SOURCES)"
  go run -C hack/node ./images -out "$BIN/node-images"
  echo "$NODE_SOURCES" > "$BIN/node-images/.version"
  go build -C hack/node -trimpath -o "$BIN/webapp-e2e-registry" ./registry
  stamp webapp-e2e-registry "$NODE_SOURCES"
fi
say "ready in $BIN: kubelet containerd containerd-shim-runc-v2 ctr cni-plugins/{bridge,host-local,loopback,portmap} node-images webapp-e2e-registry; $(runc --version | head -1)"

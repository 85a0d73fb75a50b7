#!/usr/bin/env bash
# Builds the Prometheus server (github.com/prometheus/prometheus/cmd/prometheus, Prometheus 3) into
# bin/prometheus (git-ignored) from the Go module proxy, at a pinned version, for the canary's
# analysis against a real Prometheus; nothing downloads a prebuilt binary. The binary is kept in a
# versioned cache outside the checkout, ${XDG_CACHE_HOME:-$HOME/.cache}/webapp-operator/
# prometheus-<version>/, so that a fresh clone copies it instead of building it again;
# bin/prometheus is reused while its stamp matches.
#
# Prometheus 3.x is published as module versions v0.3xx.y (v0.316.0 is Prometheus 3.16.0, its
# VERSION file). Its go.mod has no replace or exclude directive and the proxy serves every module
# it needs, so `go install pkg@version` builds it with its own go.mod and go.sum, as hack/helm.sh
# builds Helm.
#
# Not as the release is built:
#   - without the builtinassets tag: the module does not ship the web UI's compiled assets
#     (web/ui/static is made by npm at release time), so the tag would not compile. Without it
#     Prometheus looks for the UI in ./web/ui/static under its working directory and the UI pages
#     answer 404 or 500; the HTTP API (/api/v1/...), /metrics and /-/ready and /-/healthy work.
#   - with the remove_all_sd tag: only static_configs, file_sd_configs and http_sd_configs, which
#     is what a scrape of processes on loopback needs, and about a quarter fewer packages to build
#     (no cloud SDKs). Add enable_kubernetes_sd (or enable_<name>_sd) to TAGS for more.
#
# First build: 8 CPU-minutes, about 5 to 8 minutes on 2 cores (measured at 8.5 minutes under
# nice -n 19 beside other work, modules already downloaded); seconds once cached; a 71 MiB binary.
set -euo pipefail
cd "$(dirname "$0")/.."

# Go 1.26.8 ships known vulnerabilities in net/http and crypto/tls; go1.27.3 fixes them.
export GOTOOLCHAIN=go1.27.3
export CGO_ENABLED=0

PROMETHEUS_VERSION=v0.316.0
# Prometheus's own version, in its VERSION file at that module version.
PROMETHEUS_RELEASE=3.16.0
TAGS="netgo remove_all_sd"
LDFLAGS="-X github.com/prometheus/common/version.Version=$PROMETHEUS_RELEASE -X github.com/prometheus/common/version.Revision=$PROMETHEUS_VERSION -X github.com/prometheus/common/version.Branch=module-proxy -X github.com/prometheus/common/version.BuildUser=webapp-operator"
STAMP="$PROMETHEUS_VERSION-$(echo "$TAGS $LDFLAGS" | sha256sum | cut -c1-12)"

BIN=$PWD/bin
source hack/lib.sh # CACHE, fresh, stamp, say, from_cache, to_cache
KEEP=$CACHE/prometheus-$PROMETHEUS_VERSION
mkdir -p "$BIN"

if fresh prometheus "$STAMP" || from_cache prometheus "$STAMP" "$KEEP"; then
  exit 0
fi

# The module's VERSION file must say what the -X flag claims.
dir=$(go mod download -json "github.com/prometheus/prometheus@$PROMETHEUS_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
[ "$(cat "$dir/VERSION")" = "$PROMETHEUS_RELEASE" ] ||
  { echo "prometheus: $PROMETHEUS_VERSION's VERSION file says $(cat "$dir/VERSION"), not $PROMETHEUS_RELEASE" >&2; exit 1; }
say "building prometheus $PROMETHEUS_VERSION ($PROMETHEUS_RELEASE, tags $TAGS) from the module proxy"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
GOBIN=$work go install -trimpath -tags "$TAGS" -ldflags "$LDFLAGS" \
  "github.com/prometheus/prometheus/cmd/prometheus@$PROMETHEUS_VERSION"
to_cache prometheus "$STAMP" "$KEEP" "$work/prometheus"
say "ready: $("$BIN/prometheus" --version | head -1)"

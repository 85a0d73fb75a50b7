#!/usr/bin/env bash
# Builds Traefik's server command into bin/traefik (git-ignored) from the Go module proxy, at the
# version hack/traefik/go.mod pins, for the canary's tests through a real Gateway. Nothing
# downloads a prebuilt binary. The binary is kept in a versioned cache outside the checkout,
# ${XDG_CACHE_HOME:-$HOME/.cache}/webapp-operator/traefik-<version>/, so that a fresh clone
# copies it instead of building it again; bin/traefik is reused while its stamp matches.
#
# Traefik does not build with `go install traefik@version` from the proxy alone, so:
#   - hack/traefik is a wrapper module: Traefik's replace and exclude directives apply only in the
#     main module, so they are copied there, with ./ext standing in for the nested module
#     github.com/traefik/traefik/dynamic/ext (which the proxy does not serve) and
#     github.com/abbot/go-http-auth held at the containous fork's commit of Traefik v3.6.x to
#     v3.7.9 (the proxy refuses v3.7.13's pin; see hack/traefik/go.mod);
#   - the proxy refuses the SDK modules of 13 of lego's ACME DNS providers (LEGO_DROP below), which
#     Traefik links through lego's provider registry. This script copies lego from the module
#     cache to a directory outside the checkout, edits that copy's
#     providers/dns/zz_gen_dns_providers.go so that the registry no longer imports them (naming
#     one of them gives an error instead), and builds with a copy of hack/traefik/go.mod (-modfile)
#     that replaces github.com/go-acme/lego/v5 with it. The committed wrapper stays as it is.
# ACME with one of those 13 DNS providers is therefore unavailable; nothing else is lost.
# The tests need no ACME DNS provider at all, so by default (TRAEFIK_LEGO_DNS unset) the copy's
# registry refuses every one of them, which spares the cold build 774 of its 2,484 packages (the
# providers' cloud SDKs); TRAEFIK_LEGO_DNS=all builds the registry with all but the 13.
#
# To move to another Traefik version: set it in hack/traefik/go.mod, copy its go.mod's replace
# and exclude directives, check LEGO_DROP against lego's go.mod, then refresh the wrapper with
#   TRAEFIK_TIDY=1 bash hack/traefik.sh
# which runs go mod tidy on the -modfile copy and writes go.mod (without the lego replace) and
# go.sum back to hack/traefik.
#
# First build: 22 CPU-minutes, so about 12 to 20 minutes on 2 idle cores; measured at 42 minutes
# under nice -n 19 beside other builds on 2 cores, with the modules already downloaded (about 2
# minutes more). Seconds once cached; a 160 MiB binary.
#
# For the next engineer, Traefik's Kubernetes Gateway provider (pkg/provider/kubernetes/gateway,
# struct Provider, checked in the module cache at v3.7.13; flag names are the lower-cased
# field names, docs/content/reference/install-configuration/configuration-options.md):
#   --providers.kubernetesgateway=true                     enables the provider
#   --providers.kubernetesgateway.endpoint=https://127.0.0.1:PORT   Endpoint, the apiserver
#   --providers.kubernetesgateway.token=/path/to/token     Token (types.FileOrContent: a file
#                                                          path or the token itself)
#   --providers.kubernetesgateway.certauthfilepath=/path/to/ca.crt  CertAuthFilePath
#   --providers.kubernetesgateway.experimentalchannel=true ExperimentalChannel (TCPRoute; needs
#                                                          the experimental-channel CRDs)
#   also: .namespaces, .labelselector (GatewayClasses), .throttleduration, .qps, .burst,
#   .statusaddress.ip|hostname|service.name|service.namespace, .nativelbbydefault.
# Endpoint, token and CA are used only when neither KUBERNETES_SERVICE_HOST and
# KUBERNETES_SERVICE_PORT (in-cluster client) nor KUBECONFIG is in Traefik's environment
# (Provider.newK8sClient): a test must clear them. The provider watches GatewayClasses,
# Gateways, HTTPRoutes, GRPCRoutes, TLSRoutes, BackendTLSPolicies (v1), ReferenceGrants (v1beta1),
# plus Namespaces, Services, EndpointSlices, ConfigMaps and Secrets, so the cluster needs
# sigs.k8s.io/gateway-api's CRDs at Traefik's version (v1.6.1 for v3.7.13, its go.mod) and RBAC
# for all of them. Backends are resolved through EndpointSlices to pod IPs unless the service
# carries Traefik's nativeLB annotation or .nativelbbydefault=true is set.
set -euo pipefail
cd "$(dirname "$0")/.."

# Go 1.26.8 ships known vulnerabilities in net/http and crypto/tls; go1.27.3 fixes them.
export GOTOOLCHAIN=go1.27.3
export CGO_ENABLED=0

TRAEFIK_VERSION=$(awk '$1 == "require" && $2 == "github.com/traefik/traefik/v3" {print $3}' hack/traefik/go.mod)
# lego's ACME DNS providers whose SDKs the module proxy refuses (403 "This module version is not
# available"), directory names under lego's providers/dns.
LEGO_DROP="alidns aliesa azion dnsimple edgedns edgeone huaweicloud oraclecloud regfish sakuracloud tencentcloud ucloud yandexcloud"
# What naming one of them (e.g. --certificatesresolvers.X.acme.dnschallenge.provider=alidns) gives.
LEGO_REFUSAL="DNS provider %s is not in this build: the Go module proxy does not serve its SDK"
LDFLAGS="-s -w -X github.com/traefik/traefik/v3/pkg/version.Version=$TRAEFIK_VERSION -X github.com/traefik/traefik/v3/pkg/version.Codename=cheddar"
# The stamp names the version and everything else that makes the binary: the wrapper, lego's edit
# and the link flags.
# none (the default): no ACME DNS provider at all; all: every one but LEGO_DROP.
LEGO_DNS=${TRAEFIK_LEGO_DNS:-none}
case $LEGO_DNS in none | all) ;; *) echo "traefik: TRAEFIK_LEGO_DNS=$LEGO_DNS; want none or all" >&2; exit 2 ;; esac
STAMP="$TRAEFIK_VERSION-$( (cat hack/traefik/go.mod hack/traefik/go.sum hack/traefik/ext/go.mod hack/traefik/ext/ext.go; echo "$LEGO_DROP $LEGO_REFUSAL $LEGO_DNS $LDFLAGS") | sha256sum | cut -c1-12)"

BIN=$PWD/bin
source hack/lib.sh # CACHE, fresh, stamp, say, from_cache, to_cache
KEEP=$CACHE/traefik-$TRAEFIK_VERSION
mkdir -p "$BIN"

if [ -z "${TRAEFIK_TIDY:-}" ] && { fresh traefik "$STAMP" || from_cache traefik "$STAMP" "$KEEP"; }; then
  exit 0
fi

# lego at the version Traefik requires, from the module cache, with the refused providers taken
# out of its registry; the directory is named by what went into it, so a copy is never changed
# under a build that reads it.
TRAEFIK_DIR=$(go mod download -json "github.com/traefik/traefik/v3@$TRAEFIK_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
LEGO_VERSION=$(awk '$1 == "github.com/go-acme/lego/v5" {print $2}' "$TRAEFIK_DIR/go.mod")
LEGO_DIR=$(go mod download -json "github.com/go-acme/lego/v5@$LEGO_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
LEGO=$CACHE/src/lego-$LEGO_VERSION-$(echo "$LEGO_DROP $LEGO_REFUSAL $LEGO_DNS" | sha256sum | cut -c1-12)
if [ ! -f "$LEGO/.complete" ]; then
  say "copying lego $LEGO_VERSION to $LEGO without the DNS providers $LEGO_DROP (TRAEFIK_LEGO_DNS=$LEGO_DNS)"
  mkdir -p "$CACHE/src"
  tmp=$(mktemp -d "$CACHE/src/.lego.XXXXXX") && chmod 755 "$tmp"
  trap 'rm -rf "$tmp"' EXIT
  cp -R "$LEGO_DIR/." "$tmp" && chmod -R u+w "$tmp"
  registry=$tmp/providers/dns/zz_gen_dns_providers.go
  re=$(echo "$LEGO_DROP" | tr ' ' '|')
  sed -i -E -e "/^\t\"github.com\/go-acme\/lego\/v5\/providers\/dns\/($re)\"\$/d" \
    -e "s/^(\t\treturn) ($re)\.NewDNSProvider\(\)\$/\1 nil, fmt.Errorf(\"$LEGO_REFUSAL\", name)/" "$registry"
  # Check the edit: every dropped provider gone from the imports, as many returns replaced.
  for p in $LEGO_DROP; do
    if grep -q "providers/dns/$p\"" "$registry" || grep -q "^		return $p\.NewDNSProvider()" "$registry"; then
      echo "traefik: could not drop lego's DNS provider $p from $registry" >&2; exit 1
    fi
  done
  [ "$(grep -cF "$LEGO_REFUSAL" "$registry")" = "$(echo "$LEGO_DROP" | wc -w)" ] ||
    { echo "traefik: lego's registry $registry did not take the edit as expected" >&2; exit 1; }
  # Its test names every provider; nothing builds it.
  rm -f "$tmp/providers/dns/dns_providers_test.go"
  if [ "$LEGO_DNS" = none ]; then # the registry's one function, refusing every name
    cat > "$registry" <<'GO'
// Code written by hack/traefik.sh: this build of lego has no ACME DNS provider.

package dns

import (
	"fmt"

	"github.com/go-acme/lego/v5/challenge"
)

// NewDNSChallengeProviderByName refuses every name: this build has no ACME DNS provider.
func NewDNSChallengeProviderByName(name string) (challenge.Provider, error) {
	return nil, fmt.Errorf("DNS provider %s is not in this build of Traefik (hack/traefik.sh, TRAEFIK_LEGO_DNS=all to have them)", name)
}
GO
  fi
  touch "$tmp/.complete"
  rm -rf "$LEGO" && mv "$tmp" "$LEGO"
  trap - EXIT
fi

# The wrapper's go.mod and go.sum, copied and given the lego replace, for -modfile.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp hack/traefik/go.mod "$work/traefik.mod"
cp hack/traefik/go.sum "$work/traefik.sum"
go mod edit -replace "github.com/go-acme/lego/v5=$LEGO" "$work/traefik.mod"

if [ -n "${TRAEFIK_TIDY:-}" ]; then
  say "tidying hack/traefik with lego replaced by $LEGO"
  (cd hack/traefik && go mod tidy -modfile="$work/traefik.mod")
  go mod edit -dropreplace github.com/go-acme/lego/v5 "$work/traefik.mod"
  cp "$work/traefik.mod" hack/traefik/go.mod
  cp "$work/traefik.sum" hack/traefik/go.sum
  say "hack/traefik/go.mod and go.sum rewritten; run without TRAEFIK_TIDY to build"
  exit 0
fi

say "building traefik $TRAEFIK_VERSION ($STAMP) from the module proxy"
(cd hack/traefik && go build -modfile="$work/traefik.mod" -trimpath -ldflags "$LDFLAGS" \
  -o "$work/traefik" github.com/traefik/traefik/v3/cmd/traefik)
to_cache traefik "$STAMP" "$KEEP" "$work/traefik"
say "ready: $("$BIN/traefik" version | tr -s ' \n' ' ')"

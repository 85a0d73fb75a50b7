#!/usr/bin/env bash
# Runs govulncheck offline: the vulnerability database is built from the golang.org/x/vulndb
# module (its data/osv reports, indexed by its cmd/indexdb) into the git-ignored bin/vulndb, and
# reused while the pinned version stays the same. Exits non-zero when a vulnerability reaches
# the code.
set -euo pipefail
cd "$(dirname "$0")/.."

# Go 1.26.8 ships known vulnerabilities in net/http and crypto/tls; go1.27.3 fixes them, and
# govulncheck judges the standard library of the Go that runs it.
export GOTOOLCHAIN=go1.27.3

VULNDB_VERSION=v0.0.0-20261105234957-e22db6528018
GOVULNCHECK_VERSION=v1.9.0
db=$PWD/bin/vulndb

if [ "$(cat "$db/.version" 2>/dev/null)" != "$VULNDB_VERSION" ]; then
  echo "govulncheck: building the vulnerability database from golang.org/x/vulndb@$VULNDB_VERSION" >&2
  src=$(go mod download -json "golang.org/x/vulndb@$VULNDB_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  rm -rf "$db"
  go run "golang.org/x/vulndb/cmd/indexdb@$VULNDB_VERSION" -vulns "$src/data/osv" -out "$db"
  echo "$VULNDB_VERSION" > "$db/.version"
fi
go run "golang.org/x/vuln/cmd/govulncheck@$GOVULNCHECK_VERSION" -db "file://$db" ./...
# The image builder, a module of its own: what builds the image must be sound too.
go run -C hack/image "golang.org/x/vuln/cmd/govulncheck@$GOVULNCHECK_VERSION" -db "file://$db" ./...
# The notifier (cmd/webapp-notifier), a module of its own: notifications-engine and its services.
go run -C cmd/webapp-notifier "golang.org/x/vuln/cmd/govulncheck@$GOVULNCHECK_VERSION" -db "file://$db" ./...
# The real node's test app, images and registry (hack/node), a module of its own too.
go run -C hack/node "golang.org/x/vuln/cmd/govulncheck@$GOVULNCHECK_VERSION" -db "file://$db" ./...

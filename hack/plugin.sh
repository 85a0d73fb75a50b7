#!/usr/bin/env bash
# make plugin: kubectl-webapp for linux, darwin and windows on amd64 and arm64, each in a tar.gz
# archive in bin/plugin/ (Krew takes tar.gz for every platform, the .exe inside for windows), the
# archives' sha256 in bin/plugin/sha256sums.txt, and the Krew manifest plugins/webapp.yaml filled
# from plugins/webapp.yaml.tmpl with the version, the release URL and those sums.
#
# One commit always gives the same bytes: CGO off, -trimpath, no build ID, no VCS stamp but
# PLUGIN_VERSION (-X main.version), and archives with a fixed owner, order and time (the
# commit's) compressed without a name or time.
set -euo pipefail
cd "$(dirname "$0")/.."

version=${PLUGIN_VERSION:?PLUGIN_VERSION is v and a semantic version, e.g. v0.3.0}
url=${PLUGIN_URL:?PLUGIN_URL is where the archives are published}
out=bin/plugin
platforms=(linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64)
epoch=$(git log -1 --format=%ct 2>/dev/null || echo 0)

rm -rf "$out"
mkdir -p "$out"
fill=(-e "s|@VERSION@|$version|g" -e "s|@URL@|$url|g")
for platform in "${platforms[@]}"; do
	os=${platform%/*} arch=${platform#*/}
	exe=kubectl-webapp
	[ "$os" = windows ] && exe=kubectl-webapp.exe
	dir=$out/kubectl-webapp_${os}_${arch}
	archive=kubectl-webapp_${os}_${arch}.tar.gz
	start=$SECONDS
	CGO_ENABLED=0 GOOS=$os GOARCH=$arch go build -trimpath -buildvcs=false \
		-ldflags "-s -w -buildid= -X main.version=$version" -o "$dir/$exe" ./cmd/kubectl-webapp
	tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$epoch" -C "$dir" -cf - "$exe" |
		gzip -n -9 >"$out/$archive"
	sum=$(sha256sum "$out/$archive" | cut -d' ' -f1)
	echo "$sum  $archive" >>"$out/sha256sums.txt"
	fill+=(-e "s|@SHA256_${os}_${arch}@|$sum|g")
	echo "plugin: $archive $sum ($((SECONDS - start)) s)"
done
sed "${fill[@]}" plugins/webapp.yaml.tmpl >plugins/webapp.yaml
echo "plugin: plugins/webapp.yaml $version, archives at $url"

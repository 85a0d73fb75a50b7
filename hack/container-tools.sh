#!/usr/bin/env bash
# Installs from Debian, when missing, what runs and moves the hook's image with no Docker engine:
# runc (the OCI runtime), umoci (unpacks an OCI image into a runtime bundle) and skopeo (reads,
# copies and pushes OCI archives). `make image-test` needs all three, `make image-push` skopeo:
#   hack/container-tools.sh [runc] [umoci] [skopeo]     (none named: all three)
# sudo only when not root. Prints the versions in force.
set -euo pipefail

tools=("$@")
[ ${#tools[@]} -gt 0 ] || tools=(runc umoci skopeo)
need=()
for pkg in "${tools[@]}"; do
  case "$pkg" in runc|umoci|skopeo) ;; *) echo "container-tools: unknown tool $pkg" >&2; exit 2 ;; esac
  command -v "$pkg" > /dev/null || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
  echo "container-tools: installing ${need[*]} from Debian" >&2
  sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get update -qq
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" > /dev/null
fi
for pkg in "${tools[@]}"; do
  case "$pkg" in
    runc) echo "container-tools: $(runc --version | head -1)" >&2 ;;
    umoci) echo "container-tools: umoci $(umoci --version | awk '{print $NF}')" >&2 ;;
    skopeo) echo "container-tools: $(skopeo --version)" >&2 ;;
  esac
done

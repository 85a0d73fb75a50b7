#!/usr/bin/env bash
# What a caller can cost the hook: peak RSS for a malformed 14 MB body, and the wait of an
# ordinary /sync behind four clients that trickle their bodies (bench/limits/main.go says how).
#
#   bench/limits.sh              the hook built from this checkout
#   bench/limits.sh DIR          the hook built from another checkout of the project, for
#                                example `git worktree add /tmp/before HEAD` for the figures
#                                before a change; the measurement is this checkout's either way
#
# The hook runs with the environment its Deployment sets (GOMEMLIMIT), as bench/load.sh does.
# It takes about a minute: the slow clients are cut off by the hook's own timeouts.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh

src=${1:-.}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$src" && build_hook "$work/webapp-hook")
read -ra hook_env <<< "$(deployed_env | tr '\n' ' ')"
echo "hook built from $(cd "$src" && pwd) ($(cd "$src" && git rev-parse --short HEAD)$(cd "$src" && git diff --quiet HEAD -- . 2>/dev/null || echo ", modified")), environment: ${hook_env[*]:-none}"
go run ./bench/limits -hook "$work/webapp-hook" "${hook_env[@]}"

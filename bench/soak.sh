#!/usr/bin/env bash
# Soak: drives webapp-hook, with the environment its Deployment sets, at full load (wrk, 16
# connections, every request different so that the answer cache fills and churns) for DURATION after a WARMUP, and compares its resident memory at the
# start and at the end. Fails when memory grew more than 10% or any request failed.
#
#   bench/soak.sh [REQUEST.json]       DURATION=60s WARMUP=10s CONNS=16 bench/soak.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh

BODY=${1:-$default_body}
DURATION=${DURATION:-60s}
WARMUP=${WARMUP:-10s}
CONNS=${CONNS:-16}


work=$(mktemp -d)
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

build_hook "$work/webapp-hook"
addr=$(free_addr)
read -ra hook_env <<< "$(deployed_env | tr '\n' ' ')"
env "${hook_env[@]}" "$work/webapp-hook" --addr "$addr" --metrics-addr= --log-level warn 2> "$work/hook.err" &
pid=$!
for _ in $(seq 100); do curl -s -o /dev/null "http://$addr/healthz" && break; sleep 0.05; done

{ post_lua "$BODY" vary; cat <<'LUA'; } > "$work/post.lua"
done = function(summary, latency, requests)
  io.write(string.format("RESULT %d %.1f %d %d\n", summary.requests,
    summary.requests / (summary.duration / 1e6),
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    summary.errors.status))
end
LUA

rss() { awk '/VmRSS/ {printf "%.1f", $2 / 1024}' "/proc/$pid/status"; }
NONCE_RUN=warmup wrk -t2 -c"$CONNS" -d"$WARMUP" -s "$work/post.lua" "http://$addr/sync" > /dev/null
start=$(rss)
result=$(NONCE_RUN=run wrk -t2 -c"$CONNS" -d"$DURATION" -s "$work/post.lua" "http://$addr/sync" | grep '^RESULT')
end=$(rss)
peak=$(awk '/VmHWM/ {printf "%.1f", $2 / 1024}' "/proc/$pid/status")
read -r _ requests rate errors non2xx <<< "$result"

echo "soak: $BODY, $CONNS connections, every request different, $DURATION after $WARMUP warm-up"
echo "requests $requests ($rate/s), errors $errors, non-2xx $non2xx"
awk -v s="$start" -v e="$end" -v p="$peak" -v errs="$((errors + non2xx))" 'BEGIN {
  growth = 100 * (e - s) / s
  printf "RSS at start %.1f MiB, at end %.1f MiB, growth %.1f%% (target <= 10%%), peak %.1f MiB\n", s, e, growth, p
  ok = growth <= 10 && errs == 0
  print (ok ? "soak: passed" : "soak: FAILED")
  exit ok ? 0 : 1
}'

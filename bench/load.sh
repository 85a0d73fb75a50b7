#!/usr/bin/env bash
# Load benchmark: webapp-hook against a "limit" server that only reads the body and answers a
# fixed 60-byte JSON, the physical limit of an HTTP hook here. Both are built and driven in one run
# with the same load (wrk, from Debian's packages), so their ratio is what to read: absolute
# figures move between runs on shared machines.
#
#   bench/load.sh [REQUEST.json]     default: ../shared's 10.7 KB Metacontroller request when
#                                    present, else webhook/testdata/large.request.json
#   CONNS=16 THREADS=2 DURATION=10s WARMUP=2s bench/load.sh
#   VARY=1 bench/load.sh             every request different (a "nonce" member is added), so the
#                                    hook's answer cache never helps: the cost of deciding each time
#
# The hook runs with the environment its Deployment sets (GOMEMLIMIT and the like, read from
# metacontroller/base/hook.yaml), so that memory is measured as deployed.
#
# Prints req/s, p50, p99, errors (socket errors and non-2xx answers) and peak RSS for each, then
# the ratios, and exits non-zero when a target is missed. The same request again and again:
# throughput >= 50% of the limit's, p99 <= 2x the limit's, peak RSS <= 22 MiB. Every request
# different: throughput >= 15% of the limit's, peak RSS <= 24 MiB. No errors in either.
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/lib.sh

BODY=${1:-$default_body}
CONNS=${CONNS:-16}
THREADS=${THREADS:-2}
DURATION=${DURATION:-10s}
WARMUP=${WARMUP:-2s}


work=$(mktemp -d)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# The limit server: the least an HTTP hook can do.
mkdir -p "$work/limit"
cat > "$work/limit/main.go" <<'GO'
package main

import (
	"io"
	"net"
	"net/http"
	"os"
)

var answer = []byte(`{"status":{"phase":"Ready","ready":true},"children":[]}` + "\n\n\n\n\n")

func main() {
	ln, err := net.Listen("tcp", os.Args[1])
	if err != nil {
		panic(err)
	}
	http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Write(answer)
	}))
}
GO
printf 'module limit\n\ngo 1.26\n' > "$work/limit/go.mod"
(cd "$work/limit" && CGO_ENABLED=0 go build -o "$work/limit-server" .)
build_hook "$work/webapp-hook"

{ post_lua "$BODY" "${VARY:-}"; cat <<'LUA'; } > "$work/post.lua"
done = function(summary, latency, requests)
  io.write(string.format("RESULT %.1f %.3f %.3f %d %d\n",
    summary.requests / (summary.duration / 1e6),
    latency:percentile(50) / 1000, latency:percentile(99) / 1000,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    summary.errors.status))
end
LUA

# run NAME CMD...: start a server on a free port (ADDR in CMD is replaced), check one answer,
# load it, print one line.
run() {
  local name=$1; shift
  local addr
  addr=$(free_addr)
  "${@/ADDR/$addr}" > "$work/$name.out" 2> "$work/$name.err" &
  local pid=$!
  pids+=("$pid")
  for _ in $(seq 100); do
    curl -s -o /dev/null "http://$addr/" && break
    sleep 0.05
  done
  local code
  code=$(curl -s -o /dev/null -w '%{http_code}' --data-binary @"$BODY" -H 'Content-Type: application/json' "http://$addr/sync")
  [ "$code" = 200 ] || { echo "$name answered $code to the request" >&2; exit 1; }
  NONCE_RUN=warmup wrk -t"$THREADS" -c"$CONNS" -d"$WARMUP" -s "$work/post.lua" "http://$addr/sync" > /dev/null
  local result
  result=$(NONCE_RUN=run wrk -t"$THREADS" -c"$CONNS" -d"$DURATION" --latency -s "$work/post.lua" "http://$addr/sync" | grep '^RESULT')
  local rss
  rss=$(awk '/VmHWM/ {printf "%.1f", $2 / 1024}' "/proc/$pid/status")
  kill "$pid"
  echo "$name ${result#RESULT } $rss"
}

read -ra hook_env <<< "$(deployed_env | tr '\n' ' ')"
echo "request: $BODY ($(wc -c < "$BODY") bytes), $CONNS connections, $THREADS wrk threads, $DURATION after $WARMUP warm-up, $(nproc) cores, $([ -n "${VARY:-}" ] && echo "every request different" || echo "the same request again and again"); hook environment as deployed: ${hook_env[*]:-none}"
limit=$(run limit "$work/limit-server" ADDR)
hook=$(run webapp-hook env "${hook_env[@]}" "$work/webapp-hook" --addr ADDR --metrics-addr= ${HOOK_ARGS:-})

awk -v limit="$limit" -v hook="$hook" -v vary="${VARY:-}" 'BEGIN {
  split(limit, l, " "); split(hook, h, " ")
  printf "%-12s %10s %9s %9s %7s %9s %10s\n", "server", "req/s", "p50 ms", "p99 ms", "errors", "non-2xx", "peak MiB"
  printf "%-12s %10.0f %9.3f %9.3f %7d %9d %10.1f\n", l[1], l[2], l[3], l[4], l[5], l[6], l[7]
  printf "%-12s %10.0f %9.3f %9.3f %7d %9d %10.1f\n", h[1], h[2], h[3], h[4], h[5], h[6], h[7]
  thr = h[2] / l[2]; p99 = h[4] / l[4]; errors = h[5] + h[6]
  if (vary != "") {
    printf "throughput ratio %.0f%% (target >= 15%%), p99 ratio %.2fx (no target), peak RSS %.1f MiB (target <= 24), errors %d\n", 100 * thr, p99, h[7], errors
    ok = thr >= 0.15 && h[7] <= 24 && errors == 0
  } else {
    printf "throughput ratio %.0f%% (target >= 50%%), p99 ratio %.2fx (target <= 2x), peak RSS %.1f MiB (target <= 22), errors %d\n", 100 * thr, p99, h[7], errors
    ok = thr >= 0.50 && p99 <= 2 && h[7] <= 22 && errors == 0
  }
  print (ok ? "targets: all met" : "targets: NOT met")
  exit ok ? 0 : 1
}'

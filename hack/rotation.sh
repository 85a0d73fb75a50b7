# Shared by hack/rotate-token.sh and hack/rotate-ca.sh; source it, do not run it.
#
# Metacontroller reads a webhook's authorization, basicAuth, clientTLS and caBundle Secrets once,
# when it starts a controller: at its own start, and when a CompositeController's spec changes
# (reconcileCompositeController in pkg/controller/composite/metacontroller.go returns early while
# apiequality.Semantic.DeepEqual(cc.Spec, running.Spec)). Annotations and labels are not compared,
# so touching them does nothing. These functions make it read them again through a spec change
# that changes no behaviour, and prove that it did by the hook's metrics. docs/security.md tells why.
#
# Settings, from the environment:
#   KUBECTL         kubectl command (kubectl); KUBECONFIG and the current context apply
#   NAMESPACE       namespace of the hook and its Secrets (webapp-system)
#   CONTROLLER      the CompositeController (webapp-controller)
#   TOKEN_SECRET    Secret Metacontroller sends the token from, key "token" (webapp-hook-token)
#   TOKENS_SECRET   Secret of the tokens the hook accepts, key "tokens" (webapp-hook-tokens)
#   TLS_SECRET      Secret of the hook's tls.crt and tls.key, and of the ca.crt Metacontroller
#                   trusts (webapp-hook-tls)
#   HOOK_SELECTOR   label selector of the hook's pods (app.kubernetes.io/name=webapp-hook)
#   HOOK_METRICS_URLS  space-separated metrics URLs of the hook replicas, read with curl, instead
#                   of each Running pod's "metrics" port through the apiserver's pod proxy
#   NONCE_HOOK      the hook whose etag.cacheTimeoutSeconds carries the spec change (customize)
#   STEP_TIMEOUT    seconds each waiting step may take (300; the kubelet refreshes a mounted
#                   Secret within about a minute and a half)
#   POLL_SECONDS    seconds between two looks (2)
set -euo pipefail

KUBECTL=${KUBECTL:-kubectl}
NAMESPACE=${NAMESPACE:-webapp-system}
CONTROLLER=${CONTROLLER:-webapp-controller}
TOKEN_SECRET=${TOKEN_SECRET:-webapp-hook-token}
TOKENS_SECRET=${TOKENS_SECRET:-webapp-hook-tokens}
TLS_SECRET=${TLS_SECRET:-webapp-hook-tls}
HOOK_SELECTOR=${HOOK_SELECTOR:-app.kubernetes.io/name=webapp-hook}
HOOK_METRICS_URLS=${HOOK_METRICS_URLS:-}
NONCE_HOOK=${NONCE_HOOK:-customize}
STEP_TIMEOUT=${STEP_TIMEOUT:-300}
POLL_SECONDS=${POLL_SECONDS:-2}
SCRIPT=${SCRIPT:-rotation}

# The key of webhook.Fingerprint; it is not a secret.
FINGERPRINT_KEY="webapp-hook token fingerprint v1"

# Secret values pass through files in this directory, never through a command line.
WORK=$(mktemp -d)
chmod 700 "$WORK"
trap 'rm -rf "$WORK"' EXIT

say() { printf '%s %s: %s\n' "$(date +%T)" "$SCRIPT" "$*" >&2; }

# fail MESSAGE...: stop with a message on stderr and exit status 1.
fail() {
  printf '%s %s: FAILED: %s\n' "$(date +%T)" "$SCRIPT" "$*" >&2
  exit 1
}

k() { "$KUBECTL" "$@"; }

# fingerprint: the fingerprint of the token on stdin, as the hook computes it (webhook.Fingerprint).
fingerprint() {
  local token
  token=$(cat)
  token=$(printf '%s' "$token" | sed -e 's/^[[:space:]]*//' -e 's/[[:space:]]*$//')
  printf '%s' "$token" | openssl dgst -sha256 -hmac "$FINGERPRINT_KEY" -r | cut -c1-12
}

# secret_read NAME KEY FILE: write the value of KEY in Secret NAME to FILE.
secret_read() {
  local b64
  b64=$(k -n "$NAMESPACE" get secret "$1" -o go-template="{{index .data \"$2\"}}") ||
    fail "cannot read Secret $NAMESPACE/$1"
  [ -n "$b64" ] && [ "$b64" != "<no value>" ] || fail "Secret $NAMESPACE/$1 has no key $2"
  printf '%s' "$b64" | base64 -d > "$3"
}

# secret_write NAME KEY FILE [KEY FILE...]: set the keys of Secret NAME to the files' bytes.
secret_write() {
  local name=$1 patch="$WORK/patch.json" sep=""
  shift
  {
    printf '{"data":{'
    while [ $# -gt 0 ]; do
      printf '%s"%s":"%s"' "$sep" "$1" "$(base64 -w0 < "$2")"
      sep=","
      shift 2
    done
    printf '}}'
  } > "$patch"
  k -n "$NAMESPACE" patch secret "$name" --type=merge --patch-file "$patch" > /dev/null ||
    fail "cannot update Secret $NAMESPACE/$name"
  rm -f "$patch"
}

# hook_sources: one line per hook replica, "url URL" or "pod NAME PORT".
hook_sources() {
  if [ -n "$HOOK_METRICS_URLS" ]; then
    local url
    for url in $HOOK_METRICS_URLS; do echo "url $url"; done
    return
  fi
  k -n "$NAMESPACE" get pods -l "$HOOK_SELECTOR" --field-selector=status.phase=Running -o go-template='
{{- range .items}}{{if not .metadata.deletionTimestamp}}pod {{.metadata.name}}
{{- range .spec.containers}}{{range .ports}}{{if eq .name "metrics"}} {{.containerPort}}{{end}}{{end}}{{end}}
{{end}}{{end}}'
}

# scrape KIND NAME [PORT]: the replica's metrics, in the Prometheus text format.
scrape() {
  case $1 in
    url) curl -fsS --max-time 10 "$2" ;;
    pod)
      [ -n "${3:-}" ] || { echo "pod $2 has no container port named metrics" >&2; return 1; }
      k get --raw "/api/v1/namespaces/$NAMESPACE/pods/$2:$3/proxy/metrics"
      ;;
  esac
}

# metric TEXT SERIES: the value of SERIES (name and labels, exactly) in TEXT; empty when absent.
metric() { printf '%s\n' "$1" | awk -v s="$2" '$1 == s {print $2; exit}'; }

# replica_name KIND NAME [PORT]: how messages name a replica: pod/NAME, or its URL.
replica_name() { if [ "$1" = pod ]; then echo "pod/$2"; else echo "$2"; fi; }

# every_replica CHECK ARGS...: true when there is a replica and CHECK METRICS ARGS... holds for
# each one's metrics. The replicas that fail are left in $LAGGING for messages.
LAGGING=""
every_replica() {
  local check=$1 sources line text n=0
  shift
  LAGGING=""
  sources=$(hook_sources) || { LAGGING="(cannot list the hook's pods)"; return 1; }
  while read -r line; do
    [ -n "$line" ] || continue
    n=$((n + 1))
    # shellcheck disable=SC2086 # the words of $line are scrape's arguments
    if ! text=$(scrape $line < /dev/null 2>"$WORK/scrape.err"); then
      LAGGING="$LAGGING $(replica_name $line) (metrics unreadable: $(head -c 200 "$WORK/scrape.err"))"
      continue
    fi
    "$check" "$text" "$@" || LAGGING="$LAGGING $(replica_name $line)"
  done <<< "$sources"
  [ "$n" -gt 0 ] || { LAGGING="(no Running pod matches $HOOK_SELECTOR in $NAMESPACE)"; return 1; }
  [ -z "$LAGGING" ]
}

# sum_replicas SERIES: the sum of SERIES over the replicas that answer.
sum_replicas() {
  local sources line text v total=0
  sources=$(hook_sources) || { echo 0; return; }
  while read -r line; do
    [ -n "$line" ] || continue
    # shellcheck disable=SC2086
    text=$(scrape $line < /dev/null 2>/dev/null) || continue
    v=$(metric "$text" "$1")
    [ -n "$v" ] && total=$(awk -v a="$total" -v b="$v" 'BEGIN {print a + b}')
  done <<< "$sources"
  echo "$total"
}

# wait_for WHAT HINT CONDITION ARGS...: poll CONDITION until it holds, or fail after STEP_TIMEOUT
# seconds with WHAT, the replicas still lagging, and HINT.
wait_for() {
  local what=$1 hint=$2 deadline=$((SECONDS + STEP_TIMEOUT))
  shift 2
  say "waiting until $what (at most ${STEP_TIMEOUT}s)"
  until "$@"; do
    if [ "$SECONDS" -ge "$deadline" ]; then
      fail "not done after ${STEP_TIMEOUT}s: $what.${LAGGING:+ Not yet:$LAGGING.} $hint"
    fi
    sleep "$POLL_SECONDS"
  done
}

lists_token() { [ "$(metric "$1" "webapp_hook_tokens{token=\"$2\"}")" = 1 ]; }
lacks_token() { [ -z "$(metric "$1" "webapp_hook_tokens{token=\"$2\"}")" ]; }
serves_certificate() { printf '%s\n' "$1" | grep -q "^webapp_hook_tls_certificate_expiry_timestamp_seconds{sha256=\"$2\"} "; }
calls_with() { [ "$(sum_replicas "webapp_hook_token_requests_total{token=\"$1\"}")" != 0 ]; }

# reload_metacontroller: make Metacontroller start the controller again, which reads every
# credential Secret of its webhooks anew, by changing its spec and nothing it does: the
# etag.cacheTimeoutSeconds of NONCE_HOOK, whose etag stays disabled (Metacontroller ignores the
# other etag fields then). A restart of Metacontroller's pod would do too, but it pauses every
# controller it runs and needs rights in its namespace; this touches only our CompositeController.
reload_metacontroller() {
  local tpl state enabled nonce generation
  tpl="{{.metadata.generation}} {{with .spec.hooks.$NONCE_HOOK}}{{with .webhook}}hook {{with .etag}}{{.enabled}} {{.cacheTimeoutSeconds}}{{end}}{{end}}{{end}}"
  state=$(k get compositecontroller "$CONTROLLER" -o go-template="$tpl") ||
    fail "cannot read CompositeController $CONTROLLER"
  read -r generation hook enabled nonce <<< "$state" || true
  [ "${hook:-}" = hook ] || fail "CompositeController $CONTROLLER has no $NONCE_HOOK webhook to carry the change; set NONCE_HOOK to one of its hooks whose etag is disabled"
  [ "${enabled:-}" != true ] || fail "the $NONCE_HOOK hook of $CONTROLLER has etag enabled, so its cacheTimeoutSeconds matters; set NONCE_HOOK to a hook whose etag is disabled"
  case ${nonce:-} in ''|'<no value>') nonce=0 ;; esac
  nonce=$((nonce + 1))
  printf '{"spec":{"hooks":{"%s":{"webhook":{"etag":{"enabled":false,"cacheTimeoutSeconds":%d}}}}}}' "$NONCE_HOOK" "$nonce" > "$WORK/nonce.json"
  k patch compositecontroller "$CONTROLLER" --type=merge --patch-file "$WORK/nonce.json" > /dev/null ||
    fail "cannot patch CompositeController $CONTROLLER"
  local now
  now=$(k get compositecontroller "$CONTROLLER" -o go-template='{{.metadata.generation}}')
  [ "$now" -gt "$generation" ] || fail "the spec of $CONTROLLER did not change (generation $generation); Metacontroller would not read its Secrets again"
  say "changed the spec of CompositeController $CONTROLLER (spec.hooks.$NONCE_HOOK.webhook.etag.cacheTimeoutSeconds=$nonce, generation $now): Metacontroller starts it again and reads its Secrets"
}

# rotate_token: put a new token in force with no failed call, then retire the old one. The new
# token is $NEW_TOKEN or 32 random bytes in hex.
rotate_token() {
  local old_fp new_fp
  secret_read "$TOKEN_SECRET" token "$WORK/old"
  old_fp=$(fingerprint < "$WORK/old")
  if [ -n "${NEW_TOKEN:-}" ]; then
    printf '%s' "$NEW_TOKEN" > "$WORK/new"
  else
    openssl rand -hex 32 | tr -d '\n' > "$WORK/new"
  fi
  new_fp=$(fingerprint < "$WORK/new")
  grep -q '[^[:space:]]' "$WORK/new" || fail "the new token is empty"
  [ "$new_fp" != "$old_fp" ] || fail "the new token is the token in use"
  say "rotating the token Metacontroller sends from $old_fp to $new_fp (fingerprints)"

  # 1. The hook accepts both.
  secret_read "$TOKENS_SECRET" tokens "$WORK/tokens"
  { cat "$WORK/tokens"; [ -z "$(tail -c1 "$WORK/tokens")" ] || echo; cat "$WORK/new"; echo; } > "$WORK/tokens.both"
  secret_write "$TOKENS_SECRET" tokens "$WORK/tokens.both"
  say "1/5 added $new_fp to $TOKENS_SECRET"
  wait_for "every hook replica accepts $new_fp" \
    "Nothing else changed: Metacontroller still sends $old_fp, which every replica accepts. Check that the pods mount $TOKENS_SECRET and read it (their log says \"tokens reloaded\"); to give up, remove $new_fp's line from $TOKENS_SECRET." \
    every_replica lists_token "$new_fp"

  # 2. Metacontroller's Secret holds the new token...
  secret_write "$TOKEN_SECRET" token "$WORK/new"
  say "2/5 put $new_fp in $TOKEN_SECRET"
  # 3. ...and Metacontroller reads it.
  reload_metacontroller
  say "3/5 asked Metacontroller to read its Secrets again"

  # 4. Calls carry it. The token is new, so any call with it comes from a client that read it.
  wait_for "the hook has answered a call carrying $new_fp" \
    "Both tokens stay accepted, so no call fails. Metacontroller has not called with the new token: is it running, did it log an error starting $CONTROLLER, and does a WebApp exist (with none, nothing calls the hook)? Run this again once it calls; the old token is retired only after that." \
    calls_with "$new_fp"
  say "4/5 the hook answers calls carrying $new_fp"

  # 5. Retire the old token, and only it.
  OLD="$(cat "$WORK/old")" awk '{t = $0; gsub(/^[ \t\r]+|[ \t\r]+$/, "", t); if (t != ENVIRON["OLD"]) print}' \
    "$WORK/tokens.both" > "$WORK/tokens.new"
  secret_write "$TOKENS_SECRET" tokens "$WORK/tokens.new"
  wait_for "no hook replica accepts $old_fp any more" \
    "$old_fp is gone from $TOKENS_SECRET and Metacontroller sends $new_fp; the replicas listed still accept the old token until they read the Secret." \
    every_replica lacks_token "$old_fp"
  say "5/5 retired $old_fp: Metacontroller sends $new_fp"
  ROTATED_FP=$new_fp
}

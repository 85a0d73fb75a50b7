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
#   NEW_TOKEN_FILE, NEW_TOKEN  the new token (rotate_token); random when neither is set
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
    local url urls
    read -ra urls <<< "$HOOK_METRICS_URLS"
    for url in "${urls[@]}"; do echo "url $url"; done
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
metric() { awk -v s="$2" '$1 == s {v = $2} END {print v}' <<< "$1"; }

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
    # shellcheck disable=SC2086 # the same words
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
serves_certificate() { grep -q "^webapp_hook_tls_certificate_expiry_timestamp_seconds{sha256=\"$2\"} " <<< "$1"; }
# calls_above FP COUNT: the replicas have counted more than COUNT calls carrying FP.
calls_above() { awk -v a="$(sum_replicas "webapp_hook_token_requests_total{token=\"$1\"}")" -v b="$2" 'BEGIN {exit !(a > b)}'; }

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
  now=$(k get compositecontroller "$CONTROLLER" -o go-template='{{.metadata.generation}}') ||
    fail "cannot read CompositeController $CONTROLLER after changing its spec"
  [ "${now:-0}" -gt "$generation" ] || fail "the spec of $CONTROLLER did not change (generation $generation); Metacontroller would not read its Secrets again"
  say "changed the spec of CompositeController $CONTROLLER (spec.hooks.$NONCE_HOOK.webhook.etag.cacheTimeoutSeconds=$nonce, generation $now): Metacontroller starts it again and reads its Secrets"
}

# trim: stdin without spaces around it, as Metacontroller and the hook trim a token.
trim() { sed -e '1s/^[[:space:]]*//' -e '$s/[[:space:]]*$//' | tr -d '\r'; }

# new_token FILE: write the new token to FILE: the content of $NEW_TOKEN_FILE, else $NEW_TOKEN,
# else 32 random bytes in hex; fail unless it is one line a token file can hold.
new_token() {
  if [ -n "${NEW_TOKEN_FILE:-}" ]; then
    trim < "$NEW_TOKEN_FILE" > "$1" || fail "cannot read NEW_TOKEN_FILE $NEW_TOKEN_FILE"
  elif [ -n "${NEW_TOKEN:-}" ]; then
    printf '%s' "$NEW_TOKEN" | trim > "$1"
  else
    openssl rand -hex 32 | tr -d '\n' > "$1"
  fi
  [ -s "$1" ] || fail "the new token is empty"
  [ "$(wc -l < "$1")" = 0 ] && ! grep -q '[[:space:]]' "$1" || fail "the new token holds spaces or a line break; the token file would read it as more than one token"
  [ "$(head -c1 "$1")" != "#" ] || fail "the new token starts with #; the token file would read it as a comment"
}

# rotate_token: put a new token in force with no failed call, then retire every other token from
# the accepted list. The new token comes from new_token.
rotate_token() {
  local old_fp new_fp others before
  secret_read "$TOKEN_SECRET" token "$WORK/old"
  old_fp=$(fingerprint < "$WORK/old")
  new_token "$WORK/new"
  new_fp=$(fingerprint < "$WORK/new")
  [ "$new_fp" != "$old_fp" ] || fail "the new token is the token in use"
  say "rotating the token Metacontroller sends from $old_fp to $new_fp (fingerprints)"
  every_replica lists_token "$old_fp" ||
    say "warning: not every hook replica accepts $old_fp, the token Metacontroller sends now:$LAGGING; its calls there fail already"

  # 1. The hook accepts both; the list keeps what it holds, the old token included.
  secret_read "$TOKENS_SECRET" tokens "$WORK/tokens"
  others=$(every_token_in "$WORK/tokens" | sort -u | grep -vx -e "$old_fp" -e "$new_fp" | tr '\n' ' ' || true)
  [ -z "$others" ] || say "$TOKENS_SECRET also lists ${others% }, left by a rotation that stopped or added by hand; step 5 retires them too"
  cp "$WORK/tokens" "$WORK/tokens.both"
  if ! every_token_in "$WORK/tokens" | grep -qx "$new_fp"; then
    { [ ! -s "$WORK/tokens" ] || [ -z "$(tail -c1 "$WORK/tokens")" ] || echo; cat "$WORK/new"; echo; } >> "$WORK/tokens.both"
    secret_write "$TOKENS_SECRET" tokens "$WORK/tokens.both"
  fi
  say "1/5 added $new_fp to $TOKENS_SECRET"
  local gave_up="Nothing else changed: Metacontroller still sends $old_fp, which every replica accepts. Check that the pods mount $TOKENS_SECRET and read it (their log says \"tokens reloaded\"). To give up, remove the last token line of $TOKENS_SECRET (it is $new_fp); or run this again: a new run retires it."
  wait_for "every hook replica accepts $new_fp" "$gave_up" every_replica lists_token "$new_fp"

  # 2. Metacontroller's Secret holds the new token...
  secret_write "$TOKEN_SECRET" token "$WORK/new"
  say "2/5 put $new_fp in $TOKEN_SECRET"
  # 3. ...and Metacontroller reads it. A replica that started meanwhile must accept it too.
  wait_for "every hook replica accepts $new_fp" "$gave_up" every_replica lists_token "$new_fp"
  before=$(sum_replicas "webapp_hook_token_requests_total{token=\"$new_fp\"}")
  reload_metacontroller
  say "3/5 asked Metacontroller to read its Secrets again"

  # 4. Calls carry it: more of them than before Metacontroller could read it.
  wait_for "the hook has answered a call carrying $new_fp" \
    "Both tokens stay accepted, so no call fails. Metacontroller has not called with the new token: is it running, did it log an error starting $CONTROLLER, and does a WebApp exist (with none, nothing calls the hook)? Run this again once it calls: a new run retires every token but its own." \
    calls_above "$new_fp" "$before"
  say "4/5 the hook answers calls carrying $new_fp"

  # 5. Retire every token but the new one; comments stay.
  wait_for "every hook replica accepts $new_fp" "Metacontroller sends $new_fp, and both tokens stay accepted." every_replica lists_token "$new_fp"
  awk 'NR == FNR {keep = $0; next}
    {t = $0; gsub(/^[ \t\r]+|[ \t\r]+$/, "", t); if (t ~ /^#/ || t == keep) print}' "$WORK/new" "$WORK/tokens.both" > "$WORK/tokens.new"
  secret_write "$TOKENS_SECRET" tokens "$WORK/tokens.new"
  wait_for "no hook replica accepts a token but $new_fp" \
    "Only $new_fp is left in $TOKENS_SECRET, and Metacontroller sends it; the replicas listed still accept older tokens until they read the Secret." \
    every_replica accepts_only "$new_fp"
  say "5/5 retired $old_fp${others:+ and ${others% }}: Metacontroller sends $new_fp, the only token the hook accepts"
}

# every_token_in FILE: the fingerprint of each token a token file lists.
every_token_in() {
  awk '{t = $0; gsub(/^[ \t\r]+|[ \t\r]+$/, "", t); if (t != "" && t !~ /^#/) print t}' "$1" |
    while read -r t; do printf "%s" "$t" | fingerprint; done
}

accepts_only() { [ "$(grep -c '^webapp_hook_tokens{' <<< "$1")" = 1 ] && lists_token "$1" "$2"; }

#!/usr/bin/env bash
# Moves the hook to a certificate from a new CA, with no failed call. Metacontroller checks the
# hook's certificate against the ca.crt of webapp-hook-tls, which it reads only when it starts the
# controller, so:
#   1. ca.crt becomes the old CA and the new one, and Metacontroller reads it (a token rotation,
#      hack/rotate-token.sh: calls carrying the new token prove it read its Secrets again);
#   2. tls.crt and tls.key become the new certificate, and every hook replica serves it;
#   3. ca.crt becomes the new CA alone, and Metacontroller reads it (another token rotation).
# A new certificate from the same CA needs none of this: the hook serves it within seconds.
#
#   CA_CERT=new-ca.crt TLS_CERT=tls.crt TLS_KEY=tls.key make rotate-ca
#
# CA_CERT is the new CA's certificate (PEM); TLS_CERT and TLS_KEY are the hook's new certificate,
# which CA_CERT signed, and its key. The other settings are listed in hack/rotation.sh.
set -euo pipefail
SCRIPT=rotate-ca
# shellcheck source=hack/rotation.sh disable=SC2034 # SCRIPT names the messages
. "$(dirname "$0")/rotation.sh"

# Each token rotation below makes a random token of its own.
unset NEW_TOKEN NEW_TOKEN_FILE

for v in CA_CERT TLS_CERT TLS_KEY; do
  [ -n "${!v:-}" ] || fail "set $v (see the top of $0)"
  [ -r "${!v}" ] || fail "$v: cannot read ${!v}"
done
openssl verify -CAfile "$CA_CERT" "$TLS_CERT" > "$WORK/verify" 2>&1 ||
  fail "$TLS_CERT is not signed by $CA_CERT: $(tr '\n' ' ' < "$WORK/verify")"
[ "$(openssl x509 -noout -pubkey -in "$TLS_CERT")" = "$(openssl pkey -pubout -in "$TLS_KEY" 2>/dev/null)" ] ||
  fail "$TLS_KEY is not the key of $TLS_CERT"
# The certificate must name the host Metacontroller calls.
url=$(k get compositecontroller "$CONTROLLER" -o go-template='{{with .spec.hooks.sync}}{{with .webhook}}{{.url}}{{end}}{{end}}') ||
  fail "cannot read CompositeController $CONTROLLER"
host=$(sed -E -e 's|^[a-zA-Z]+://||' -e 's|[:/].*$||' <<< "${url/<no value>/}")
if [ -n "$host" ]; then
  openssl x509 -noout -checkhost "$host" -in "$TLS_CERT" | grep -q 'does match' ||
    fail "$TLS_CERT does not name $host, the host of $CONTROLLER's sync URL"
fi

cert_sum() { openssl x509 -in "$1" -outform der 2> /dev/null | sha256sum | cut -c1-64; }
new_sum=$(cert_sum "$TLS_CERT")

# ca.crt becomes the old bundle, less any copy of the new CA that an earlier run, stopped, left
# in it, then the new CA.
secret_read "$TLS_SECRET" ca.crt "$WORK/ca.old"
secret_read "$TLS_SECRET" tls.crt "$WORK/tls.old"
new_ca_sum=$(cert_sum "$CA_CERT")
awk -v dir="$WORK" '
  /-----BEGIN CERTIFICATE-----/ {n++; f = sprintf("%s/old-ca.%03d.pem", dir, n); p = 1}
  p {print > f}
  /-----END CERTIFICATE-----/ {p = 0; close(f)}' "$WORK/ca.old"
: > "$WORK/ca.both"
for c in "$WORK"/old-ca.*.pem; do
  [ -e "$c" ] || fail "ca.crt of $TLS_SECRET holds no PEM certificate"
  openssl x509 -in "$c" -noout 2> /dev/null || fail "ca.crt of $TLS_SECRET holds a certificate openssl cannot read"
  [ "$(cert_sum "$c")" = "$new_ca_sum" ] || cat "$c" >> "$WORK/ca.both"
done
[ -s "$WORK/ca.both" ] ||
  fail "$CA_CERT is already the only CA in $TLS_SECRET; for a new certificate from it, just update tls.crt and tls.key"
cat "$CA_CERT" >> "$WORK/ca.both"
# Both certificates, the one served now and the new one, must verify against the bundle.
for c in "$WORK/tls.old" "$TLS_CERT"; do
  openssl verify -CAfile "$WORK/ca.both" "$c" > "$WORK/verify" 2>&1 ||
    fail "the bundle of the old and new CA does not verify $c: $(tr '\n' ' ' < "$WORK/verify"); nothing changed"
done

secret_write "$TLS_SECRET" ca.crt "$WORK/ca.both"
say "1/3 $TLS_SECRET ca.crt holds the old CA and the new one; Metacontroller must read it"
rotate_token

secret_write "$TLS_SECRET" tls.crt "$TLS_CERT" tls.key "$TLS_KEY"
say "2/3 put the new certificate (sha256 $new_sum) in $TLS_SECRET"
wait_for "every hook replica serves the new certificate" \
  "Metacontroller trusts both CAs, so calls go on with either certificate. Check that the pods mount $TLS_SECRET and read it (their log says \"TLS files reloaded\")." \
  every_replica serves_certificate "$new_sum"

secret_write "$TLS_SECRET" ca.crt "$CA_CERT"
say "3/3 $TLS_SECRET ca.crt holds the new CA alone; Metacontroller must read it"
rotate_token
say "done: the hook serves a certificate from the new CA, which alone Metacontroller trusts"

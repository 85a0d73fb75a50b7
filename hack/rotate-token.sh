#!/usr/bin/env bash
# Rotates the bearer token Metacontroller sends to the hook, with no failed call:
#   1. adds the new token to webapp-hook-tokens, and waits until every hook replica accepts it;
#   2. puts it in webapp-hook-token, the Secret Metacontroller reads;
#   3. changes the CompositeController's spec, and nothing it does, so that Metacontroller starts
#      it again and reads that Secret: it reads it at no other time;
#   4. waits until the hook has answered calls carrying the new token;
#   5. only then removes the old token from webapp-hook-tokens, with any other left there by a
#      rotation that stopped, so that the new token is the only one the hook accepts.
# Each step waits on the hook's metrics, by token fingerprint, never a fixed time, and stops with
# what it saw after STEP_TIMEOUT seconds. The new token is read from the file $NEW_TOKEN_FILE, or
# $NEW_TOKEN, or is 32 random bytes in hex; it never appears on a command line or in the output.
# Settings (namespace, Secret names, ...) are listed in hack/rotation.sh; docs/security.md explains.
#
#   make rotate-token            # or: hack/rotate-token.sh
set -euo pipefail
SCRIPT=rotate-token
# shellcheck source=hack/rotation.sh disable=SC2034 # SCRIPT names the messages
. "$(dirname "$0")/rotation.sh"

rotate_token
say "done"

# Shared by the scripts that build the project's tools into bin/ (sourced, never run): bin/NAME is
# reused while its stamp, bin/.NAME.version, names the version asked for, and a tool slow to build
# is also kept in a versioned cache outside the checkout, so that a fresh clone copies it.
# The sourcing script sets BIN, and CACHE when it keeps a tool there.

CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/webapp-operator

# say MESSAGE: a timestamped line on stderr, named after the script.
say() { printf '%s %s: %s\n' "$(date +%T)" "$(basename "$0" .sh)" "$*" >&2; }

# fresh NAME VERSION: true when bin/NAME exists and was built at VERSION.
fresh() { [ -x "$BIN/$1" ] && [ "$(cat "$BIN/.$1.version" 2>/dev/null)" = "$2" ]; }

# stamp NAME VERSION: bin/NAME is now VERSION's.
stamp() { echo "$2" > "$BIN/.$1.version"; }

# from_cache NAME VERSION KEEP: copies NAME from the cache folder KEEP into bin/ and stamps it,
# when KEEP holds it at VERSION; false otherwise.
from_cache() {
  local keep=$3
  [ -x "$keep/$1" ] && [ "$(cat "$keep/.version" 2>/dev/null)" = "$2" ] || return 1
  say "copying $1 $2 from $keep"
  cp "$keep/$1" "$BIN/$1.tmp" && mv "$BIN/$1.tmp" "$BIN/$1"
  stamp "$1" "$2"
}

# to_cache NAME VERSION KEEP FILE: keeps FILE as NAME at VERSION in the cache folder KEEP, and
# installs it as bin/NAME, stamped.
to_cache() {
  mkdir -p "$3"
  cp "$4" "$3/$1.tmp" && mv "$3/$1.tmp" "$3/$1"
  echo "$2" > "$3/.version"
  cp "$4" "$BIN/$1.tmp" && mv "$BIN/$1.tmp" "$BIN/$1"
  stamp "$1" "$2"
}

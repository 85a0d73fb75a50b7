# Shared by bench/load.sh and bench/soak.sh: the toolchain, the default request, wrk, free ports.
# Source it from the repository root.

# Go 1.26.8 ships known vulnerabilities in net/http and crypto/tls; go1.27.3 fixes them.
export GOTOOLCHAIN=go1.27.3

# default_body is Metacontroller's real 10.5 KB request for a Ready WebApp when ../shared is
# beside the checkout, else the recorded one in webhook/testdata.
default_body=webhook/testdata/large.request.json
shared_body=../shared/fixtures/metacontroller-4.17.2/v1/03-three-available.sync.json
[ -f "$shared_body" ] && default_body=$shared_body

if ! command -v wrk >/dev/null; then
  echo "installing wrk from Debian's packages" >&2
  apt-get update -qq && apt-get install -y -qq wrk >/dev/null
fi

# free_addr prints a free loopback address.
free_addr() {
  echo "127.0.0.1:$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
}

# deployed_env prints the environment variables the hook's Deployment sets
# (metacontroller/base/hook.yaml) as NAME=value words, so that benchmarks run the hook with the
# memory settings it ships with.
deployed_env() {
  awk '
    /^ *env:$/ { inenv = 1; indent = index($0, "e"); next }
    inenv && /^ *#/ { next }
    inenv && index($0, "-") != indent && index($0, "  ") < indent + 2 && $1 != "value:" { inenv = 0 }
    inenv && $1 == "-" && $2 == "name:" { name = $3 }
    inenv && $1 == "value:" { v = $2; gsub(/"/, "", v); print name "=" v }
  ' metacontroller/base/hook.yaml
}

# build_hook OUT builds webapp-hook as the Dockerfile does.
build_hook() {
  CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o "$1" ./cmd/webapp-hook
}

# post_lua BODY VARY prints the part of a wrk script shared by the benchmarks: POST BODY, and with
# VARY non-empty make every request different, across wrk's threads and runs too: each thread
# numbers its requests, and the nonce also names the thread and the run (NONCE_RUN).
post_lua() {
  cat <<LUA
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
local f = io.open("$(realpath "$1")", "rb")
wrk.body = f:read("*a")
f:close()
local vary = "$2" ~= ""
local rest = wrk.body:match("^%s*{(.*)$")
local threads = 0
function setup(thread)
  thread:set("tid", threads)
  threads = threads + 1
end
local run = os.getenv("NONCE_RUN") or ""
local counter = 0
request = function()
  if not vary then
    return wrk.format()
  end
  counter = counter + 1
  return wrk.format(nil, nil, nil, '{"nonce":"' .. run .. "-" .. tid .. "-" .. counter .. '",' .. rest)
end
LUA
}

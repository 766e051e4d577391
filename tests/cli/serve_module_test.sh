#!/usr/bin/env bash
# `ferrite serve` through its HTTP module (ctest: serve_module; cli/http_module.h).
#   serve_module_test.sh FERRITE MODEL
# The executable must not need cpp-httplib or libssl (the point of the
# module: every other command starts without them); `serve` must find the
# module, load it (every Ferrite symbol it uses bound to the executable's),
# answer /health and a greedy completion, and stop cleanly on SIGTERM; a
# module that is not one (FERRITE_HTTP_MODULE naming another library) must be
# refused with an error naming it and exit code 2, before any model work.
set -euo pipefail
ferrite="$1"
model="$2"
work="$(mktemp -d)"
server=""
cleanup() {
  if [[ -n "$server" ]] && kill -0 "$server" 2>/dev/null; then kill -KILL "$server" || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "serve_module_test: $*" >&2; [[ -f "$work/err" ]] && cat "$work/err" >&2; exit 1; }

needed="$(readelf -dW "$ferrite" | grep NEEDED || true)"
if grep -qE "libcpp-httplib|libssl|libbrotli|libz\." <<<"$needed"; then
  fail "the executable links what only the HTTP module needs: $needed"
fi

set +e
FERRITE_HTTP_MODULE=/nonexistent/ferrite-http.so "$ferrite" serve "$model" --port 0 2>"$work/missing"
rc=$?
set -e
[[ $rc == 2 ]] || fail "a missing module gave exit code $rc, expected 2"
grep -q "/nonexistent/ferrite-http.so: no such file" "$work/missing" ||
  fail "a missing module's error: $(cat "$work/missing")"

"$ferrite" serve "$model" --port 0 --parallel 2 2>"$work/err" &
server=$!
port=""
for _ in $(seq 1 600); do  # up to 60 s: the model is compiled first (slow under ASan)
  port="$(grep -oE 'http://127\.0\.0\.1:[0-9]+' "$work/err" | head -n 1 | sed 's/.*://')" || true
  [[ -n "$port" ]] && break
  kill -0 "$server" 2>/dev/null || fail "serve exited before listening"
  sleep 0.1
done
[[ -n "$port" ]] || fail "serve did not listen within 60 s"

python3 - "$port" <<'PY' || fail "requests failed"
import json, sys, urllib.request
port = sys.argv[1]
health = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=30))
assert health["status"] == "ok" and health["slots"] == 2, health
body = json.dumps({"prompt": "Once upon a time", "max_tokens": 6, "temperature": 0}).encode()
request = urllib.request.Request(f"http://127.0.0.1:{port}/v1/completions", data=body,
                                 headers={"Content-Type": "application/json"})
answer = json.load(urllib.request.urlopen(request, timeout=120))
assert answer["usage"]["completion_tokens"] == 6, answer
assert answer["choices"][0]["finish_reason"] == "length", answer
assert len(answer["choices"][0]["text"]) > 0, answer
print("serve_module_test: completion", json.dumps(answer["choices"][0]["text"]))
PY

kill -TERM "$server"
set +e
wait "$server"
rc=$?
set -e
server=""
[[ $rc == 0 ]] || fail "serve exited with $rc after SIGTERM"
grep -q "ferrite serve: stopped" "$work/err" || fail "no 'stopped' line"
echo "serve_module_test: ok"

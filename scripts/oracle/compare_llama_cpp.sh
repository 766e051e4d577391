#!/usr/bin/env bash
# Opt-in oracle: greedy tokens of Ferrite vs llama.cpp (the npm package
# node-llama-cpp, CPU build) on the stories260K model, for several prompts.
# Not a product dependency and not part of CI: it downloads node-llama-cpp
# into ${FERRITE_ORACLE_DIR:-$HOME/.cache/ferrite-oracle} on first use.
#
#   bash scripts/oracle/compare_llama_cpp.sh [STEPS]
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
models="$root/../shared/models"
steps="${1:-200}"
oracle="${FERRITE_ORACLE_DIR:-$HOME/.cache/ferrite-oracle}"
mkdir -p "$oracle"
if [ ! -d "$oracle/node_modules/node-llama-cpp" ]; then
  (cd "$oracle" && npm install node-llama-cpp@3 --no-audit --no-fund >/dev/null)
fi
cp "$root/scripts/oracle/llama_cpp_greedy.mjs" "$oracle/greedy.mjs"
ferrite="$root/build/ferrite"
status=0
for prompt in "Once upon a time" "Lily and Tom went to the park" "One day, a big bear found a ball"; do
  expected="$(cd "$oracle" && timeout 120 node greedy.mjs "$models/stories260K.gguf" "$prompt" "$steps" 2>/dev/null | sed -n 's/^tokens //p')"
  for model in "$models/stories260K.gguf" "$models/stories260K.bin --tokenizer $models/tok512.bin"; do
    # shellcheck disable=SC2086
    got="$("$ferrite" run $model --prompt "$prompt" --steps "$steps" --capacity 512 --print-ids 2>/dev/null | sed -n 's/^token ids: //p')"
    n="$(wc -w <<<"$expected")"
    got_n="$(tr ' ' '\n' <<<"$got" | head -n "$n" | tr '\n' ' ' | sed 's/ $//')"
    if [ "$got_n" = "$expected" ]; then
      echo "identical  $n tokens  $(basename "${model%% *}")  \"$prompt\""
    else
      echo "DIFFERENT  $(basename "${model%% *}")  \"$prompt\""
      echo "  llama.cpp: $expected"
      echo "  ferrite:   $got"
      status=1
    fi
  done
done
exit "$status"

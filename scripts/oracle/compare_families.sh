#!/usr/bin/env bash
# Opt-in oracle for the model families: a synthetic F32 GGUF per family
# (llama with Llama 3 rope factors and a tied classifier, a Mistral-like
# llama, qwen2, qwen3; written by the test binary from
# tests/support/synthetic_decoder.h), greedy ids from llama.cpp (the npm
# package node-llama-cpp, CPU build) and from `ferrite run --prompt-ids`, 48
# tokens on several id prompts, compared up to the first position where
# llama.cpp's own top-1 minus top-2 logit is below TOLERANCE (default 0.01):
# beyond such a near-tie either engine may legitimately choose the other.
# Not part of CI.
#
#   bash scripts/oracle/compare_families.sh [STEPS] [TOLERANCE]
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
steps="${1:-48}"
tolerance="${2:-0.01}"
oracle="${FERRITE_ORACLE_DIR:-$HOME/.cache/ferrite-oracle}"
mkdir -p "$oracle"
if [ ! -d "$oracle/node_modules/node-llama-cpp" ]; then
  (cd "$oracle" && npm install node-llama-cpp@3 --no-audit --no-fund >/dev/null)
fi
cp "$root/scripts/oracle/llama_cpp_greedy_ids.mjs" "$oracle/greedy_ids.mjs"
files="$(mktemp -d)"
trap 'rm -rf "$files"' EXIT
FERRITE_FAMILY_GGUF_DIR="$files" "$root/build/tests/ferrite_tests" \
  --gtest_filter='DecoderFamiliesTest.WritesTheOracleFiles' >/dev/null
ferrite="$root/build/ferrite"
status=0
for model in "$files"/*.gguf; do
  for prompt in "1 270 45 271 9" "1 260 261 262" "1 279 5 150 200 33 270"; do
    reply="$(cd "$oracle" && timeout 300 node greedy_ids.mjs "$model" "$prompt" "$steps" 2>/dev/null)"
    expected=($(sed -n 's/^tokens //p' <<<"$reply"))
    margins=($(sed -n 's/^margins //p' <<<"$reply"))
    got=($("$ferrite" run "$model" --prompt-ids "$prompt" --steps "$steps" --ignore-eos \
             --context 128 --print-ids 2>/dev/null | sed -n 's/^token ids: //p'))
    n=0
    while [ "$n" -lt "${#expected[@]}" ] && awk -v m="${margins[$n]}" -v t="$tolerance" 'BEGIN{exit !(m >= t)}'; do
      n=$((n + 1))
    done
    if [ "${#expected[@]}" -eq 0 ]; then
      echo "NO ORACLE  $(basename "$model")  [$prompt]"; status=1; continue
    fi
    if [ "${got[*]:0:$n}" = "${expected[*]:0:$n}" ]; then
      echo "identical  $n of ${#expected[@]} tokens (margin >= $tolerance)  $(basename "$model")  [$prompt]"
    else
      echo "DIFFERENT  $(basename "$model")  [$prompt]"
      echo "  llama.cpp: ${expected[*]}"
      echo "  margins:   ${margins[*]}"
      echo "  ferrite:   ${got[*]}"
      status=1
    fi
  done
done
exit "$status"

#!/usr/bin/env bash
# Opt-in oracle for the gemma3 room: the synthetic Gemma 3 GGUF of
# tests/families/gemma3_family_test.cc (7 layers, sliding window 4 on six of
# them, tied classifier; F32 and every matrix in Q8_0), llama.cpp
# (node-llama-cpp 3.22.1, CPU, K/V cached in F32) against Ferrite on three id
# prompts, STEPS tokens (default 48):
#   * free-running greedy ids: `ferrite run --prompt-ids` against llama.cpp's,
#     with llama.cpp's smallest top-1 margin (as compare_families.sh);
#   * teacher-forced: Ferrite fed llama.cpp's tokens, how many of its argmaxes
#     equal them, and the largest / mean difference of the log-probabilities
#     of llama.cpp's five most likely ids per step (cpu.fast and
#     cpu.reference), and of its top-1 minus top-2 margin;
#   * F32: the double-precision reference with the exact tanh GELU and with
#     llama.cpp's f16 GELU table emulated, against the same log-probabilities.
# Not part of CI.
#   bash scripts/oracle/compare_gemma3.sh [STEPS]
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${FERRITE_BUILD_DIR:-$root/build}"
steps="${1:-48}"
oracle="${FERRITE_ORACLE_DIR:-$HOME/.cache/ferrite-oracle}"
mkdir -p "$oracle"
if [ ! -d "$oracle/node_modules/node-llama-cpp" ]; then
  (cd "$oracle" && npm install node-llama-cpp@3.22.1 --no-audit --no-fund >/dev/null)
fi
cp "$root/scripts/oracle/llama_cpp_greedy_top.mjs" "$oracle/gemma3_greedy_top.mjs"
files="$(mktemp -d)"
trap 'rm -rf "$files"' EXIT
FERRITE_FAMILY_GGUF_DIR="$files" "$build/tests/ferrite_tests" \
  --gtest_filter='Gemma3FamilyTest.WritesTheOracleFiles' >/dev/null
prompts=("1 270 45 271 9" "1 260 261 262" "1 279 5 150 200 33 270")
status=0
for name in gemma3.gguf gemma3-q8_0.gguf; do
  model="$files/$name"
  replies="$files/$name.llama-cpp.txt"
  (cd "$oracle" && timeout 3000 node gemma3_greedy_top.mjs "$model" "$steps" "${prompts[@]}" \
     2>/dev/null >"$replies" || true)
  for prompt in "${prompts[@]}"; do
    reply="$(grep -A2 -x "prompt $prompt" "$replies" || true)"
    expected=($(sed -n 's/^tokens //p' <<<"$reply"))
    margins=($(sed -n 's/^margins //p' <<<"$reply"))
    got=($("$build/ferrite" run "$model" --prompt-ids "$prompt" --steps "$steps" --ignore-eos \
             --context 128 --print-ids 2>/dev/null | sed -n 's/^token ids: //p'))
    if [ "${#expected[@]}" -ne "$steps" ]; then
      echo "NO ORACLE  $name  [$prompt]"; status=1; continue
    fi
    smallest="$(printf '%s\n' "${margins[@]}" | sort -g | head -n 1)"
    first=0
    while [ "$first" -lt "$steps" ] && [ "${got[$first]:-}" = "${expected[$first]}" ]; do
      first=$((first + 1))
    done
    if [ "$first" -eq "$steps" ]; then
      echo "identical  $steps of $steps tokens, smallest llama.cpp margin $smallest  $name  [$prompt]"
    else
      echo "DIFFERENT  from token $first (margin there ${margins[$first]}), smallest llama.cpp margin $smallest  $name  [$prompt]"
      echo "  llama.cpp: ${expected[*]}"
      echo "  ferrite:   ${got[*]}"
      status=1
    fi
  done
  for provider in fast reference; do
    FERRITE_GEMMA3_ORACLE="$replies" FERRITE_GEMMA3_MODEL="$model" FERRITE_GEMMA3_PROVIDER="$provider" \
      "$build/tests/ferrite_tests" \
      --gtest_filter='Gemma3FamilyTest.ComparesWithLlamaCppTopLogProbabilities' 2>&1 |
      sed -n "s/^gemma3 vs llama.cpp/  $name teacher-forced/p"
  done
  # The F32 file: does llama.cpp's f16 GELU table explain the differences?
  FERRITE_GEMMA3_ORACLE="$replies" FERRITE_GEMMA3_MODEL="$model" "$build/tests/ferrite_tests" \
    --gtest_filter='Gemma3FamilyTest.LlamaCppsF16GeluTableExplainsTheF32Differences' 2>&1 |
    sed -n "s/^gemma3 reference vs llama.cpp/  $name reference vs llama.cpp/p"
  # FERRITE_GEMMA3_KEEP=DIR keeps llama.cpp's replies and the files.
  if [ -n "${FERRITE_GEMMA3_KEEP:-}" ]; then mkdir -p "$FERRITE_GEMMA3_KEEP" && cp "$replies" "$model" "$FERRITE_GEMMA3_KEEP/"; fi
done
exit "$status"

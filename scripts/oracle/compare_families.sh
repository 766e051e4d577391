#!/usr/bin/env bash
# Opt-in oracle for the model families: a synthetic GGUF per family, in F32
# and with every matrix in Q8_0 blocks (llama with Llama 3 rope factors and
# a tied classifier, a Mistral-like llama, qwen2, qwen3 with a tied
# classifier, phi3 with fused matrices, gemma3 with sliding-window layers;
# written by the test binary from
# tests/support/synthetic_decoder.h), greedy ids from llama.cpp (the npm
# package node-llama-cpp 3.22.1, CPU build) and from
# `ferrite run --prompt-ids`, STEPS tokens (default 48) on several id
# prompts. Every token must be equal; for each run the script prints
# llama.cpp's own smallest top-1 minus top-2 logit margin over the run (so a
# reader sees how far from a tie each greedy choice was). Should a run
# disagree after a position whose margin is below TOLERANCE (default 0.01),
# it says so ("near-tie") instead of "identical"; it still fails.
# Not part of CI.
#
# Quantized files: the test binary also writes `<family>-peaked.gguf`, an F32
# model with rows of 256 values whose greedy choices are far from ties (the
# classifier is the token embedding shifted by 97, residual projections
# scaled by 0.1: tests/support/synthetic_decoder.h); with QUANTIZE="Q4_K_M
# Q6_K …" each is quantized by llama.cpp's own llama_model_quantize
# (scripts/oracle/quantize_gguf.c, needs a llama.cpp source tree for its
# headers: LLAMA_SRC, default /tmp/llama-src) into
# `<family>-peaked-<TYPE>.gguf`, and those are compared too. PROMPTS=N uses
# only the first N prompts.
#
#   bash scripts/oracle/compare_families.sh [STEPS] [TOLERANCE]
# (FERRITE_BUILD_DIR: the build with `ferrite` and `tests/ferrite_tests`,
# default ./build; FERRITE_ORACLE_MODELS: the file names to compare, in
# order, default all: gemma3 llama3 mistral phi3 qwen2 qwen3, each .gguf and
# -q8_0.gguf.)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
build="${FERRITE_BUILD_DIR:-$root/build}"
steps="${1:-48}"
tolerance="${2:-0.01}"
oracle="${FERRITE_ORACLE_DIR:-$HOME/.cache/ferrite-oracle}"
mkdir -p "$oracle"
if [ ! -d "$oracle/node_modules/node-llama-cpp" ]; then
  (cd "$oracle" && npm install node-llama-cpp@3.22.1 --no-audit --no-fund >/dev/null)
fi
cp "$root/scripts/oracle/llama_cpp_greedy_ids.mjs" "$oracle/families_greedy_ids.mjs"
files="$(mktemp -d)"
trap 'rm -rf "$files"' EXIT
FERRITE_FAMILY_GGUF_DIR="$files" "$build/tests/ferrite_tests" \
  --gtest_filter='DecoderFamiliesTest.WritesTheOracleFiles:Gemma3FamilyTest.WritesTheOracleFiles' >/dev/null
ferrite="$build/ferrite"
if [ -n "${QUANTIZE:-}" ]; then
  llama_src="${LLAMA_SRC:-/tmp/llama-src}"
  bins="$oracle/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64"
  cc -O2 -std=c11 -o "$files/quantize_gguf" "$root/scripts/oracle/quantize_gguf.c" \
    -I "$llama_src/include" -I "$llama_src/ggml/include" \
    -L "$bins" -l:libllama.v0.5.0.so -l:libggml.v0.5.0.so -l:libggml-base.so \
    -Wl,-rpath,"$bins"
  for peaked in "$files"/*-peaked.gguf; do
    for type in $QUANTIZE; do
      "$files/quantize_gguf" quantize "$peaked" "${peaked%.gguf}-$type.gguf" "$type" >/dev/null 2>&1
    done
  done
  rm "$files/quantize_gguf"
fi
status=0
prompts=("1 270 45 271 9" "1 260 261 262" "1 279 5 150 200 33 270")
prompts=("${prompts[@]:0:${PROMPTS:-3}}")
models="${FERRITE_ORACLE_MODELS:-$(cd "$files" && ls *.gguf)}"
for name in $models; do
  model="$files/$name"
  # One llama.cpp process per model, a fresh context per prompt.
  replies="$(cd "$oracle" && timeout 900 node families_greedy_ids.mjs "$model" "$steps" "${prompts[@]}" 2>/dev/null || true)"
  for prompt in "${prompts[@]}"; do
    reply="$(grep -A2 -x "prompt $prompt" <<<"$replies" || true)"
    expected=($(sed -n 's/^tokens //p' <<<"$reply"))
    margins=($(sed -n 's/^margins //p' <<<"$reply"))
    got=($("$ferrite" run "$model" --prompt-ids "$prompt" --steps "$steps" --ignore-eos \
             --context 128 --print-ids 2>/dev/null | sed -n 's/^token ids: //p'))
    if [ "${#expected[@]}" -ne "$steps" ]; then
      echo "NO ORACLE  $name  [$prompt]"; status=1; continue
    fi
    smallest="$(printf '%s\n' "${margins[@]}" | sort -g | head -n 1)"
    if [ "${got[*]}" = "${expected[*]}" ]; then
      echo "identical  ${#expected[@]} of $steps tokens, smallest llama.cpp margin $smallest  $name  [$prompt]"
      continue
    fi
    # The first differing position, and whether a near-tie came before it.
    first=0
    while [ "$first" -lt "$steps" ] && [ "${got[$first]:-}" = "${expected[$first]}" ]; do
      first=$((first + 1))
    done
    tie=""
    for ((i = 0; i <= first && i < steps; ++i)); do
      if awk -v m="${margins[$i]}" -v t="$tolerance" 'BEGIN{exit !(m < t)}'; then tie=" (near-tie at $i: margin ${margins[$i]})"; break; fi
    done
    echo "DIFFERENT  from token $first$tie  $name  [$prompt]"
    echo "  llama.cpp: ${expected[*]}"
    echo "  margins:   ${margins[*]}"
    echo "  ferrite:   ${got[*]}"
    status=1
  done
done
exit "$status"

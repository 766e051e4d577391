#!/usr/bin/env bash
# Opt-in oracle (not CI): Ferrite on genuine llama.cpp-quantized files.
# An F32 model from bench/make_llama_gguf (the 24M shape unless given
# MAKE_ARGS) is quantized by llama.cpp's own llama_model_quantize into each
# type; then
#   1. Ferrite's greedy token ids (`ferrite run --prompt-ids`) are compared
#      with llama.cpp's for STEPS tokens on a few prompts, up to the first
#      position where llama.cpp's own top-2 logit margin ln(p1/p2) is below
#      TOLERANCE (random weights give flat distributions: a tiny numeric
#      difference legitimately flips a near-tie there). Ferrite's cpu.reference
#      (exact dequantization, f32 activations, no activation rounding) runs
#      too and is reported beside, to tell whose rounding moved a near-tie.
#      The default tolerance 0.05 is measured, not guessed: on the 4-layer
#      Q4_K_M model below llama.cpp's own int8 activation rounding flips a
#      near-tie of margin 0.0216 relative to the exact computation (Ferrite
#      fast and reference pick the other token there);
#   2. a few tensors per file (blk.0.attn_q.weight, blk.0.attn_v.weight,
#      output.weight, blk.0.ffn_down.weight, blk.1.ffn_down.weight: in the
#      K mixes these hold the main type, the Q6_K of "more bits" tensors and,
#      for rows that are not whole 256-value super-blocks, llama.cpp's
#      fallback types Q5_0 / Q5_1 / Q8_0) are dequantized by llama.cpp's
#      to_float and by Ferrite (bench/dequantize_gguf_tensor) and compared
#      bit for bit.
# Needs: a build with -DFERRITE_BUILD_BENCHMARKS=ON (make_llama_gguf,
# dequantize_gguf_tensor), node-llama-cpp in ${FERRITE_ORACLE_DIR:-
# ~/.cache/ferrite-oracle} (see compare_llama_cpp.sh), and a llama.cpp
# source tree for the headers: LLAMA_SRC (default /tmp/llama-src).
#
#   bash scripts/oracle/compare_quantized.sh [STEPS] [TOLERANCE]
# (env: TYPES="Q4_K_M Q6_K" to choose types, PROMPT="..." for one prompt,
# FERRITE_BUILD_DIR for another build directory.)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
models="$root/../shared/models"
steps="${1:-48}"
tolerance="${2:-0.05}"
oracle="${FERRITE_ORACLE_DIR:-$HOME/.cache/ferrite-oracle}"
llama_src="${LLAMA_SRC:-/tmp/llama-src}"
bins="$oracle/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
build="${FERRITE_BUILD_DIR:-$root/build}"
ferrite="$build/ferrite"

cc -O2 -std=c11 -o "$work/quantize_gguf" "$root/scripts/oracle/quantize_gguf.c" \
  -I "$llama_src/include" -I "$llama_src/ggml/include" \
  -L "$bins" -l:libllama.v0.5.0.so -l:libggml.v0.5.0.so -l:libggml-base.so \
  -Wl,-rpath,"$bins"
cp "$root/scripts/oracle/llama_cpp_greedy_margins.mjs" "$oracle/greedy_margins.mjs"

# shellcheck disable=SC2086
"$build/bench/make_llama_gguf" --vocab-from "$models/stories260K.gguf" --type f32 \
  ${MAKE_ARGS:-} -o "$work/f32.gguf"

prompts=("Once upon a time" "Lily and Tom went to the park" "One day, a big bear found a ball")
if [ -n "${PROMPT:-}" ]; then prompts=("$PROMPT"); fi  # one prompt only (slow machines)
status=0
for type in ${TYPES:-Q4_K_M Q5_K_M Q6_K Q4_1 Q5_0 Q5_1}; do
  model="$work/$type.gguf"
  "$work/quantize_gguf" quantize "$work/f32.gguf" "$model" "$type" >/dev/null 2>&1
  for tensor in blk.0.attn_q.weight blk.0.attn_v.weight output.weight blk.0.ffn_down.weight \
                blk.1.ffn_down.weight; do
    "$work/quantize_gguf" dequantize "$model" "$tensor" "$work/llama.f32" >"$work/what.txt"
    "$build/bench/dequantize_gguf_tensor" "$model" "$tensor" "$work/ferrite.f32"
    if cmp -s "$work/llama.f32" "$work/ferrite.f32"; then
      echo "$type dequantize identical  $(cat "$work/what.txt")"
    else
      echo "$type dequantize DIFFERENT  $(cat "$work/what.txt")"
      status=1
    fi
  done
  for prompt in "${prompts[@]}"; do
    ids="$("$ferrite" run "$model" --prompt "$prompt" --steps 1 --print-ids 2>/dev/null |
           sed -n 's/^prompt ids: //p')"
    reply="$(cd "$oracle" && timeout 1200 node greedy_margins.mjs "$model" "$ids" "$steps" 2>/dev/null)"
    expected="$(sed -n 's/^tokens //p' <<<"$reply")"
    margins="$(sed -n 's/^margins //p' <<<"$reply")"
    got="$("$ferrite" run "$model" --prompt-ids "$ids" --steps "$steps" --ignore-eos \
           --capacity 512 --print-ids 2>/dev/null | sed -n 's/^token ids: //p')"
    # cpu.reference: exact dequantization, f32 activations, double sums (no
    # activation rounding): tells whose rounding moved a near-tie.
    exact="$("$ferrite" run "$model" --prompt-ids "$ids" --steps "$steps" --ignore-eos \
             --capacity 512 --print-ids --provider reference 2>/dev/null | sed -n 's/^token ids: //p')"
    python3 - "$type" "$prompt" "$tolerance" "$expected" "$got" "$margins" "$exact" <<'PY' || status=1
import sys
kind, prompt, tol, expected, got, margins, exact = sys.argv[1:]
tol = float(tol)
e, g, x = expected.split(), got.split(), exact.split()
m = [float(x) for x in margins.split()]
# Positions checked: those before the first whose margin is below tol (a
# near-tie there may legitimately go either way, and everything after it
# follows from that choice).
limit = next((i for i, x in enumerate(m) if x < tol), len(e))
first = next((i for i in range(limit) if i >= len(g) or g[i] != e[i]), None)
low = min(m[:limit]) if limit else float("nan")
# Beyond the checked positions, for information: how long the ids stay equal
# (llama.cpp vs cpu.fast, and the exact cpu.reference vs each).
def run_of(a, b):
    return next((i for i in range(len(a)) if i >= len(b) or a[i] != b[i]), len(a))
same, exact_llama, exact_fast = run_of(e, g), run_of(x, e), run_of(x, g)
info = (f"identical for {same}/{len(e)}; exact reference = llama.cpp for {exact_llama}, "
        f"= ferrite fast for {exact_fast}")
if first is None:
    print(f"{kind} agree {limit}/{len(e)} tokens (checked up to margin < {tol}; "
          f"smallest margin there {low:.4f}; {info})  \"{prompt}\"")
else:
    print(f"{kind} DIFFER at {first} (llama.cpp margin there {m[first]:.4f}; checked {limit}; "
          f"{info})  \"{prompt}\"")
    print(f"  llama.cpp: {' '.join(e)}\n  ferrite:   {' '.join(g)}\n  exact:     {' '.join(x)}")
    sys.exit(1)
PY
  done
done
exit "$status"

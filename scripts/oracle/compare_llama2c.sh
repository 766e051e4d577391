#!/usr/bin/env bash
# Opt-in oracle: Ferrite's greedy text vs Andrej Karpathy's llama2.c run.c (the
# reference C implementation of this model family) on stories260K, for several
# prompts, for both stories260K.bin (+ tok512.bin) and stories260K.gguf.
# Not a product dependency and not part of CI.
#
#   bash scripts/oracle/compare_llama2c.sh [STEPS]     # STEPS new tokens (default 200)
#   bash scripts/oracle/compare_llama2c.sh -n TOTAL    # run.c's -n: prompt tokens + new tokens
#
# run.c: $FERRITE_RUN_C (a run.c source, compiled here with gcc -O2 -lm, or an
# already compiled run binary); otherwise it is downloaded once from
#   https://raw.githubusercontent.com/karpathy/llama2.c/master/run.c
# into ${FERRITE_ORACLE_DIR:-$HOME/.cache/ferrite-oracle}/llama2c/. Machines
# without internet access cannot download it: set FERRITE_RUN_C there.
#
# Step alignment. run.c's -n counts positions after BOS: it feeds BOS at pos 0,
# forces the prompt tokens (dummy-prefix " " merged in, BOS not counted) and
# then samples, so -n = prompt_tokens + new_tokens. That holds for the older
# run.c with bpe_encode and -z (e.g. commit bd18228) and for master, whose
# prompt_tokens includes BOS but whose forcing starts at prompt_tokens[1].
# Ferrite's --steps counts new tokens only. The
# prompt token count comes from Ferrite's --print-ids and is checked against
# run.c: run.c with -n prompt_tokens must print exactly the prompt. An empty
# prompt is given to run.c as no -i (the older run.c turns -i "" into one
# " " token; master treats it as none).
# run.c stops when it samples BOS (id 1); Ferrite stops only at EOS (id 2) and
# keeps generating past BOS. When Ferrite's ids contain BOS, only the tokens
# before it are compared (said so on the line). When Ferrite returns fewer
# tokens than asked (EOS, or the end of the context), a DIFFERENT line says so.
# Texts are compared exactly after stripping trailing whitespace; run.c's
# tok/s line and Ferrite's stats line (stderr) are ignored.
# Prints one line per (model, prompt); exits 1 on any difference.
set -euo pipefail
export LC_ALL=C
root="$(cd "$(dirname "$0")/../.." && pwd)"
models="$root/../shared/models"
ferrite="$root/build/ferrite"

new_steps=200
total=""
case "${1:-}" in
  "") ;;
  -n) total="${2:?-n needs a number}" ;;
  -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
  *) new_steps="$1" ;;
esac

oracle="${FERRITE_ORACLE_DIR:-$HOME/.cache/ferrite-oracle}/llama2c"
mkdir -p "$oracle"
runc="${FERRITE_RUN_C:-}"
if [ -z "$runc" ]; then
  runc="$oracle/run.c"
  if [ ! -s "$runc" ]; then
    if ! curl -fsSL --max-time 60 -o "$runc.part" \
        https://raw.githubusercontent.com/karpathy/llama2.c/master/run.c; then
      rm -f "$runc.part"
      echo "cannot download run.c; set FERRITE_RUN_C to a run.c or a compiled run" >&2
      exit 2
    fi
    mv "$runc.part" "$runc"
  fi
fi
case "$runc" in
  *.c) gcc -O2 -o "$oracle/run" "$runc" -lm; runbin="$oracle/run" ;;
  *) [ -x "$runc" ] || { echo "FERRITE_RUN_C=$runc is neither a .c file nor executable" >&2; exit 2; }
     runbin="$runc" ;;
esac

# seq_len is the 7th int32 of the llama2.c header; run.c silently clamps -n to it.
seq_len="$(od -An -t d4 -j 24 -N 4 "$models/stories260K.bin" | tr -d ' ')"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

rstrip() { local s="$1"; printf '%s' "${s%"${s##*[![:space:]]}"}"; }

# run_ferrite MODEL_ARGS PROMPT STEPS: sets f_text, f_prompt_ids, f_ids.
run_ferrite() {
  local out
  # shellcheck disable=SC2086
  if ! out="$("$ferrite" run $1 --prompt "$2" --steps "$3" --temperature 0 --capacity 512 \
        --print-ids 2>"$tmp/ferrite.err")"; then
    cat "$tmp/ferrite.err" >&2; exit 2
  fi
  f_prompt_ids="$(sed -n 's/^prompt ids: //p' <<<"$out" | tail -n 1)"
  f_ids="$(sed -n 's/^token ids: *//p' <<<"$out" | tail -n 1)"
  f_text="$(rstrip "$(head -n -2 <<<"$out")")"
}

# run_runc PROMPT N: run.c greedy with -n N, sets r_text.
run_runc() {
  local args=("$models/stories260K.bin" -z "$models/tok512.bin" -t 0 -n "$2")
  [ -n "$1" ] && args+=(-i "$1")
  if ! r_text="$("$runbin" "${args[@]}" 2>"$tmp/runc.err")"; then
    cat "$tmp/runc.err" >&2; exit 2
  fi
  r_text="$(rstrip "$r_text")"
}

first_diff() {  # byte offset of the first difference of $1 and $2
  local i=0
  while [ "$i" -lt "${#1}" ] && [ "$i" -lt "${#2}" ] && [ "${1:i:1}" = "${2:i:1}" ]; do i=$((i + 1)); done
  echo "$i"
}

status=0
for prompt in "Once upon a time" "Lily and Tom went to the park" "One day, a big bear found a ball" ""; do
  for model in "$models/stories260K.bin --tokenizer $models/tok512.bin" "$models/stories260K.gguf"; do
    name="$(basename "${model%% *}")"
    label="$name  \"$prompt\""
    # Prompt tokens (BOS excluded) and the prompt text Ferrite echoes.
    run_ferrite "$model" "$prompt" 0
    read -r -a pids <<<"$f_prompt_ids"
    if [ "${pids[0]:-}" != 1 ]; then
      echo "DIFFERENT  $label: Ferrite's prompt ids do not start with BOS: $f_prompt_ids"; status=1; continue
    fi
    n_prompt=$(( ${#pids[@]} - 1 ))
    n="$new_steps"
    [ -n "$total" ] && n=$(( total - n_prompt ))
    if [ "$n" -lt 1 ] || [ $(( n_prompt + n )) -gt "$seq_len" ]; then
      echo "DIFFERENT  $label: $n_prompt prompt + $n new tokens does not fit seq_len $seq_len (not run)"; status=1; continue
    fi
    # run.c must spend exactly n_prompt steps on the prompt.
    if [ "$n_prompt" -gt 0 ]; then
      run_runc "$prompt" "$n_prompt"
      if [ "$r_text" != "$(rstrip "$prompt")" ]; then
        echo "DIFFERENT  $label: prompt tokenization: run.c's first $n_prompt tokens are not the prompt"
        echo "  run.c -n $n_prompt: $r_text"
        echo "  ferrite prompt ids: ${pids[*]:1}"
        status=1; continue
      fi
    fi
    run_ferrite "$model" "$prompt" "$n"
    read -r -a ids <<<"$f_ids"
    k="$n"; note=""
    for ((j = 0; j < ${#ids[@]}; j++)); do
      if [ "${ids[j]}" = 1 ]; then
        k="$j"; note=" (of $n; token $((j + 1)) is BOS: run.c stops there, Ferrite goes on)"; break
      fi
    done
    [ "$k" -lt "$n" ] && run_ferrite "$model" "$prompt" "$k"
    run_runc "$prompt" $(( n_prompt + n ))
    if [ "$r_text" = "$f_text" ]; then
      echo "identical  $k new tokens$note  $n_prompt prompt tokens  ${#f_text} bytes  run.c -n $(( n_prompt + n ))  $label"
    else
      d="$(first_diff "$r_text" "$f_text")"
      echo "DIFFERENT  $label  run.c -n $(( n_prompt + n )), ferrite --steps $k; first difference at byte $d"
      echo "  run.c:   $r_text"
      echo "  ferrite: $f_text"
      echo "  ferrite ids: ${ids[*]:0:k}"
      if [ "${#ids[@]}" -lt "$n" ] && [ "$k" = "$n" ]; then
        m="${#ids[@]}"
        run_runc "$prompt" $(( n_prompt + m ))
        if [ "$r_text" = "$f_text" ]; then same="identical to"; else same="different from"; fi
        echo "  note: ferrite generated $m of $n requested tokens (it stops at EOS id 2 and at the end of its context); those $m are $same run.c -n $(( n_prompt + m ))"
      fi
      status=1
    fi
  done
done
exit "$status"

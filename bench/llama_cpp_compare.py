#!/usr/bin/env python3
"""Ferrite vs llama.cpp on the same GGUF files, same machine, same threads.

    python3 bench/llama_cpp_compare.py [--sizes 24M,76M] [--types f32,f16,q8_0,q4_0,q4_k_m]
                                       [--threads 1,2] [--reps 3] [--work DIR]
                                       [--ferrite-build DIR]

One command does everything:
  1. builds `ferrite`, `make_llama_gguf` and `memory_bandwidth` in build-bench/
     (Release, FERRITE_BUILD_BENCHMARKS=ON), or uses those of --ferrite-build;
  2. installs the npm package node-llama-cpp (CPU build of llama.cpp) into
     $FERRITE_ORACLE_DIR (default ~/.cache/ferrite-oracle) on first use;
  3. writes Llama GGUF models with deterministic weights and the stories260K
     vocabulary (../shared/models/stories260K.gguf), one per size and type,
     into --work (default /tmp/ferrite-bench), reusing existing files; q4_k_m
     is the f32 model quantized by llama.cpp's own llama_model_quantize
     (scripts/oracle/quantize_gguf.c, compiled against the node-llama-cpp
     libraries and the headers of a llama.cpp source tree, $LLAMA_SRC,
     default /tmp/llama-src), so its per-tensor types are llama.cpp's mix;
  4. measures this machine's read bandwidth at each thread count;
  5. runs, side by side in one loop (engine order alternating per repetition),
     a 128-token prompt (the same token ids for both engines) and 128 greedy
     tokens, end-of-sequence ignored, and takes the median of --reps runs.
Prefill tokens/s = prompt tokens / time to evaluate the prompt; decode
tokens/s = single-token steps / their time (the first new token comes from
the prompt's logits and is not a step). Bandwidth = decode tokens/s x the
weight bytes each engine streams per token: llama.cpp reads the file's
matrices as stored; Ferrite reads F32, Q8_0, Q4_0 and the K-quant mix as
stored and F16 as f32 (it converts F16 at load); for q4_k_m the bytes per
weight are the file's matrix bytes over its matrix weights.
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODELS = ROOT.parent / "shared" / "models"
SIZES = {
    # name: dim, layers, heads, kv_heads, ffn
    "24M": (512, 8, 8, 4, 1376),
    "76M": (768, 12, 12, 4, 2048),
    "110M": (768, 12, 12, 12, 3072),
}
BYTES_PER_WEIGHT = {"f32": 4.0, "f16": 2.0, "q8_0": 34 / 32, "q4_0": 18 / 32}
# Types made by llama.cpp's quantizer from the f32 model (name for quantize_gguf).
LLAMA_QUANTIZED = {"q4_k_m": "Q4_K_M", "q6_k": "Q6_K"}
FERRITE_BYTES_PER_WEIGHT = dict(BYTES_PER_WEIGHT, f16=4.0)  # F16 becomes f32 at load
PROMPT_TOKENS = 128
NEW_TOKENS = 128

NODE_SCRIPT = r"""
import {getLlama} from "node-llama-cpp";
const [modelPath, threads, ids, steps] = process.argv.slice(2);
const llama = await getLlama({gpu: false, maxThreads: Number(threads)});
const model = await llama.loadModel({modelPath});
const context = await model.createContext({contextSize: 512, threads: Number(threads),
                                           batchSize: 512});
const sequence = context.getSequence();
const input = ids.split(",").map(Number);
const n = Number(steps);
let count = 0, first = 0, last = 0;
const start = process.hrtime.bigint();
for await (const token of sequence.evaluate(input, {temperature: 0})) {
  const now = process.hrtime.bigint();
  if (count === 0) first = now;
  last = now;
  count += 1;
  if (count >= n) break;
}
const ms = (a, b) => Number(b - a) / 1e6;
console.log(JSON.stringify({prefill: input.length / (ms(start, first) / 1000),
                            decode: (count - 1) / (ms(first, last) / 1000), tokens: count}));
process.exit(0);
"""


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, text=True, errors="replace", capture_output=True, **kw)


def build(existing=None):
    if existing:
        return Path(existing).resolve()
    build_dir = ROOT / "build-bench"
    if not (build_dir / "build.ninja").exists():
        run(["cmake", "-S", str(ROOT), "-B", str(build_dir), "-G", "Ninja",
             "-DCMAKE_BUILD_TYPE=Release", "-DFERRITE_BUILD_BENCHMARKS=ON"])
    subprocess.run(["ninja", "-C", str(build_dir), "ferrite", "make_llama_gguf", "memory_bandwidth"],
                   check=True, stdout=subprocess.DEVNULL)
    return build_dir


def oracle_dir():
    d = Path(os.environ.get("FERRITE_ORACLE_DIR", Path.home() / ".cache" / "ferrite-oracle"))
    d.mkdir(parents=True, exist_ok=True)
    if not (d / "node_modules" / "node-llama-cpp").exists():
        subprocess.run(["npm", "install", "node-llama-cpp@3", "--no-audit", "--no-fund"], cwd=d,
                       check=True, stdout=subprocess.DEVNULL)
    (d / "bench.mjs").write_text(NODE_SCRIPT)
    return d


def quantizer(oracle, work):
    """scripts/oracle/quantize_gguf.c built against the oracle's libllama."""
    exe = work / "quantize_gguf"
    if not exe.exists():
        src = Path(os.environ.get("LLAMA_SRC", "/tmp/llama-src"))
        bins = oracle / "node_modules" / "@node-llama-cpp" / "linux-x64" / "bins" / "linux-x64"
        run(["cc", "-O2", "-std=c11", "-o", str(exe), str(ROOT / "scripts" / "oracle" / "quantize_gguf.c"),
             "-I", str(src / "include"), "-I", str(src / "ggml" / "include"), "-L", str(bins),
             "-l:libllama.v0.5.0.so", "-l:libggml.v0.5.0.so", "-l:libggml-base.so",
             f"-Wl,-rpath,{bins}"])
    return exe


def make_model(build_dir, work, size, dtype, oracle=None):
    path = work / f"llama-{size}-{dtype}.gguf"
    if dtype in LLAMA_QUANTIZED:
        if not path.exists():
            f32 = make_model(build_dir, work, size, "f32")
            run([str(quantizer(oracle, work)), "quantize", str(f32), str(path),
                 LLAMA_QUANTIZED[dtype]])
        return path
    if not path.exists():
        dim, layers, heads, kv_heads, ffn = SIZES[size]
        run([str(build_dir / "bench" / "make_llama_gguf"), "--vocab-from",
             str(MODELS / "stories260K.gguf"), "--dim", str(dim), "--layers", str(layers),
             "--heads", str(heads), "--kv-heads", str(kv_heads), "--ffn", str(ffn),
             "--context", "512", "--type", dtype, "-o", str(path)])
    return path


def streamed_weights(size):
    """Matrix weights read per decoded token (embedding: one row, ignored)."""
    dim, layers, heads, kv_heads, ffn = SIZES[size]
    kv_dim = dim // heads * kv_heads
    per_layer = dim * dim * 2 + dim * kv_dim * 2 + dim * ffn * 3
    vocab = 512
    return layers * per_layer + vocab * dim


def matrix_bytes_per_weight(model, size):
    """A mixed-type file's average: its size (norms and metadata are small)
    over all its matrix weights, the token embedding included."""
    dim, layers, heads, kv_heads, ffn = SIZES[size]
    return model.stat().st_size / (streamed_weights(size) + 512 * dim)


def prompt_ids():
    # BOS, then a fixed walk over the vocabulary (byte tokens and merges).
    return [1] + [3 + (i * 37) % 509 for i in range(PROMPT_TOKENS - 1)]


STATS = re.compile(r"prefill (\d+) tok at ([\d.]+) tok/s · decode (\d+) tok at ([\d.]+) tok/s")


def ferrite_once(build_dir, model, threads, ids):
    p = subprocess.run([str(build_dir / "ferrite"), "run", str(model), "--prompt-ids",
                        ",".join(map(str, ids)), "--steps", str(NEW_TOKENS), "--ignore-eos",
                        "--capacity", str(PROMPT_TOKENS), "--context", "512", "--threads",
                        str(threads)], text=True, errors="replace", capture_output=True)
    if p.returncode != 0:
        return None, p.stderr.strip().splitlines()[-1] if p.stderr.strip() else "failed"
    m = STATS.search(p.stderr)
    if not m or int(m.group(1)) != len(ids) or int(m.group(3)) != NEW_TOKENS:
        return None, "unexpected output: " + p.stderr.strip()[-200:]
    return (float(m.group(2)), float(m.group(4))), None


def llama_once(oracle, model, threads, ids):
    p = subprocess.run(["node", "bench.mjs", str(model), str(threads), ",".join(map(str, ids)),
                        str(NEW_TOKENS)], cwd=oracle, text=True, errors="replace", capture_output=True, timeout=600)
    if p.returncode != 0:
        return None, (p.stderr.strip().splitlines() or ["failed"])[-1]
    r = json.loads(p.stdout.strip().splitlines()[-1])
    if r["tokens"] != NEW_TOKENS:
        return None, f"{r['tokens']} tokens"
    return (r["prefill"], r["decode"]), None


def median(values):
    return statistics.median(values) if values else None


def fmt(v, digits=0):
    return "n/a" if v is None else f"{v:,.{digits}f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="24M,76M")
    ap.add_argument("--types", default="f32,f16,q8_0,q4_0")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--work", default="/tmp/ferrite-bench")
    ap.add_argument("--ferrite-build", default=None,
                    help="an existing build directory with ferrite, bench/make_llama_gguf and "
                         "bench/memory_bandwidth (default: build build-bench/)")
    args = ap.parse_args()
    sizes = args.sizes.split(",")
    types = args.types.split(",")
    threads = [int(t) for t in args.threads.split(",")]
    for s in sizes:
        if s not in SIZES:
            sys.exit(f"unknown size {s}; known: {', '.join(SIZES)}")
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    build_dir = build(args.ferrite_build)
    oracle = oracle_dir()
    models = {(s, t): make_model(build_dir, work, s, t, oracle) for s in sizes for t in types}
    bandwidth = {n: float(run([str(build_dir / "bench" / "memory_bandwidth"), str(n)]).stdout)
                 for n in threads}
    ids = prompt_ids()
    results = {}  # (size, type, threads, engine) -> list of (prefill, decode)
    errors = {}
    for rep in range(args.reps):
        for s in sizes:
            for t in types:
                for n in threads:
                    engines = [("ferrite", lambda: ferrite_once(build_dir, models[s, t], n, ids)),
                               ("llama.cpp", lambda: llama_once(oracle, models[s, t], n, ids))]
                    if rep % 2 == 1:
                        engines.reverse()
                    for engine, once in engines:
                        value, error = once()
                        if value is None:
                            errors[s, t, n, engine] = error
                        else:
                            results.setdefault((s, t, n, engine), []).append(value)
                    print(f"rep {rep + 1}/{args.reps} {s} {t} {n} thread(s) done", file=sys.stderr)
    print(f"# Ferrite vs llama.cpp (node-llama-cpp, CPU): {PROMPT_TOKENS}-token prompt, "
          f"{NEW_TOKENS} greedy tokens, median of {args.reps}")
    print("# memory read bandwidth: " +
          ", ".join(f"{n} thread(s) {bandwidth[n]:.1f} GB/s" for n in threads))
    print()
    print("| model | type | threads | prefill tok/s Ferrite | llama.cpp | ratio "
          "| decode tok/s Ferrite | llama.cpp | ratio | decode GB/s Ferrite | llama.cpp |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for s in sizes:
        weights = streamed_weights(s)
        for t in types:
            for n in threads:
                f = results.get((s, t, n, "ferrite"), [])
                l = results.get((s, t, n, "llama.cpp"), [])
                fp, fd = median([v[0] for v in f]), median([v[1] for v in f])
                lp, ld = median([v[0] for v in l]), median([v[1] for v in l])
                ratio = lambda a, b: None if a is None or b is None else a / b
                per_weight = BYTES_PER_WEIGHT.get(t) or matrix_bytes_per_weight(models[s, t], s)
                ferrite_per_weight = FERRITE_BYTES_PER_WEIGHT.get(t) or per_weight
                fgb = None if fd is None else fd * weights * ferrite_per_weight / 1e9
                lgb = None if ld is None else ld * weights * per_weight / 1e9
                print(f"| {s} | {t} | {n} | {fmt(fp)} | {fmt(lp)} | {fmt(ratio(fp, lp), 2)} "
                      f"| {fmt(fd)} | {fmt(ld)} | {fmt(ratio(fd, ld), 2)} | {fmt(fgb, 1)} "
                      f"| {fmt(lgb, 1)} |")
    if errors:
        print()
        for (s, t, n, engine), error in sorted(errors.items()):
            print(f"# {engine} {s} {t} {n} thread(s): {error}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Ferrite's compile against ONNX Runtime's session creation, same shapes, one run.

    python3 bench/onnxruntime_compare.py [--layers 1,8,32,128] [--reps 3]
                                         [--ferrite-build DIR] [--work DIR]

Opt-in (not CI; needs the npm registry once). For each layer count, side by
side in one loop (which engine goes first alternates per layer count):
  * Ferrite: `bench/write_synthetic_program llama L` writes the compile
    benchmark's Llama program (bench/synthetic_programs.h: dim 64, 8 heads,
    4 KV heads, FFN 172, vocab 512; 15 nodes per layer + 4), and
    `ferrite compile` plans it against examples/llama-decoder.{catalog,
    policy}.json for 32 tokens, writing the plan file: the wall time of the
    whole process, median of --reps;
  * ONNX Runtime (the npm package onnxruntime-node, installed on first use
    into $FERRITE_ORT_DIR, default ~/.cache/ferrite-ort, without its install
    script, which fetches GPU binaries): bench/onnxruntime_session.mjs builds
    the same decoder as an opset-17 ONNX model from standard operators and
    times `InferenceSession.create` (all graph optimizations, 1 intra-op
    thread), median of --reps after a warm-up session, then runs the session
    once to show the model is a working decoder.
The two do different work for the same model: ONNX Runtime's session holds
the weights (random, 45k floats per layer) and optimizes and partitions the
graph; Ferrite's plan binds weights by contract (the program file has none)
and resolves providers, estimates, arenas and the plan hash. What a deployer
waits for before the first token is each one's figure. The node counts
differ (standard ONNX operators spell RMSNorm, RoPE and attention out of
several nodes each), so the table compares per model, and gives each
engine's time per node of its own graph beside it.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ORT_VERSION = "1.23.2"


def ensure_onnxruntime(directory: Path) -> None:
    if (directory / "node_modules" / "onnxruntime-node").is_dir():
        return
    directory.mkdir(parents=True, exist_ok=True)
    if not (directory / "package.json").exists():
        (directory / "package.json").write_text('{"private": true}\n')
    subprocess.run(["npm", "install", f"onnxruntime-node@{ORT_VERSION}", "--ignore-scripts",
                    "--no-audit", "--no-fund"], cwd=directory, check=True)


def ensure_ferrite(build: Path) -> None:
    if not (build / "ferrite").exists() or not (build / "bench" / "write_synthetic_program").exists():
        subprocess.run(["cmake", "-S", str(ROOT), "-B", str(build), "-G", "Ninja",
                        "-DCMAKE_BUILD_TYPE=Release", "-DFERRITE_BUILD_BENCHMARKS=ON",
                        "-DFERRITE_BUILD_TESTS=OFF"], check=True)
        subprocess.run(["ninja", "-C", str(build), "ferrite", "write_synthetic_program"], check=True)


def ferrite_compile_seconds(build: Path, work: Path, layers: int, reps: int) -> tuple[float, int, int]:
    program = work / f"llama{layers}.program.json"
    plan = work / f"llama{layers}.plan.json"
    subprocess.run([str(build / "bench" / "write_synthetic_program"), "llama", str(layers),
                    str(program)], check=True, stdout=subprocess.DEVNULL)
    command = [str(build / "ferrite"), "compile", str(program),
               "--catalog", str(ROOT / "examples" / "llama-decoder.catalog.json"),
               "--policy", str(ROOT / "examples" / "llama-decoder.policy.json"),
               "--input", "value.tokens=u32[32]", "--input", "value.positions=u32[32]",
               "-o", str(plan)]
    times = []
    for _ in range(reps):
        plan.unlink(missing_ok=True)
        start = time.perf_counter()
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    nodes = len(json.loads(plan.read_text())["payload"]["nodes"])
    return statistics.median(times), nodes, plan.stat().st_size


def onnxruntime_create_seconds(ort_dir: Path, layers: int, reps: int) -> dict:
    out = subprocess.run(["node", str(ROOT / "bench" / "onnxruntime_session.mjs"), str(layers),
                          str(reps), "1"], check=True, capture_output=True, text=True,
                         env=dict(os.environ, FERRITE_ORT_DIR=str(ort_dir)))
    result = json.loads(out.stdout.strip().splitlines()[-1])
    if not result["run_ok"]:
        sys.exit(f"onnxruntime_session.mjs: the {layers}-layer model did not run")
    result["seconds"] = statistics.median(result["create_ms"]) / 1000.0
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--layers", default="1,8,32,128")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--ferrite-build", type=Path, default=ROOT / "build-bench")
    parser.add_argument("--work", type=Path, default=None)
    args = parser.parse_args()
    ort_dir = Path(os.environ.get("FERRITE_ORT_DIR", Path.home() / ".cache" / "ferrite-ort"))
    ensure_onnxruntime(ort_dir)
    ensure_ferrite(args.ferrite_build)
    work = args.work or Path(tempfile.mkdtemp(prefix="ferrite-ort-"))
    work.mkdir(parents=True, exist_ok=True)
    rows = []
    for index, layers in enumerate(int(x) for x in args.layers.split(",")):
        if index % 2 == 0:
            ferrite = ferrite_compile_seconds(args.ferrite_build, work, layers, args.reps)
            ort = onnxruntime_create_seconds(ort_dir, layers, args.reps)
        else:
            ort = onnxruntime_create_seconds(ort_dir, layers, args.reps)
            ferrite = ferrite_compile_seconds(args.ferrite_build, work, layers, args.reps)
        rows.append((layers, ferrite, ort))
        print(f"layers {layers}: ferrite {ferrite[0]:.3f} s ({ferrite[1]} nodes), "
              f"onnxruntime {ort['seconds']:.3f} s ({ort['nodes']} nodes)", file=sys.stderr)
    version = rows[0][2]["onnxruntime"] if rows else "?"
    print(f"| layers | Ferrite nodes | `ferrite compile` (wall) | per node | plan bytes | "
          f"ONNX nodes | ORT {version} session create | per node | ORT / Ferrite |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for layers, (seconds, nodes, plan_bytes), ort in rows:
        print(f"| {layers} | {nodes:,} | {seconds * 1000:.0f} ms | {seconds / nodes * 1e6:.0f} µs | "
              f"{plan_bytes:,} | {ort['nodes']:,} | {ort['seconds'] * 1000:.0f} ms | "
              f"{ort['seconds'] / ort['nodes'] * 1e6:.0f} µs | {ort['seconds'] / seconds:.1f}× |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

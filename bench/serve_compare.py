#!/usr/bin/env python3
"""Side by side: `ferrite serve` against llama.cpp's `llama-server` under the
same load, on the same GGUF, same sequence slots and threads, in one run. The
load comes from bench/serve_load (C++, build/bench/serve_load, the default) or
bench/serve_load.py (`--load-generator python`): on a 2-core machine the
Python generator's own scheduling shows in its time-to-first-token figures.

The servers run one at a time (an idle llama-server's thread pool may keep
polling, which would take a core from the server measured): each pass starts
each server in turn, drives it with every client count, and stops it; the
order is reversed on every other pass, and each cell reports the median over the
passes of each metric (every pass is printed on stderr as it ends). Optionally a
third server, another `ferrite` binary (`--ferrite-baseline`, e.g. a build of
an earlier commit), measured the same way, shows what a change buys.

Prints a Markdown table: aggregate generated tok/s, TTFT p50/p99 and
inter-token latency p50/p99 per server, and the ratios Ferrite / llama-server
(tok/s: higher is better for Ferrite; TTFT p99: llama-server / Ferrite, higher
is better for Ferrite). Exit 1 when any request failed.

llama-server: build it from the llama.cpp source bundled in the npm package
node-llama-cpp (docs/performance.md, "Serving"). Its `-c` is the context of
all slots together, so it gets parallel × context.

Usage:
  python3 bench/serve_compare.py --model /tmp/24M-q8_0.gguf \\
      --llama-server /tmp/llama-src/build/bin/llama-server \\
      [--ferrite build/ferrite] [--parallel 8] [--threads 2] [--context 512] \\
      [--clients 1,4,8,16] [--tokens 128] [--rounds 2] [--repeat 2] [--ferrite-baseline OTHER/ferrite]
      [--load-generator build/bench/serve_load|python]
"""
import argparse
import http.client
import json
import os
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import serve_load  # noqa: E402


def run_level(generator, port, clients, args):
    """One client level's row (bench/serve_load.py's keys) from the chosen generator."""
    url = f"http://127.0.0.1:{port}"
    if generator == "python":
        return serve_load.run_level(url, clients, args.tokens, args.rounds, args.prompt, 600)
    done = subprocess.run([generator, "--url", url, "--clients", str(clients), "--tokens",
                           str(args.tokens), "--rounds", str(args.rounds), "--prompt",
                           args.prompt, "--json"], capture_output=True, text=True, timeout=3600)
    if done.returncode not in (0, 1):  # 1: some request failed, counted in the row
        raise RuntimeError(f"{generator} exited with {done.returncode}: {done.stderr[-500:]}")
    return json.loads(done.stdout)[0]


def wait_healthy(port, process, seconds=300):
    until = time.time() + seconds
    while time.time() < until:
        if process.poll() is not None:
            raise RuntimeError(f"the server on port {port} exited with {process.returncode}")
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", "/health")
            if conn.getresponse().status == 200:
                return
        except OSError:
            pass
        time.sleep(0.25)
    raise RuntimeError(f"the server on port {port} did not become healthy in {seconds} s")


def start(name, command, port, log_dir):
    log = open(log_dir / f"{name}.log", "w")
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT,
                               start_new_session=True)
    wait_healthy(port, process)
    return process


def stop(process):
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


METRICS = ("aggregate_tok_s", "ttft_p50_ms", "ttft_p99_ms", "itl_p50_ms", "itl_p99_ms")


def median_row(rows):
    """Each metric's median over the passes; errors summed."""
    out = {m: statistics.median(r[m] for r in rows) for m in METRICS}
    out["errors"] = sum(r["errors"] for r in rows)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True)
    ap.add_argument("--llama-server", required=True)
    ap.add_argument("--ferrite", default=str(Path(__file__).resolve().parent.parent / "build" /
                                             "ferrite"))
    ap.add_argument("--parallel", type=int, default=8)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--context", type=int, default=512)
    ap.add_argument("--clients", default="1,4,8,16")
    ap.add_argument("--tokens", type=int, default=128)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--prompt", default="Once upon a time")
    ap.add_argument("--ferrite-baseline",
                    help="also measure this ferrite binary (same options) as `ferrite (baseline)`")
    ap.add_argument("--log-dir", default="/tmp/ferrite-serve-compare")
    ap.add_argument("--load-generator",
                    default=str(Path(__file__).resolve().parent.parent / "build/bench/serve_load"),
                    help="the C++ load generator's path, or `python` for bench/serve_load.py")
    args = ap.parse_args()
    if args.load_generator != "python" and not os.access(args.load_generator, os.X_OK):
        ap.error(f"no load generator at {args.load_generator} (build the target serve_load "
                 "with -DFERRITE_BUILD_BENCHMARKS=ON, or pass --load-generator python)")
    log_dir = Path(args.log_dir)
    log_dir.mkdir(parents=True, exist_ok=True)

    ferrite_common = [args.ferrite, "serve", args.model, "--host", "127.0.0.1",
                      "--parallel", str(args.parallel), "--threads", str(args.threads),
                      "--context", str(args.context), "--queue", str(4 * args.parallel)]
    servers = {
        "ferrite": (ferrite_common + ["--port", "18181"], 18181),
        "llama-server": ([args.llama_server, "-m", args.model, "--host", "127.0.0.1",
                          "--port", "18182", "--parallel", str(args.parallel),
                          "--threads", str(args.threads), "--threads-batch", str(args.threads),
                          "-c", str(args.parallel * args.context)], 18182),
    }
    if args.ferrite_baseline:
        servers["ferrite (baseline)"] = ([args.ferrite_baseline] + ferrite_common[1:] +
                                         ["--port", "18183"], 18183)
    # One server at a time: an idle server's threads may poll (llama.cpp's
    # thread pool does), which would take a core from the one measured.
    passes = {}  # (server, clients) -> one row per pass
    names = list(servers)
    clients = [int(x) for x in args.clients.split(",")]
    for r in range(args.repeat):
        order = names if r % 2 == 0 else list(reversed(names))
        for name in order:
            command, port = servers[name]
            process = start(name.replace(" ", "_"), command, port, log_dir)
            try:
                for c in clients:
                    row = run_level(args.load_generator, port, c, args)
                    print(f"# {name} clients={c} pass={r}: {row['aggregate_tok_s']:.1f} tok/s, "
                          f"TTFT p99 {row['ttft_p99_ms']:.1f} ms (max {row['ttft_max_ms']:.1f}: "
                          f"headers {row['slowest_headers_ms']:.1f}), "
                          f"errors {row['errors']}"
                          + (f" (first: {row['first_error']})" if row["first_error"] else ""),
                          file=sys.stderr, flush=True)
                    passes.setdefault((name, c), []).append(row)
            finally:
                stop(process)

    best = {key: median_row(rows) for key, rows in passes.items()}
    print(f"model `{Path(args.model).name}`, {args.parallel} slots, {args.threads} threads, "
          f"{args.tokens} tokens per request, {args.rounds} rounds per client; each cell the "
          f"median of {args.repeat} passes (every pass is on stderr); load generator "
          f"{'bench/serve_load.py' if args.load_generator == 'python' else 'bench/serve_load (C++)'}")
    print()
    header = "| clients | server | tok/s | TTFT p50 ms | TTFT p99 ms | ITL p50 ms | ITL p99 ms | errors |"
    print(header)
    print("|---|---|---|---|---|---|---|---|")
    failed = False
    for c in clients:
        for name in names:
            r = best[(name, c)]
            failed |= r["errors"] != 0
            print(f"| {c} | {name} | {r['aggregate_tok_s']:.1f} | {r['ttft_p50_ms']:.1f} | "
                  f"{r['ttft_p99_ms']:.1f} | {r['itl_p50_ms']:.2f} | {r['itl_p99_ms']:.2f} | "
                  f"{r['errors']} |")
    print()
    print("| clients | tok/s Ferrite / llama-server | TTFT p99 llama-server / Ferrite |")
    print("|---|---|---|")
    for c in clients:
        f, l = best[("ferrite", c)], best[("llama-server", c)]
        tok = f["aggregate_tok_s"] / l["aggregate_tok_s"] if l["aggregate_tok_s"] else float("nan")
        ttft = l["ttft_p99_ms"] / f["ttft_p99_ms"] if f["ttft_p99_ms"] else float("nan")
        print(f"| {c} | {tok:.2f} | {ttft:.2f} |")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

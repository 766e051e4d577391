#!/usr/bin/env python3
"""Load for an OpenAI-compatible server (`ferrite serve`, llama.cpp's llama-server).

C concurrent streaming clients (default 1, 4, 8, 16), each running ROUNDS
requests one after another of POST /v1/completions with
{"prompt", "max_tokens": N (default 128), "temperature": 0, "ignore_eos":
true, "stream": true}. Reports per client count: aggregate generated tokens
per second (usage.completion_tokens, else text events, over the wall time),
time to first token p50/p99, inter-token latency p50/p99 (gaps between text
events) and errors. Python standard library only.

Usage:
  python3 bench/serve_load.py --url http://127.0.0.1:8080 [--clients 1,4,8,16]
      [--tokens 128] [--rounds 1] [--prompt "Once upon a time"] [--json]
"""
import argparse
import http.client
import json
import statistics
import sys
import threading
import time
import urllib.parse


def percentile(values, p):
    if not values:
        return float("nan")
    ordered = sorted(values)
    k = (len(ordered) - 1) * p / 100.0
    lo = int(k)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (k - lo)


def one_request(host, port, body, timeout):
    """Returns (tokens, ttft, gaps, connect_s, headers_s) or raises.

    connect_s: the TCP connect alone; headers_s: from the start to the
    response's status line and headers; ttft: from the start to the first
    text event. They tell a stall in the handshake (a dropped SYN is retried
    after about a second) from one in the server's queue or steps."""
    conn = http.client.HTTPConnection(host, port, timeout=timeout)
    start = time.perf_counter()
    conn.connect()
    connected = time.perf_counter() - start
    conn.request("POST", "/v1/completions", body=body,
                 headers={"Content-Type": "application/json"})
    response = conn.getresponse()
    headers = time.perf_counter() - start
    if response.status != 200:
        raise RuntimeError(f"HTTP {response.status}: {response.read()[:200]!r}")
    tokens, first, last, gaps, done = 0, None, None, [], False
    counted = None  # completion_tokens of the usage chunk, when the server sends one
    buffer = b""
    while not done:
        chunk = response.read1(65536) if hasattr(response, "read1") else response.read(1)
        if not chunk:
            break
        buffer += chunk
        while b"\n\n" in buffer:
            event, buffer = buffer.split(b"\n\n", 1)
            if not event.startswith(b"data: "):
                continue
            data = event[6:]
            if data == b"[DONE]":
                done = True
                break
            payload = json.loads(data)
            if "error" in payload:
                raise RuntimeError(payload["error"].get("message", "error event"))
            usage = payload.get("usage")
            if usage and usage.get("completion_tokens") is not None:
                counted = usage["completion_tokens"]
            choices = payload.get("choices") or []
            if choices and choices[0].get("text"):
                now = time.perf_counter()
                if first is None:
                    first = now - start
                else:
                    gaps.append(now - last)
                last = now
                tokens += 1
    conn.close()
    if not done:
        raise RuntimeError("the stream ended without [DONE]")
    return (counted if counted is not None else tokens), first, gaps, connected, headers


def run_level(url, clients, tokens, rounds, prompt, timeout):
    parsed = urllib.parse.urlparse(url)
    host, port = parsed.hostname, parsed.port or 80
    body = json.dumps({"prompt": prompt, "max_tokens": tokens, "temperature": 0,
                       "ignore_eos": True, "stream": True,
                       "stream_options": {"include_usage": True}})
    results, errors, lock = [], [], threading.Lock()

    def client():
        for _ in range(rounds):
            try:
                r = one_request(host, port, body, timeout)
                with lock:
                    results.append(r)
            except Exception as e:  # noqa: BLE001 - every failure is counted
                with lock:
                    errors.append(str(e))

    threads = [threading.Thread(target=client) for _ in range(clients)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - start
    generated = sum(r[0] for r in results)
    ttft = [r[1] for r in results if r[1] is not None]
    gaps = [g for r in results for g in r[2]]
    slowest = max((r for r in results if r[1] is not None), key=lambda r: r[1], default=None)
    return {
        "clients": clients,
        "requests": len(results) + len(errors),
        "errors": len(errors),
        "first_error": errors[0] if errors else None,
        "generated_events": generated,
        "wall_s": wall,
        "aggregate_tok_s": generated / wall if wall > 0 else 0.0,
        "ttft_p50_ms": percentile(ttft, 50) * 1e3,
        "ttft_p99_ms": percentile(ttft, 99) * 1e3,
        "ttft_max_ms": max(ttft, default=0.0) * 1e3,
        # The slowest first token's parts: connect, then headers (both from
        # the request's start), and the most any connect took.
        "slowest_connect_ms": slowest[3] * 1e3 if slowest else 0.0,
        "slowest_headers_ms": slowest[4] * 1e3 if slowest else 0.0,
        "connect_max_ms": max((r[3] for r in results), default=0.0) * 1e3,
        "itl_p50_ms": percentile(gaps, 50) * 1e3,
        "itl_p99_ms": percentile(gaps, 99) * 1e3,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--url", default="http://127.0.0.1:8080")
    ap.add_argument("--clients", default="1,4,8,16")
    ap.add_argument("--tokens", type=int, default=128)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--prompt", default="Once upon a time")
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    rows = [run_level(args.url, int(c), args.tokens, args.rounds, args.prompt, args.timeout)
            for c in args.clients.split(",")]
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    print("| clients | requests | errors | generated tok/s | TTFT p50 ms | TTFT p99 ms | "
          "ITL p50 ms | ITL p99 ms |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['clients']} | {r['requests']} | {r['errors']} | {r['aggregate_tok_s']:.1f} | "
              f"{r['ttft_p50_ms']:.1f} | {r['ttft_p99_ms']:.1f} | {r['itl_p50_ms']:.2f} | "
              f"{r['itl_p99_ms']:.2f} |")
        if r["first_error"]:
            print(f"  first error: {r['first_error']}", file=sys.stderr)
    return 0 if all(r["errors"] == 0 for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())

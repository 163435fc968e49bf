#!/usr/bin/env python3
"""Pipeline throughput from Python: neardup.fingerprint() over a directory of HTML files, read
into memory first, on N Python threads (the pipeline releases the GIL). Prints the same JSON
fields as `neardup bench` (seconds_median over --repeat passes, pages_per_s, mb_per_s).

    python3 python/bench.py DATA_DIR [--threads N] [--repeat R] [--config F]

With --against NEARDUP, alternates runs of `NEARDUP bench DATA_DIR` and of this benchmark,
--rounds times, with the same threads, repeat and config, and prints each round's pages/s and
the median ratio python / neardup bench: A/B alternation keeps a shared machine's changing load
from favouring one side.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time

import neardup


def html_files(directory):
    """The *.html / *.htm files of a directory, sorted, not recursive (as `neardup bench`)."""
    names = sorted(n for n in os.listdir(directory) if n.endswith((".html", ".htm")))
    return [os.path.join(directory, n) for n in names]


def one_pass(pages, threads, config):
    """Seconds to fingerprint every page once on `threads` threads, and how many were skipped."""
    skipped = 0
    lock = threading.Lock()
    next_page = iter(pages).__next__  # one shared iterator: each page is taken once

    def work():
        nonlocal skipped
        mine = 0
        for body in iter(next_page, None):
            mine += neardup.fingerprint(body, config=config).skipped
        with lock:
            skipped += mine

    start = time.perf_counter()
    if threads == 1:
        work()
    else:
        pool = [threading.Thread(target=work) for _ in range(threads)]
        for t in pool:
            t.start()
        for t in pool:
            t.join()
    return time.perf_counter() - start, skipped


def run_python(data_dir, threads, repeat, config_path):
    config = neardup.Config.load(config_path) if config_path else neardup.Config.default()
    pages = []
    for path in html_files(data_dir):
        with open(path, "rb") as f:
            pages.append(f.read())
    if not pages:
        sys.exit(f"bench.py: no HTML files in {data_dir}")
    passes = []
    for _ in range(repeat):
        seconds, skipped = one_pass(pages, threads, config)
        passes.append(seconds)
    wall = sorted(passes)[len(passes) // 2]  # the median, as `neardup bench` takes it
    size = sum(map(len, pages))
    return {"files": len(pages), "bytes": size, "threads": threads, "repeat": repeat,
            "seconds_median": wall, "mb_per_s": size / 1e6 / wall,
            "pages_per_s": len(pages) / wall, "skipped": skipped, "scheme": config.scheme}


def run_command(command, data_dir, threads, repeat, config_path):
    args = [command, "bench", data_dir, "--threads", str(threads), "--repeat", str(repeat)]
    if config_path:
        args += ["--config", config_path]
    return json.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data_dir", help="a directory of HTML files")
    parser.add_argument("--threads", type=int, default=1, help="Python threads (default 1)")
    parser.add_argument("--repeat", type=int, default=3, help="timed passes; the median counts")
    parser.add_argument("--config", help="a neardup YAML config (default: the defaults)")
    parser.add_argument("--against", metavar="NEARDUP", help="the neardup command to alternate with")
    parser.add_argument("--rounds", type=int, default=5, help="A/B rounds with --against")
    args = parser.parse_args()
    if args.threads < 1 or args.repeat < 1 or args.rounds < 1:
        parser.error("--threads, --repeat and --rounds must be at least 1")
    if not args.against:
        print(json.dumps(run_python(args.data_dir, args.threads, args.repeat, args.config), indent=2))
        return
    rounds = []
    for i in range(args.rounds):
        command = run_command(args.against, args.data_dir, args.threads, args.repeat, args.config)
        python = run_python(args.data_dir, args.threads, args.repeat, args.config)
        if command["scheme"] != python["scheme"] or command["files"] != python["files"]:
            sys.exit("bench.py: the command and the package disagree on scheme or files")
        ratio = python["pages_per_s"] / command["pages_per_s"]
        rounds.append({"neardup_bench_pages_per_s": command["pages_per_s"],
                       "python_pages_per_s": python["pages_per_s"], "ratio": ratio})
        print(f"round {i + 1}: neardup bench {command['pages_per_s']:.1f} pages/s, "
              f"python {python['pages_per_s']:.1f} pages/s, ratio {ratio:.3f}", file=sys.stderr)
    print(json.dumps({"threads": args.threads, "repeat": args.repeat, "files": python["files"], "rounds": rounds,
                      "median_ratio": statistics.median(r["ratio"] for r in rounds)}, indent=2))


if __name__ == "__main__":
    main()

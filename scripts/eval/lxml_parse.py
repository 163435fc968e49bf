#!/usr/bin/env python3
"""The reference for pipeline speed: lxml's bare HTML parse (libxml2 building a tree, nothing
else) over the same files `neardup bench` reads, held in memory, one thread. Prints one JSON line
with MB/s and pages/s (median of --repeat passes), like `neardup bench`.

    python3 scripts/eval/lxml_parse.py DIR|FILE... [--repeat 3]      (pip install lxml)"""
import argparse
import json
import os
import statistics
import time

import lxml.html


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("paths", nargs="+")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    files = []
    for path in args.paths:
        if os.path.isdir(path):
            files += sorted(os.path.join(path, f) for f in os.listdir(path)
                            if f.endswith((".html", ".htm")))
        else:
            files.append(path)
    bodies = [open(f, "rb").read() for f in files]
    total = sum(map(len, bodies))
    times = []
    for _ in range(args.repeat):
        start = time.perf_counter()
        for body in bodies:
            try:
                lxml.html.document_fromstring(body)
            except Exception:  # empty or unparsable documents count as parsed
                pass
        times.append(time.perf_counter() - start)
    seconds = statistics.median(times)
    print(json.dumps({"files": len(bodies), "bytes": total, "seconds_median": seconds,
                      "mb_per_s": total / seconds / 1e6, "pages_per_s": len(bodies) / seconds}))


if __name__ == "__main__":
    main()

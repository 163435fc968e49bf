#!/usr/bin/env python3
"""Who had the CPUs while neardupd's workers ran: reads `perf script -F comm,pid,tid,time` of a
system-wide `perf record -a` on stdin and prints each thread name's share of the samples (idle
included) inside the window from the 2nd to the 98th percentile of the samples of the threads
named nd:work (daemon/README.md, Threads), grouped by process.

  perf record -a -F 999 -o run.perf -- python3 tests/e2e/bench_daemon.py --in=pages.jsonl
  perf script -i run.perf -F comm,pid,tid,time | python3 bench/cpu_shares.py

Names are what the threads were called when sampled: `nd:work` and the other `nd:` threads of
neardupd, `rdk:*` of librdkafka (both in neardupd and in `neardup broker`), the idle task
(`swapper`, pid 0) as `idle`.
"""
import collections
import re
import sys

SAMPLE = re.compile(r"\s*(.+?)\s+(\d+)/(\d+)\s+([\d.]+):")


def main():
    samples = []
    process_names = {}
    for line in sys.stdin:
        match = SAMPLE.match(line)
        if not match:
            continue
        comm, pid, tid, when = match.group(1), match.group(2), match.group(3), float(match.group(4))
        samples.append((comm, pid, when))
        if pid == tid:
            process_names[pid] = comm
    work = sorted(when for comm, _, when in samples if comm == "nd:work")
    if not work:
        sys.exit("cpu_shares.py: no samples of threads named nd:work")
    low, high = work[len(work) * 2 // 100], work[len(work) * 98 // 100]
    shares = collections.Counter()
    for comm, pid, when in samples:
        if low <= when <= high:
            process = process_names.get(pid, "pid " + pid)
            shares["idle" if pid == "0" else f"{process} {comm}"] += 1
    total = sum(shares.values())
    print(f"window {high - low:.2f} s, {total} samples")
    for name, count in shares.most_common():
        if count * 1000 >= total:
            print(f"{100 * count / total:5.1f} %  {name}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Throughput of the scaled-out roles (daemon/README.md, "Scaled out: two roles") on the real
broker: N synthetic pages are produced to an 8-partition input topic first, then

  workers=1, workers=2   the index and that many fingerprint workers (one pipeline thread each)
                         start together; the clock runs from the last one's assignment until
                         the output topic holds N records;
  index                  two workers fill the fingerprint topic and stop; then the index alone
                         starts on the precomputed records: its own ceiling.

Each mode runs RUNS times (a fresh broker each), alternating modes; medians are printed.

  bench_roles.py [COUNT] [RUNS] [--in=PAGES.jsonl]
      (NEARDUP, NEARDUPD, NEARDUP_KAFKA_LIB; kcat on PATH)

With --in=, the pages are read from a JSONL file in the input format (keyed by url) instead of
being generated, and COUNT is the number of lines in it.
"""
import statistics
import sys
import time

import harness as h

ARGS = [a for a in sys.argv[1:] if not a.startswith("--")]
COUNT = int(ARGS[0]) if ARGS else 20000
RUNS = int(ARGS[1]) if len(ARGS) > 1 else 3
PARTITIONS = 8
INPUT = next((a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--in=")), None)
if INPUT:
    with open(INPUT) as f:
        COUNT = sum(1 for line in f if line.strip())


def setup(workdir):
    broker = h.Broker(workdir, [f"pages:{PARTITIONS}", f"fingerprinted:{PARTITIONS}",
                                f"tagged:{PARTITIONS}", "dead:1"])
    if INPUT:
        pages, key_field = INPUT, "url"
    else:
        (pages, _), key_field = h.generate_pages(workdir, COUNT, seed=7), "cluster"
    config = h.write_config(workdir, broker.bootstrap,
                            kafka_extra='  fingerprint_topic: "fingerprinted"\n',
                            extra="pipeline:\n  threads: 1\n  batch_delay_ms: 5\n")
    h.produce(broker.bootstrap, "pages", pages, key_field=key_field)
    return broker, config


def run_mode(mode):
    """Pages per second of one run of `mode` (workers=K or index)."""
    result = []

    def one(workdir):
        broker, config = setup(workdir)
        if mode == "index":
            workers = [h.Daemon(workdir, config, name=f"w{n}", role="fingerprint")
                       for n in range(2)]
            h.wait_for(lambda: h.output_count(broker.bootstrap, "fingerprinted", PARTITIONS)
                       >= COUNT, 300, "every fingerprinted record", 0.1)
            for worker in workers:
                worker.stop(timeout=30)
            daemons = [h.Daemon(workdir, config, name="index", role="index")]
        else:
            daemons = [h.Daemon(workdir, config, name="index", role="index")] + [
                h.Daemon(workdir, config, name=f"w{n}", role="fingerprint")
                for n in range(int(mode.split("=")[1]))]
        for daemon in daemons:
            daemon.wait_assigned()
        start = time.monotonic()
        h.wait_for(lambda: h.output_count(broker.bootstrap, "tagged", PARTITIONS) >= COUNT, 300,
                   "every output", 0.05)
        result.append(COUNT / (time.monotonic() - start))
        for daemon in daemons:
            daemon.stop(timeout=30)

    h.run(one, "bench-roles")
    return result[0]


def main():
    modes = ["workers=1", "workers=2", "index"]
    rates = {mode: [] for mode in modes}
    for n in range(RUNS):
        for mode in modes:
            rates[mode].append(run_mode(mode))
            h.log(f"run {n + 1} {mode}: {rates[mode][-1]:.0f} pages/s")
    for mode in modes:
        print(f"{mode}: median {statistics.median(rates[mode]):.0f} pages/s over {RUNS} runs "
              f"({', '.join(f'{r:.0f}' for r in rates[mode])}); {COUNT} pages, "
              f"{PARTITIONS} partitions")


if __name__ == "__main__":
    main()

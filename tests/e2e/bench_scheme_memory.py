#!/usr/bin/env python3
"""The daemon's memory across fingerprint-scheme changes: neardupd on the real broker tags a
stream of pages while its config is reloaded with a new `fingerprint.seed` (a new scheme) every
PAGES pages, SEEDS times; prints the resident memory (anonymous and file-backed) after each scheme's pages are tagged.

  bench_scheme_memory.py [--seeds N] [--pages P]      (defaults: 6 seeds, 20,000 pages each)

An idle scheme's in-memory deltas are merged into its runs and freed (store/FORMAT.md), so the
anonymous memory should stay near one scheme's, not grow by one scheme's deltas per reload.
Binaries and the broker's jars as for the end-to-end tests (NEARDUP, NEARDUPD,
NEARDUP_KAFKA_LIB)."""
import argparse

import harness as h


def memory_mib(pid):
    """(anonymous, file-backed) resident MiB: the deltas are anonymous memory; the store's
    mapped pages are file-backed and the kernel may drop them."""
    values = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, rest = line.partition(":")
            if key in ("RssAnon", "RssFile"):
                values[key] = int(rest.split()[0]) / 1024
    return values.get("RssAnon", 0.0), values.get("RssFile", 0.0)


def bench(workdir, args):
    broker = h.Broker(workdir, ["pages:1", "tagged:1", "dead:1"])
    config_lines = lambda seed: f"fingerprint:\n  seed: {seed}\npipeline:\n  batch_delay_ms: 5\n"
    config = h.write_config(workdir, broker.bootstrap, extra=config_lines(1))
    daemon = h.Daemon(workdir, config)
    daemon.wait_assigned()
    tagged = 0
    for seed in range(1, args.seeds + 1):
        if seed > 1:
            h.write_config(workdir, broker.bootstrap, extra=config_lines(seed))
            daemon.reload()
            daemon.wait_log("reload accepted", count=seed - 1)
        pages, _ = h.generate_pages(workdir, args.pages, seed=seed, name=f"pages-{seed}.jsonl")
        h.produce(broker.bootstrap, "pages", pages)
        tagged += args.pages
        h.wait_for(lambda: h.output_count(broker.bootstrap, "tagged", 1) >= tagged, 600,
                   f"{tagged} outputs")
        anon, mapped = memory_mib(daemon.process.pid)
        h.log(f"scheme {seed}: {tagged} pages tagged, resident {anon:.0f} MiB anonymous + "
              f"{mapped:.0f} MiB file-backed")
    daemon.terminate()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, default=6)
    parser.add_argument("--pages", type=int, default=20000)
    args = parser.parse_args()
    h.run(lambda workdir: bench(workdir, args), "scheme-memory")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Round trip: N pages through broker + neardupd give exactly N outputs whose verdicts equal
`neardup dedup`'s on the same input in the same order (one input partition keeps the order).
Some planted copies are truncated, so the verdicts include duplicates found by both signatures
and duplicates found by MinHash alone (both kinds must be present).

  test_round_trip.py [COUNT] [exactly_once]   (the second form runs kafka.exactly_once: true)"""
import sys
import time

import harness as h

COUNT = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
EXACTLY_ONCE = len(sys.argv) > 2 and sys.argv[2] == "exactly_once"


def test(workdir):
    broker = h.Broker(workdir, ["pages:1", "tagged:3", "dead:1"])
    pages, urls = h.generate_pages(workdir, COUNT, truncate_rate=0.3)
    config = h.write_config(workdir, broker.bootstrap,
                            kafka_extra="  exactly_once: true\n" if EXACTLY_ONCE else "")
    expected = h.dedup(workdir, config, pages)
    h.produce(broker.bootstrap, "pages", pages)
    start = time.monotonic()
    daemon = h.Daemon(workdir, config)
    records = h.wait_for_outputs(broker.bootstrap, "tagged", set(urls), timeout=120)
    h.log(f"{COUNT} outputs after {time.monotonic() - start:.1f}s (including group join)")
    time.sleep(2)  # anything extra would show up now
    records = h.consume(broker.bootstrap, "tagged", timeout=2)
    h.check(len(records) == COUNT, f"{len(records)} outputs for {COUNT} inputs")
    h.check_outputs(records, urls, expected)
    h.check(not h.consume(broker.bootstrap, "dead", timeout=1), "unexpected dead letters")
    seconds = daemon.stop()
    statuses = {}
    for tag in expected.values():
        key = tag["status"] + (f"/{tag['method']}" if tag["status"] == "duplicate" else "")
        statuses[key] = statuses.get(key, 0) + 1
    h.check(statuses.get("duplicate/minhash", 0) > 0 and statuses.get("duplicate/both", 0) > 0,
            f"the verdicts should include MinHash-only and both-signature duplicates: {statuses}")
    h.log(f"exactly_once={EXACTLY_ONCE}: exactly one output per input: {COUNT}; verdicts equal dedup's; statuses {statuses}; "
          f"SIGTERM exit 0 in {seconds:.2f}s")


if __name__ == "__main__":
    h.run(test, "round-trip")

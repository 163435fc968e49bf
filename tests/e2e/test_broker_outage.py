#!/usr/bin/env python3
"""Broker outage: mid-run the broker goes away for OUTAGE seconds (the real broker's process is
stopped and later started again on the same data; the development broker's brokers are all set
down and up), then comes back; the daemon waits, resumes, loses nothing and exits 0 on SIGTERM.

  test_broker_outage.py [COUNT] [OUTAGE_SECONDS]"""
import sys
import time

import harness as h

COUNT = int(sys.argv[1]) if len(sys.argv) > 1 else 4000
OUTAGE_S = float(sys.argv[2]) if len(sys.argv) > 2 else 10


def test(workdir):
    broker = h.Broker(workdir, ["pages:3", "tagged:6", "dead:1"], brokers=3)
    pages, urls = h.generate_pages(workdir, COUNT, seed=5)
    config = h.write_config(workdir, broker.bootstrap,
                            extra="output:\n  include_body: false\n"
                                  "pipeline:\n  threads: 1\n  batch_delay_ms: 5\n")
    expected = h.dedup(workdir, config, pages)
    h.produce(broker.bootstrap, "pages", pages)
    daemon = h.Daemon(workdir, config)
    daemon.wait_assigned()
    # Down at once: the daemon is then mid-run whatever its speed (reading, fingerprinting and
    # delivering the first pages); counting outputs first would take longer than some runs.
    time.sleep(0.2)
    down = time.monotonic()
    broker.down()
    h.log(f"broker down 0.2s after the assignment; staying down for {OUTAGE_S:.0f}s")
    time.sleep(max(0.0, OUTAGE_S - (time.monotonic() - down)))
    h.check(daemon.alive(), "the daemon exited during the outage")
    broker.up()
    up = time.monotonic()
    h.log(f"broker back after {up - down:.1f}s")
    records = h.settled_outputs(broker.bootstrap, urls, expected, timeout=180)
    h.log(f"all outputs present and settled {time.monotonic() - up:.1f}s after the broker "
          f"came back")
    h.check(daemon.alive(), "the daemon exited after the outage")
    seconds = daemon.stop()
    h.log(f"{COUNT} inputs, {len(records)} outputs ({len(records) - COUNT} replayed copies); "
          f"nothing lost, verdicts equal dedup's; SIGTERM exit 0 in {seconds:.2f}s")


if __name__ == "__main__":
    h.run(test, "broker-outage")

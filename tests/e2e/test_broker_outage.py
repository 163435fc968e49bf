#!/usr/bin/env python3
"""Broker outage: every broker goes down for 10 s mid-run (`down all` on the control file), then
comes back; the daemon waits, resumes and loses nothing."""
import sys
import time

import harness as h

COUNT = int(sys.argv[1]) if len(sys.argv) > 1 else 4000
OUTAGE_S = 10


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
    time.sleep(0.5)
    broker.command("down all")
    h.log(f"all brokers down for {OUTAGE_S}s")
    time.sleep(OUTAGE_S)
    h.check(daemon.alive(), "the daemon exited during the outage")
    broker.command("up all")
    up = time.monotonic()
    records = h.settled_outputs(broker.bootstrap, urls, expected, timeout=120)
    h.log(f"all outputs present and settled {time.monotonic() - up:.1f}s after the brokers "
          f"came back")
    h.check(daemon.alive(), "the daemon exited after the outage")
    seconds = daemon.stop()
    h.log(f"{COUNT} inputs, {len(records)} outputs ({len(records) - COUNT} replayed copies); "
          f"nothing lost, verdicts equal dedup's; SIGTERM exit 0 in {seconds:.2f}s")


if __name__ == "__main__":
    h.run(test, "broker-outage")

#!/usr/bin/env python3
"""SIGTERM under load: with thousands of pages in flight, the daemon stops consuming, drains,
commits and exits 0 within 10 s; a restart resumes and nothing is missing."""
import sys
import time

import harness as h

COUNT = int(sys.argv[1]) if len(sys.argv) > 1 else 6000


def test(workdir):
    broker = h.Broker(workdir, ["pages:4", "tagged:8", "dead:1"])
    pages, urls = h.generate_pages(workdir, COUNT, seed=3)
    config = h.write_config(workdir, broker.bootstrap, extra="output:\n  include_body: false\n")
    expected = h.dedup(workdir, config, pages)
    h.produce(broker.bootstrap, "pages", pages)
    daemon = h.Daemon(workdir, config)
    daemon.wait_assigned()
    time.sleep(1.0)
    before = len(h.consume(broker.bootstrap, "tagged", timeout=0.3))
    code, seconds = daemon.terminate(timeout=30)
    h.log(f"SIGTERM with {before}/{COUNT} outputs published: exit {code} in {seconds:.2f}s")
    h.check(code == 0, f"exit code {code} after SIGTERM")
    h.check(seconds < 10, f"took {seconds:.2f}s to stop")
    h.check(before < COUNT, "the daemon had finished before SIGTERM: no load to drain")
    daemon = h.Daemon(workdir, config)
    records = h.settled_outputs(broker.bootstrap, urls, expected, timeout=120, settle=1)
    replayed = len(records) - COUNT
    daemon.stop()
    h.log(f"restart resumed: {len(records)} outputs for {COUNT} inputs ({replayed} replayed "
          f"copies), nothing missing, verdicts equal dedup's")


if __name__ == "__main__":
    h.run(test, "sigterm")

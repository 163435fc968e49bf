#!/usr/bin/env python3
"""SIGTERM under load: with thousands of pages in flight, the daemon stops consuming, drains,
commits and exits 0 within 10 s; a restart resumes and nothing is missing."""
import re
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
    # Soon after the assignment, so that the daemon is mid-run however fast it is; its own
    # stop line says how far it got (counting outputs first would take longer than some runs).
    time.sleep(0.3)
    code, seconds = daemon.terminate(timeout=30)
    stopped = re.search(r"stopped pages_in=(\d+) outputs=(\d+)", daemon.log_text())
    h.check(stopped, "no 'stopped' line in the daemon's log")
    pages_in, outputs = int(stopped.group(1)), int(stopped.group(2))
    h.log(f"SIGTERM with {pages_in} pages read and {outputs}/{COUNT} outputs published at the "
          f"stop: exit {code} in {seconds:.2f}s")
    h.check(code == 0, f"exit code {code} after SIGTERM")
    h.check(seconds < 10, f"took {seconds:.2f}s to stop")
    h.check(outputs < COUNT, "the daemon had finished before SIGTERM: no load to drain")
    daemon = h.Daemon(workdir, config)
    records = h.settled_outputs(broker.bootstrap, urls, expected, timeout=120, settle=1)
    replayed = len(records) - COUNT
    daemon.stop()
    h.log(f"restart resumed: {len(records)} outputs for {COUNT} inputs ({replayed} replayed "
          f"copies), nothing missing, verdicts equal dedup's")


if __name__ == "__main__":
    h.run(test, "sigterm")

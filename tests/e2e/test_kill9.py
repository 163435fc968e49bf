#!/usr/bin/env python3
"""kill -9 at random moments: while pages stream in, the daemon is killed and restarted several
times. Every input must still get an output, all copies of a page must carry the same verdict,
no page may be a duplicate of itself, and the final verdicts must equal a clean run's
(`neardup dedup` over the same input: pages of one cluster share a partition, so the order that
matters is kept)."""
import random
import sys
import threading
import time

import harness as h

COUNT = int(sys.argv[1]) if len(sys.argv) > 1 else 5000
KILLS = int(sys.argv[2]) if len(sys.argv) > 2 else 5
# "exactly_once": transactional outputs. librdkafka 2.0's mock cluster accepts transactions but
# neither applies their offsets to the group nor hides aborted records, so against it this mode
# is checked for consistent verdicts only; the count of copies is reported, not asserted.
EXACTLY_ONCE = len(sys.argv) > 3 and sys.argv[3] == "exactly_once"
CHUNKS = 10


def produce_gradually(workdir, bootstrap, pages, done):
    with open(pages) as f:
        lines = f.readlines()
    size = (len(lines) + CHUNKS - 1) // CHUNKS  # a crawler publishing in bursts
    for n in range(CHUNKS):
        chunk = workdir.file(f"chunk-{n}.jsonl")
        with open(chunk, "w") as f:
            f.writelines(lines[n * size:(n + 1) * size])
        h.produce(bootstrap, "pages", chunk)
        time.sleep(1.5)
    done.set()


def test(workdir):
    rng = random.Random(int(time.time()))
    broker = h.Broker(workdir, ["pages:4", "tagged:8", "dead:1"])
    pages, urls = h.generate_pages(workdir, COUNT, seed=2)
    # One pipeline thread: slow enough that the kills land while pages are in flight.
    config = h.write_config(workdir, broker.bootstrap,
                            extra="output:\n  include_body: false\n" +
                            "pipeline:\n  threads: 1\n  batch_delay_ms: 5\n",
                            kafka_extra="  exactly_once: true\n" if EXACTLY_ONCE else "")
    expected = h.dedup(workdir, config, pages)
    produced = threading.Event()
    producer = threading.Thread(target=produce_gradually,
                                args=(workdir, broker.bootstrap, pages, produced))
    producer.start()
    daemon = h.Daemon(workdir, config)
    moments = []
    for kill in range(KILLS):
        joined = daemon.wait_assigned()
        # A random moment while the daemon is working: after it has its partitions.
        delay = rng.uniform(0.2, 2.5)
        time.sleep(delay)
        daemon.kill9()
        seen = len(h.consume(broker.bootstrap, "tagged", timeout=0.5))
        moments.append((round(delay, 2), seen))
        h.log(f"kill -9 #{kill + 1} {delay:.2f}s after the assignment (joined in {joined:.1f}s); "
              f"{seen} outputs so far")
        daemon = h.Daemon(workdir, config)
    producer.join()
    records = h.settled_outputs(broker.bootstrap, urls, expected, timeout=150, settle=2)
    daemon.stop()
    h.log(f"exactly_once={EXACTLY_ONCE}: {COUNT} inputs, {KILLS} kills at (delay s, outputs so far) {moments}: "
          f"{len(records)} outputs ({len(records) - COUNT} replayed copies), every input present, "
          f"copies agree, verdicts equal dedup's")


if __name__ == "__main__":
    h.run(test, "kill9")

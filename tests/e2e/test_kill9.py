#!/usr/bin/env python3
"""kill -9 at random moments: while pages stream in, the daemon is killed and restarted several
times. Every input must still get an output, all copies of a page must carry the same verdict,
no page may be a duplicate of itself, and the final verdicts must equal a clean run's
(`neardup dedup` over the same input: pages of one cluster share a partition, so the order that
matters is kept).

  test_kill9.py [COUNT] [KILLS] [exactly_once] [--partitions N] [--spread SECONDS]

The input is produced in 10 bursts over --spread seconds (default 15): spread it over about
7 s per kill (a restarted daemon waits out its killed predecessor's 6 s session) so that every
kill lands while pages are in flight.

With exactly_once (kafka.exactly_once: true) on the real broker, a read_committed consumer of
the output topic must see exactly one output per input, and the records of the transactions
the kills aborted are counted (visible to a read_uncommitted consumer only). librdkafka 2.0's
mock cluster accepts transactions but neither applies their offsets to the group nor hides
aborted records, so on the development broker this mode is checked like at-least-once."""
import random
import sys
import threading
import time

import harness as h

OPTIONS = {"--partitions", "--spread"}
ARGS = [a for i, a in enumerate(sys.argv[1:], 1)
        if not a.startswith("--") and sys.argv[i - 1] not in OPTIONS]
COUNT = int(ARGS[0]) if len(ARGS) > 0 else 5000
KILLS = int(ARGS[1]) if len(ARGS) > 1 else 5
EXACTLY_ONCE = len(ARGS) > 2 and ARGS[2] == "exactly_once"
PARTITIONS = int(sys.argv[sys.argv.index("--partitions") + 1]) if "--partitions" in sys.argv \
    else 4
SPREAD_S = float(sys.argv[sys.argv.index("--spread") + 1]) if "--spread" in sys.argv else 15
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
        time.sleep(SPREAD_S / CHUNKS)
    done.set()


def aborted_runs(bootstrap, committed):
    """Records of the output topic that only a read_uncommitted consumer sees (those of aborted
    transactions), as (records, runs of consecutive offsets per partition)."""
    seen = {(r["partition"], r["offset"]) for r in committed}
    extra = sorted((r["partition"], r["offset"])
                   for r in h.consume(bootstrap, "tagged", timeout=2, committed=False)
                   if (r["partition"], r["offset"]) not in seen)
    runs = sum(1 for i, (p, o) in enumerate(extra)
               if i == 0 or extra[i - 1][0] != p or extra[i - 1][1] + 1 != o)
    return len(extra), runs


def test(workdir):
    rng = random.Random(int(time.time()))
    broker = h.Broker(workdir, [f"pages:{PARTITIONS}", "tagged:8", "dead:1"])
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
    summary = (f"exactly_once={EXACTLY_ONCE} broker={broker.kind}: {COUNT} inputs on "
               f"{PARTITIONS} partitions, {KILLS} kills at (delay s, outputs so far) {moments}: "
               f"{len(records)} outputs")
    if EXACTLY_ONCE and broker.kind == "kafka":
        urls_seen = [r["value"]["url"] for r in records]
        duplicates = len(urls_seen) - len(set(urls_seen))
        missing = len(set(urls) - set(urls_seen))
        aborted, runs = aborted_runs(broker.bootstrap, records)
        h.log(f"{summary} seen by read_committed: {duplicates} duplicates, {missing} missing; "
              f"{aborted} records of aborted transactions ({runs} runs of offsets) seen by "
              f"read_uncommitted only")
        h.check(duplicates == 0 and len(records) == COUNT,
                f"{len(records)} committed outputs for {COUNT} inputs ({duplicates} duplicates)")
    else:
        h.log(f"{summary} ({len(records) - COUNT} replayed copies)")
    h.log("every input present, copies agree, verdicts equal dedup's")


if __name__ == "__main__":
    h.run(test, "kill9")

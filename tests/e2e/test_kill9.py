#!/usr/bin/env python3
"""kill -9 while pages are in flight: the daemon is killed and restarted several times, each
time at the next step of the outputs' progress (plus a random jitter), with the rest of the
input waiting, so that every kill lands in the middle of the work. Every input must still get an output, all copies of a page must carry the same verdict,
no page may be a duplicate of itself, and the final verdicts must equal a clean run's
(`neardup dedup` over the same input: pages of one cluster share a partition, so the order that
matters is kept).

  test_kill9.py [COUNT] [KILLS] [exactly_once] [--partitions N] [--learn]

The whole input is produced before the daemon starts.

With --learn, the scheme learns from the crawl (features.weighting tfidf from the 100th page,
denoise.site_boilerplate; each site's pages end with its own notice) and the input is one
partition: every page's signatures depend on the pages applied before it, so a replayed page
must repeat what it got the first time (its fingerprint and the lines dropped as its site's
boilerplate included) and every verdict must equal dedup's over the same order; some pages must
have had their site's notice dropped.

With exactly_once (kafka.exactly_once: true) on the real broker, a read_committed consumer of
the output topic must see exactly one output per input, and the records of the transactions
the kills aborted are counted (visible to a read_uncommitted consumer only). librdkafka 2.0's
mock cluster accepts transactions but neither applies their offsets to the group nor hides
aborted records, so on the development broker this mode is checked like at-least-once."""
import random
import sys
import time

import harness as h

OPTIONS = {"--partitions"}
LEARN = "--learn" in sys.argv
ARGS = [a for i, a in enumerate(sys.argv[1:], 1)
        if not a.startswith("--") and sys.argv[i - 1] not in OPTIONS]
COUNT = int(ARGS[0]) if len(ARGS) > 0 else 5000
KILLS = int(ARGS[1]) if len(ARGS) > 1 else 5
EXACTLY_ONCE = len(ARGS) > 2 and ARGS[2] == "exactly_once"
PARTITIONS = int(sys.argv[sys.argv.index("--partitions") + 1]) if "--partitions" in sys.argv \
    else 1 if LEARN else 4
LEARNING = ("denoise:\n  site_boilerplate: true\n"
            "features:\n  weighting: tfidf\n  idf_warmup_pages: 100\n") if LEARN else ""


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
    pages, urls = h.generate_pages(workdir, COUNT, seed=2, site_notices=LEARN)
    # One pipeline thread: slow enough that the kills land while pages are in flight.
    config = h.write_config(workdir, broker.bootstrap,
                            extra="output:\n  include_body: false\n" +
                            "pipeline:\n  threads: 1\n  batch_delay_ms: 5\n" + LEARNING,
                            kafka_extra="  exactly_once: true\n" if EXACTLY_ONCE else "")
    expected = h.dedup(workdir, config, pages)
    h.produce(broker.bootstrap, "pages", pages)
    daemon = h.Daemon(workdir, config)
    moments = []
    for kill in range(KILLS):
        joined = daemon.wait_assigned()
        # Step kill + 1 of the progress, jittered: outputs (replayed copies included) so far.
        target = COUNT * (kill + 1 + rng.uniform(-0.4, 0.4)) / (KILLS + 1)
        h.wait_for(lambda: h.output_count(broker.bootstrap, "tagged", 8) >= target, 120,
                   f"{target:.0f} outputs before kill #{kill + 1}", interval=0.02)
        daemon.kill9()
        seen = h.output_count(broker.bootstrap, "tagged", 8)
        moments.append(seen)
        h.log(f"kill -9 #{kill + 1} at {seen} outputs (joined in {joined:.1f}s)")
        daemon = h.Daemon(workdir, config)
    records = h.settled_outputs(broker.bootstrap, urls, expected, timeout=150, settle=2)
    daemon.stop()
    if LEARN:
        dropped = sum(1 for r in records if r["value"]["neardup"].get("site_boilerplate"))
        h.check(dropped > COUNT // 2,
                f"only {dropped} outputs had their site's notice dropped: nothing was learned")
        h.log(f"learning: {dropped} outputs had their site's notice dropped")
    summary = (f"exactly_once={EXACTLY_ONCE} broker={broker.kind}: {COUNT} inputs on "
               f"{PARTITIONS} partitions, {KILLS} kills at outputs {moments}: "
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

#!/usr/bin/env python3
"""A soak of neardupd on the real broker: pages stream in while the daemon is killed (-9),
stopped (SIGTERM), reloaded with valid and invalid configs (SIGHUP), the broker is restarted,
and the store's file system fills up once. At the end: every input has an output, all copies of
an output carry one verdict, none is a duplicate of itself, and every verdict equals a clean
run's (`neardup dedup` over the same pages; pages of one cluster share a partition, so the order
that matters is kept).

  soak.py [--pages N] [--kills K] [--sigterms T] [--sighups H] [--broker-restarts B]
          [--no-disk-full] [--seed S]

Defaults: 20,000 pages, 100 kill -9s, 10 SIGTERMs, 20 SIGHUPs (every other one invalid), 5
broker restarts, one disk-full episode. The store lives on its own tmpfs (needs root). Pages are
produced in bursts spread over the run, so that events land while pages are in flight. Takes
about 6 s per kill (a restarted daemon waits out its killed predecessor's 6 s session).
Binaries and the broker's jars as for the end-to-end tests (NEARDUP, NEARDUPD,
NEARDUP_KAFKA_LIB)."""
import argparse
import os
import random
import subprocess
import threading
import time

import harness as h

VALID_EXTRA = "output:\n  include_body: false\npipeline:\n  batch_delay_ms: {delay}\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", type=int, default=20000)
    parser.add_argument("--kills", type=int, default=100)
    parser.add_argument("--sigterms", type=int, default=10)
    parser.add_argument("--sighups", type=int, default=20)
    parser.add_argument("--broker-restarts", type=int, default=5)
    parser.add_argument("--no-disk-full", action="store_true")
    parser.add_argument("--seed", type=int, default=int(time.time()))
    args = parser.parse_args()
    h.run(lambda workdir: soak(workdir, args), "soak")


def soak(workdir, args):
    rng = random.Random(args.seed)
    mount = workdir.file("fs")
    os.mkdir(mount)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=512m", "tmpfs", mount], check=True)
    workdir.cleanups.append(lambda: subprocess.run(["umount", "-l", mount], check=False))
    broker = h.Broker(workdir, ["pages:4", "tagged:8", "dead:1"])
    pages, urls = h.generate_pages(workdir, args.pages, seed=args.seed % 1000, truncate_rate=0.1)

    def write_config(delay=5):
        return h.write_config(workdir, broker.bootstrap, store="fs/store",
                              extra=VALID_EXTRA.format(delay=delay))

    config = write_config()
    expected = h.dedup(workdir, config, pages)
    events = (["kill -9"] * args.kills + ["SIGTERM"] * args.sigterms +
              ["SIGHUP"] * args.sighups + ["broker restart"] * args.broker_restarts +
              ([] if args.no_disk_full else ["disk full"]))
    rng.shuffle(events)
    spread = 5.0 * len(events)
    with open(pages) as f:
        lines = f.readlines()
    chunks = max(10, len(events) // 2)
    size = (len(lines) + chunks - 1) // chunks

    def produce():
        for n in range(chunks):
            chunk = workdir.file(f"chunk-{n}.jsonl")
            with open(chunk, "w") as f:
                f.writelines(lines[n * size:(n + 1) * size])
            # A broker restart may be under way: retry until the chunk is in.
            while subprocess.run([h.NEARDUP, "produce", "--bootstrap", broker.bootstrap,
                                  "--topic", "pages", "--in", chunk, "--key-field", "cluster"],
                                 stderr=subprocess.DEVNULL).returncode != 0:
                time.sleep(1)
            time.sleep(spread / chunks)

    producer = threading.Thread(target=produce)
    producer.start()
    daemon = h.Daemon(workdir, config)
    daemon.wait_assigned()
    counts = {}
    start = time.monotonic()
    for n, event in enumerate(events):
        time.sleep(rng.uniform(0.2, 2.5))
        if event == "kill -9":
            daemon.kill9()
            daemon = h.Daemon(workdir, config)
            daemon.wait_assigned(timeout=120)
        elif event == "SIGTERM":
            code, seconds = daemon.terminate(timeout=30)
            h.check(code == 0, f"SIGTERM: exit {code}")
            daemon = h.Daemon(workdir, config)
            daemon.wait_assigned(timeout=120)
        elif event == "SIGHUP":
            invalid = counts.get(event, 0) % 2 == 1
            if invalid:
                with open(config, "w") as f:
                    f.write(",")  # a YAML document that once made the parser loop forever
            else:
                write_config(delay=rng.choice([1, 5, 20]))
            outcome = "reload rejected" if invalid else "reload accepted"
            before = daemon.log_text().count(outcome)
            daemon.reload()
            daemon.wait_log(outcome, timeout=30, count=before + 1)
            if invalid:
                write_config()  # a restart must find a valid file
        elif event == "broker restart":
            broker.down()
            time.sleep(rng.uniform(2, 8))
            broker.up()
        else:  # disk full: wait until a batch cannot be committed, then free the space
            filler = os.path.join(mount, "filler")
            h.fill(filler)
            blocked = daemon.log_text().count("store out of space")
            try:
                daemon.wait_log("store out of space", timeout=60, count=blocked + 1)
                h.log("store out of space: the daemon paused")
            finally:
                os.remove(filler)
            daemon.wait_log("store writable again", timeout=60)
        counts[event] = counts.get(event, 0) + 1
        h.check(daemon.alive(), f"the daemon exited after {event}")
        if n % 10 == 9:
            h.log(f"{n + 1}/{len(events)} events {counts}, "
                  f"{h.output_count(broker.bootstrap, 'tagged', 8)} outputs so far, "
                  f"{time.monotonic() - start:.0f}s")
    producer.join()
    records = h.settled_outputs(broker.bootstrap, urls, expected, timeout=300, settle=2)
    daemon.stop(timeout=30)
    h.log(f"soak seed={args.seed}: {args.pages} pages, events {counts} in "
          f"{time.monotonic() - start:.0f}s: {len(records)} outputs "
          f"({len(records) - args.pages} replayed copies); 0 lost, 0 inconsistent verdicts, "
          f"0 self-duplicates, every verdict equal to neardup dedup's")


if __name__ == "__main__":
    main()

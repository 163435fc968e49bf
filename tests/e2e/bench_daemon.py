#!/usr/bin/env python3
"""Whole-daemon throughput through the development broker: N synthetic pages are produced to an
input topic first, then neardupd is started; the clock runs from its partition assignment until
the daemon has had N outputs acknowledged (its metrics, polled every 20 ms; the output
topic's high watermarks are checked afterwards). Prints pages/s and MB/s (input bytes), and
`neardup dedup`'s pages/s on the same input for comparison.

  bench_daemon.py [COUNT] [PARTITIONS] [--in=PAGES.jsonl] [--lookups[=PER_SECOND]]
                  [--producer=PROPERTY=VALUE ...]
      (NEARDUP, NEARDUPD: binaries; kcat on PATH)

With --in=, the pages are read from a JSONL file in the input format (keyed by url) instead of
being generated, and COUNT is the number of lines in it. With --lookups, the daemon answers
queries (metrics.queries) and a client POSTs the input pages to /v1/lookup, one after another
(at most PER_SECOND a second when given), for as long as the daemon works; the number of
lookups answered is printed too. Each --producer sets one of the daemon's
kafka.producer_properties (e.g. --producer=linger.ms=5).
"""
import os
import re
import subprocess
import sys
import threading
import time
import urllib.request

import harness as h

ARGS = [a for a in sys.argv[1:] if not a.startswith("--")]
LOOKUP_ARGS = [a for a in sys.argv[1:] if a.startswith("--lookups")]
LOOKUPS = bool(LOOKUP_ARGS)
LOOKUP_RATE = float(LOOKUP_ARGS[0].split("=", 1)[1]) if LOOKUPS and "=" in LOOKUP_ARGS[0] else 0
PRODUCER = [a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--producer=")]
INPUT = next((a.split("=", 1)[1] for a in sys.argv[1:] if a.startswith("--in=")), None)
COUNT = int(ARGS[0]) if ARGS else 20000
PARTITIONS = int(ARGS[1]) if len(ARGS) > 1 else 12


def delivered(port):
    """Outputs and dead letters the broker has acknowledged, from the daemon's metrics."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
        text = response.read().decode()
    return sum(float(value) for value in re.findall(
        r"^neardup_(?:pages_out|dead_letters)_total\{[^}]*\} (\S+)$", text, re.M))


def producer_properties():
    """The --producer settings as the config's kafka.producer_properties lines."""
    if not PRODUCER:
        return ""
    lines = []
    for setting in PRODUCER:
        name, value = setting.split("=", 1)
        lines.append(f'    {name}: "{value}"\n')
    return "  producer_properties:\n" + "".join(lines)


def bench(workdir):
    broker = h.Broker(workdir, [f"pages:{PARTITIONS}", f"tagged:{PARTITIONS}", "dead:1"])
    global COUNT
    if INPUT:
        pages, key_field = INPUT, "url"
        with open(INPUT) as f:
            COUNT = sum(1 for line in f if line.strip())
    else:
        (pages, _), key_field = h.generate_pages(workdir, COUNT, seed=7), "cluster"
    megabytes = os.path.getsize(pages) / 1e6
    port = h.free_port()
    config = h.write_config(workdir, broker.bootstrap, metrics_listen=f"127.0.0.1:{port}",
                            queries=LOOKUPS, kafka_extra=producer_properties())
    start = time.monotonic()
    subprocess.run([h.NEARDUP, "dedup", "--store", workdir.file("dedup-store"), "--config",
                    config, "--in", pages, "--out", os.devnull], check=True,
                   stderr=subprocess.DEVNULL)
    dedup_rate = COUNT / (time.monotonic() - start)
    h.produce(broker.bootstrap, "pages", pages, key_field=key_field)
    daemon = h.Daemon(workdir, config)
    daemon.wait_assigned()
    done = threading.Event()
    answered = [0]

    def ask():
        with open(pages, "rb") as f:
            lines = [line for line in f if line.strip()]
        while not done.is_set():
            for line in lines:
                if done.is_set():
                    break
                request = urllib.request.Request(f"http://127.0.0.1:{port}/v1/lookup", data=line,
                                                 headers={"Content-Type": "application/json"})
                with urllib.request.urlopen(request, timeout=30) as response:
                    response.read()
                answered[0] += 1
                if LOOKUP_RATE:
                    time.sleep(max(0.0, start + answered[0] / LOOKUP_RATE - time.monotonic()))

    asker = threading.Thread(target=ask) if LOOKUPS else None
    start = time.monotonic()
    if asker:
        asker.start()
    # The daemon's own count of acknowledged outputs, read every 20 ms from its metrics (cheap,
    # where a kcat process per poll took a few per cent of the two cores); the topic's
    # watermarks confirm it afterwards.
    h.wait_for(lambda: delivered(port) >= COUNT, 300, "all outputs", 0.02)
    seconds = time.monotonic() - start
    in_topic = h.output_count(broker.bootstrap, "tagged", PARTITIONS)
    assert in_topic >= COUNT, f"the output topic holds {in_topic} records, not {COUNT}"
    done.set()
    if asker:
        asker.join()
    daemon.stop()
    print(f"pages={COUNT} input_MB={megabytes:.1f} partitions={PARTITIONS} seconds={seconds:.2f} "
          f"daemon_pages_per_s={COUNT / seconds:.0f} daemon_MB_per_s={megabytes / seconds:.2f} "
          f"dedup_pages_per_s={dedup_rate:.0f} cores={os.cpu_count()}"
          + (f" lookups={answered[0]} lookups_per_s={answered[0] / seconds:.0f}" if LOOKUPS else ""))


if __name__ == "__main__":
    h.run(bench, "bench")

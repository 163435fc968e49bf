#!/usr/bin/env python3
"""A store whose file system fills up while the daemon runs (docs/operations.md, "Out of
space"): the daemon must stop consuming and say why — the log, neardup_store_blocked, /readyz —
stay alive and healthy, and, once space is freed, resume by itself and lose nothing: every input
gets an output and every verdict equals `neardup dedup`'s.

The store lives on its own small tmpfs (needs root, as CI runs). After a first share of the
pages is in, a filler file takes every free byte; the next pages then cannot be committed.

  test_disk_full.py [COUNT]
"""
import os
import subprocess
import sys

import harness as h

COUNT = int(sys.argv[1]) if len(sys.argv) > 1 else 6000
FIRST = 1000


def test(workdir):
    mount = workdir.file("fs")
    os.mkdir(mount)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=48m", "tmpfs", mount], check=True)
    workdir.cleanups.append(lambda: subprocess.run(["umount", "-l", mount], check=False))
    broker = h.Broker(workdir, ["pages:2", "tagged:8", "dead:1"])
    pages, urls = h.generate_pages(workdir, COUNT, seed=11)
    port = h.free_port()
    url = f"http://127.0.0.1:{port}"
    config = h.write_config(workdir, broker.bootstrap, store="fs/store",
                            metrics_listen=f"127.0.0.1:{port}",
                            extra="output:\n  include_body: false\n"
                                  "pipeline:\n  batch_delay_ms: 5\n  max_in_flight: 500\n")
    expected = h.dedup(workdir, config, pages)
    first, rest = h.split_pages(workdir, pages, FIRST)
    daemon = h.Daemon(workdir, config)
    daemon.wait_assigned()
    h.produce(broker.bootstrap, "pages", first)
    h.wait_for(lambda: h.output_count(broker.bootstrap, "tagged", 8) >= FIRST, 60,
               "the first pages' outputs")
    filler = os.path.join(mount, "filler")
    h.log(f"filled the store's file system with {h.fill(filler) / 2**20:.1f} MiB; "
          f"{os.statvfs(mount).f_bavail * os.statvfs(mount).f_frsize} bytes left")
    h.produce(broker.bootstrap, "pages", rest)
    log_text = daemon.wait_log("store out of space, input paused", timeout=90)
    line = next(l for l in log_text.splitlines() if "store out of space" in l)
    h.log(f"daemon: {line[:300]}")
    h.check(mount in line and "bytes free" in line, "the log line names the path and free bytes")
    samples = h.scrape(url)
    h.check(h.metric(samples, "neardup_store_blocked") == 1, "neardup_store_blocked is not 1")
    status, body = h.get(url + "/readyz")
    h.check(status == 503 and "out of space" in body, f"/readyz: {status} {body}")
    status, _ = h.get(url + "/healthz")
    h.check(status == 200, f"/healthz {status} while blocked: the watchdog would restart it")
    held = h.output_count(broker.bootstrap, "tagged", 8)
    h.log(f"blocked: /readyz 503 ({body.strip()[:120]}...), /healthz 200, {held} outputs")
    h.check(held < COUNT, "every page was tagged although the store was full")
    os.remove(filler)
    daemon.wait_log("store writable again", timeout=30)
    h.settled_outputs(broker.bootstrap, urls, expected, timeout=120)
    samples = h.scrape(url)
    h.check(h.metric(samples, "neardup_store_blocked") == 0, "neardup_store_blocked stays 1")
    h.check(daemon.alive(), "the daemon exited")
    daemon.stop()
    h.log(f"resumed after space returned: {COUNT} inputs, every one tagged as neardup dedup "
          f"tags it")


if __name__ == "__main__":
    h.run(test, "disk-full")

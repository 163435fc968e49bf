#!/usr/bin/env python3
"""One writer per store (docs/operations.md, "One writer per store"). While neardupd runs:
`neardup dedup --store` on its store fails at once with exit 3 and an error naming the store and
the daemon's pid; a second neardupd with the same config exits 3 with the same error before it
joins the group; `neardup stats` (read-only) works beside the daemon. The daemon keeps running
and loses nothing: every page produced before and after the refused writers gets its output.
Once the daemon has stopped, `neardup dedup` opens the store."""
import subprocess
import time

import harness as h

COUNT = 400


def test(workdir):
    broker = h.Broker(workdir, ["pages:2", "tagged:2", "dead:1"])
    pages, urls = h.generate_pages(workdir, COUNT, seed=11)
    halves = h.split_pages(workdir, pages, COUNT // 2)
    config = h.write_config(workdir, broker.bootstrap)
    store = workdir.file("store")
    daemon = h.Daemon(workdir, config)
    daemon.wait_assigned()
    h.produce(broker.bootstrap, "pages", halves[0])
    h.wait_for_outputs(broker.bootstrap, "tagged", set(urls[:COUNT // 2]), timeout=60)

    expected = f"the store {store} is open for writing by pid {daemon.process.pid}"
    start = time.monotonic()
    refused = subprocess.run([h.NEARDUP, "dedup", "--store", store, "--config", config, "--in",
                              halves[1], "--out", workdir.file("refused.jsonl")],
                             capture_output=True, text=True, timeout=30)
    seconds = time.monotonic() - start
    h.check(refused.returncode == 3 and expected in refused.stderr,
            f"neardup dedup beside the daemon: exit {refused.returncode}, {refused.stderr!r}")
    h.log(f"neardup dedup refused in {seconds:.2f}s, exit 3: {refused.stderr.strip()}")

    second = h.Daemon(workdir, config, name="second")
    code = second.process.wait(timeout=30)
    h.check(code == 3 and expected in second.log_text(),
            f"a second neardupd on the store: exit {code}, log {second.log_text()!r}")
    h.check("assigned partitions" not in second.log_text(), "the second daemon joined the group")
    h.log(f"a second neardupd exited 3: {second.log_text().strip()}")

    stats = subprocess.run([h.NEARDUP, "stats", "--store", store], capture_output=True,
                           text=True, timeout=30)
    h.check(stats.returncode == 0, f"neardup stats beside the daemon: {stats.stderr!r}")

    h.check(daemon.alive(), "the daemon stopped")
    h.produce(broker.bootstrap, "pages", halves[1])
    h.settled_outputs(broker.bootstrap, urls, None, timeout=60)
    h.check(not h.consume(broker.bootstrap, "dead", timeout=1), "unexpected dead letters")
    daemon.stop()
    h.log(f"the daemon kept running: {COUNT} inputs, every one with an output; SIGTERM exit 0")

    after = subprocess.run([h.NEARDUP, "dedup", "--store", store, "--config", config, "--in",
                            halves[1], "--out", workdir.file("after.jsonl")],
                           capture_output=True, text=True, timeout=60)
    h.check(after.returncode == 0, f"neardup dedup after the daemon stopped: {after.stderr!r}")
    h.log("after the daemon stopped, neardup dedup opened the store")


if __name__ == "__main__":
    h.run(test, "store-lock")

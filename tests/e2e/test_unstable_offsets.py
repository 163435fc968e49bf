#!/usr/bin/env python3
"""A crashed member's open transaction holds the group's offsets (daemon/README.md, "Scaled
out: two roles"): no input is processed twice while it does.

  test_unstable_offsets.py [COUNT]

A fingerprint worker (exactly_once) fingerprints COUNT pages on two input partitions and stops.
Then a member of its group crashes inside a transaction that commits offsets of both
partitions (tests/kafka/OpenTransaction.java, killed -9): until the broker aborts it, after its
transaction.timeout.ms, the broker answers UNSTABLE_OFFSET_COMMIT for them. A second worker
joins and waits for them; meanwhile a third joins, so the group rebalances while the offsets are
unstable (librdkafka 2.0 would then start a partition at auto.offset.reset, the oldest page).
Once the transaction is aborted, both workers resume at the first worker's committed offsets:
the fingerprint topic holds each input exactly once (read_committed), and the waiting worker
said what it waited for."""
import os
import subprocess
import sys
import time

import harness as h

COUNT = int(sys.argv[1]) if len(sys.argv) > 1 else 400
TRANSACTION_TIMEOUT_MS = 20000  # long enough for the second worker to join and ask under load


def committed_fingerprints(bootstrap):
    return h.consume(bootstrap, "fingerprinted", timeout=2)


def test(workdir):
    broker = h.Broker(workdir, ["pages:2", "fingerprinted:2", "tagged:2", "dead:1"])
    h.check(broker.kind == "kafka", "needs the real broker (transactional offsets)")
    pages, urls = h.generate_pages(workdir, COUNT, seed=9)
    config = h.write_config(workdir, broker.bootstrap,
                            kafka_extra='  fingerprint_topic: "fingerprinted"\n'
                                        '  exactly_once: true\n')
    h.produce(broker.bootstrap, "pages", pages)

    first = h.Daemon(workdir, config, name="fingerprint-1", role="fingerprint")
    h.wait_for(lambda: len(committed_fingerprints(broker.bootstrap)) >= COUNT, 120,
               f"{COUNT} fingerprinted records")
    first.stop(timeout=30)

    java = ["java", "-cp", os.path.join(h.KAFKA_LIB, "*"),
            os.path.join(h.HERE, "..", "kafka", "OpenTransaction.java"), broker.bootstrap,
            "neardup", "pages", "2", "1", str(TRANSACTION_TIMEOUT_MS)]
    zombie = subprocess.Popen(java, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    workdir.processes.append(zombie)
    h.check(zombie.stdout.readline().strip() == "open", "the open transaction did not start")
    opened = time.monotonic()
    zombie.kill()
    zombie.wait()
    h.log("a member crashed inside a transaction holding the offsets of pages/0 and pages/1")

    waiting = h.Daemon(workdir, config, name="fingerprint-2", role="fingerprint")
    waiting.wait_log("started role=fingerprint")
    time.sleep(4)  # joined, and asking for the offsets
    joining = h.Daemon(workdir, config, name="fingerprint-3", role="fingerprint")
    # The broker aborts the transaction within transaction.timeout.ms plus its 10 s check.
    h.wait_for(lambda: time.monotonic() - opened > TRANSACTION_TIMEOUT_MS / 1000 + 12, 60,
               "the open transaction's abort")
    for daemon in (waiting, joining):
        daemon.wait_log("assigned partitions", timeout=60)
    time.sleep(5)  # anything processed again would be committed by now
    records = committed_fingerprints(broker.bootstrap)
    for daemon in (waiting, joining):
        daemon.stop(timeout=30)
    h.check(len(records) == COUNT,
            f"{len(records)} committed fingerprinted records for {COUNT} inputs: pages were "
            f"processed again from the oldest offset")
    logs = waiting.log_text() + joining.log_text()
    h.check("waiting for committed offsets" in logs,
            "no worker said it waited for the offsets the open transaction held")
    h.log(f"{len(records)} fingerprinted records for {COUNT} inputs after a rebalance while "
          f"the offsets were unstable; the waiting worker logged: "
          f"{next(l for l in logs.splitlines() if 'waiting for committed' in l)[:160]}...")


if __name__ == "__main__":
    h.run(test, "unstable-offsets")

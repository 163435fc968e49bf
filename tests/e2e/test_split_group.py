#!/usr/bin/env python3
"""No silent split (daemon/README.md, "One daemon per consumer group"). Daemon A owns all four
input partitions and tags the first pages. Daemon B starts with the same config but its own
store: the group splits the partitions between them. Both log an error naming the group and
the remedy, export neardup_partial_assignment = the partitions they miss, answer /readyz 503,
send systemd a STATUS= line saying so (A, whose notify socket the test plays), and consume nothing: pages produced while the group is split get no output. When B stops, A is
assigned every partition again, says so, and tags every page with its one index."""
import os
import sys
import time

import harness as h

sys.path.insert(0, os.path.join(h.HERE, "..", "..", "ops", "testing"))
from notify_listener import NotifyListener  # noqa: E402

FIRST = 200
WHILE_SPLIT = 200


def partial(daemon_url):
    return h.metric(h.scrape(daemon_url), "neardup_partial_assignment")


def test(workdir):
    broker = h.Broker(workdir, ["pages:4", "tagged:2", "dead:1"])
    pages, urls = h.generate_pages(workdir, FIRST + WHILE_SPLIT, seed=12)
    parts = h.split_pages(workdir, pages, FIRST, ("first.jsonl", "while-split.jsonl"))
    configs = [h.write_config(workdir, broker.bootstrap, name=f"{name}.yaml", store=f"store-{name}",
                              metrics_listen=f"127.0.0.1:{h.free_port()}")
               for name in ("a", "b")]

    listener = NotifyListener(workdir.file("notify.sock"))
    workdir.cleanups.append(listener.close)
    a = h.Daemon(workdir, configs[0], name="a", env={"NOTIFY_SOCKET": listener.path})
    a_url = a.metrics_url()
    a.wait_assigned()
    h.produce(broker.bootstrap, "pages", parts[0])
    h.wait_for_outputs(broker.bootstrap, "tagged", set(urls[:FIRST]), timeout=60)
    h.check(partial(a_url) == 0 and h.get(a_url + "/readyz")[0] == 200,
            "A alone should own every partition and be ready")

    b = h.Daemon(workdir, configs[1], name="b")
    b_url = b.metrics_url()
    for daemon in (a, b):
        daemon.wait_log("partial assignment", timeout=60)
    h.wait_for(lambda: partial(a_url) > 0 and partial(b_url) > 0, 30, "both gauges")
    missing = (partial(a_url), partial(b_url))
    h.check(sum(missing) == 4, f"the gauges should add up to the 4 partitions: {missing}")
    for name, url in (("A", a_url), ("B", b_url)):
        status, body = h.get(url + "/readyz")
        h.check(status == 503 and "partial assignment" in body, f"{name} /readyz: {status} {body}")
    status = h.wait_for(lambda: next((line for _, lines in listener.messages(timeout=0.5)
                                      for line in lines
                                      if line.startswith("STATUS=not ready: partial")), None),
                        15, "A's STATUS= line about the partial assignment")
    h.log(f"A's {status[:110]}...")
    h.log(f"split: neardup_partial_assignment A={missing[0]:.0f} B={missing[1]:.0f}; "
          f"/readyz 503 {h.get(b_url + '/readyz')[1].strip()!r}")
    for name, daemon in (("A", a), ("B", b)):
        lines_logged = [line for line in daemon.log_text().splitlines()
                        if "partial assignment" in line or "assigned partitions" in line]
        h.log(f"{name} logged:\n  " + "\n  ".join(lines_logged))

    h.produce(broker.bootstrap, "pages", parts[1])
    time.sleep(6)
    outputs = h.consume(broker.bootstrap, "tagged", timeout=2)
    tagged_while_split = {r["value"]["url"] for r in outputs} & set(urls[FIRST:])
    h.check(not tagged_while_split,
            f"{len(tagged_while_split)} pages were tagged while the group was split")
    h.check(h.metric(h.scrape(b_url), "neardup_pages_in_total") == 0, "B consumed pages")
    h.check(h.metric(h.scrape(b_url), "neardup_index_documents") == 0, "B indexed pages")
    h.log(f"while split: {WHILE_SPLIT} pages produced, none tagged ({len(outputs)} outputs, all "
          f"of the first {FIRST}); B consumed nothing")

    b.stop()
    a.wait_log("assignment complete again", timeout=60)
    h.settled_outputs(broker.bootstrap, urls, None, timeout=60)
    h.check(partial(a_url) == 0 and h.get(a_url + "/readyz")[0] == 200,
            "A should be ready again")
    resumed = [line for line in a.log_text().splitlines() if "complete again" in line]
    h.log(f"B stopped: A logged {resumed}; all {FIRST + WHILE_SPLIT} pages tagged by A's index")
    a.stop()


if __name__ == "__main__":
    h.run(test, "split-group")

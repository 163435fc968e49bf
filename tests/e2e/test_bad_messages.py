#!/usr/bin/env python3
"""Bad messages: records that cannot be read as pages go to the dead-letter topic with their
original bytes and reason; readable but useless pages are output as skipped; the daemon keeps
running and every input yields exactly one record.

The oversized body is 2 MB against input.max_body_bytes 1MiB (the same rule as 20 MB against the
default 10 MiB, which test_big_body.py checks): the development broker keeps only about 5 MB per
partition, and the real broker's input topic is created to accept 8 MiB records."""
import json
import time

import harness as h

BAD = h.BAD_RECORDS + [
    (json.dumps({"url": "https://bad.example/huge", "body": "<p>" + "word " * 400000 + "</p>"}),
     "tagged", "too_large"),
]
GOOD = 300


def test(workdir):
    broker = h.Broker(workdir, ["pages:2:max.message.bytes=8388608", "tagged:4", "dead:1"])
    pages, urls = h.generate_pages(workdir, GOOD, seed=4)
    with open(pages) as f:
        good_lines = f.read().splitlines()
    mixed = workdir.file("mixed.jsonl")
    lines = []
    for n, line in enumerate(good_lines):
        lines.append(line)
        if n % (GOOD // len(BAD)) == 0 and n // (GOOD // len(BAD)) < len(BAD):
            lines.append(BAD[n // (GOOD // len(BAD))][0])
    with open(mixed, "w") as f:
        f.write("\n".join(lines) + "\n")
    config = h.write_config(workdir, broker.bootstrap,
                            extra="input:\n  max_body_bytes: 1MiB\npipeline:\n  batch_delay_ms: 5\n")
    h.produce(broker.bootstrap, "pages", mixed)
    daemon = h.Daemon(workdir, config)
    expected_out = set(urls) | {json.loads(r)["url"] for r, where, _ in BAD if where == "tagged"}
    h.wait_for_outputs(broker.bootstrap, "tagged", expected_out, timeout=90)
    time.sleep(1)
    tagged = h.consume(broker.bootstrap, "tagged", timeout=2)
    dead = h.consume(broker.bootstrap, "dead", timeout=2)
    h.check(daemon.alive(), "the daemon stopped on bad input")
    h.check(len(tagged) + len(dead) == len(lines),
            f"{len(tagged)} outputs + {len(dead)} dead letters != {len(lines)} inputs")
    by_url = {r["value"]["url"]: r["value"]["neardup"] for r in tagged}
    reasons = {}
    for record, where, reason in BAD:
        if where == "tagged":
            tag = by_url[json.loads(record)["url"]]
            h.check(tag["status"] == "skipped" and tag["reason"] == reason,
                    f"{reason}: got {tag}")
            reasons[reason] = "skipped"
            continue
        matches = [d for d in dead if d["headers"].get("neardup-error") == reason]
        h.check(len(matches) == 1, f"{reason}: {len(matches)} dead letters")
        letter = matches[0]
        value = letter["value"]
        h.check(h.same_record(value, record),
                f"{reason}: dead letter value {value!r:.200} != {record!r:.200}")
        h.check(letter["headers"].get("neardup-error-detail"), f"{reason}: no detail")
        source = letter["headers"].get("neardup-source", "")
        h.check(source.startswith("pages/") and source.count("/") == 2,
                f"{reason}: neardup-source {source!r}")
        reasons[reason] = f"dead letter ({letter['headers']['neardup-error-detail']})"
    h.check_outputs([r for r in tagged if "cluster" in r["value"]], urls)
    daemon.stop()
    h.log(f"{len(lines)} inputs = {len(tagged)} outputs + {len(dead)} dead letters; " +
          "; ".join(f"{k}: {v}" for k, v in reasons.items()))


if __name__ == "__main__":
    h.run(test, "bad-messages")

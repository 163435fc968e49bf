#!/usr/bin/env python3
"""A 20 MB page among bad records, with the default input.max_body_bytes (10 MiB).

The 20 MB record (an HTML body of random words, about 5.3 MB even under zstd) goes through
`neardup produce`, the broker (its input topic accepts 32 MiB records), `neardup consume` and
neardupd: it yields exactly one output, tagged skipped/too_large and without its body;
not-JSON, not-an-object, missing url, wrong type and invalid base64 records go to the
dead-letter topic with their reason; empty and low-content pages are skipped; the daemon keeps
running and processes the records produced after the big one; every input yields exactly one
output or dead letter.

Two 2 MB records are larger than the output and dead-letter topics accept (the real broker's
default message.max.bytes, about 1 MB): a page whose tagged output carries its 2 MB body, and a
2 MB record that is not JSON. The broker refuses both; the daemon republishes the output without
its body and the dead letter with an empty value. Each counts once in
neardup_pages_out_total / neardup_dead_letters_total: the counters add up to the records fed.

The development broker (librdkafka 2.0's mock) keeps about 5 MB per partition: a batch larger
than that survives only as the first batch of an empty partition, and is lost together with the
next batch appended to that partition. So the big record goes alone to partition 1 of the input
topic and everything else to partition 0 (`neardup produce --partition`). It accepts records of
any size, so there the 2 MB output and dead letter keep their bodies."""
import json
import random
import sys
import time

import harness as h

BIG_BYTES = 20 * 1000 * 1000
BIG_URL = "https://big.example/20mb"

# exactly_once: inside transactions, where the refused records must be shrunk before producing
# (the daemon reads the topics' max.message.bytes at start).
EXACTLY_ONCE = len(sys.argv) > 1 and sys.argv[1] == "exactly_once"
BAD = h.BAD_RECORDS
GOOD_BEFORE = 150
GOOD_AFTER = 50
# Larger than the output topics accept, smaller than input.max_body_bytes.
OVER_OUTPUT_BYTES = 2 * 1000 * 1000
OVER_URL = "https://big.example/2mb-output"
OVER_DEAD_URL = "https://big.example/2mb-dead-letter"  # fetched_at is not a time: bad_fetched_at


def big_page(size=BIG_BYTES, url=BIG_URL, seed=20):
    """A JSON page whose body is `size` bytes of paragraphs of random words (not trivially
    compressible: zstd keeps about a quarter of it)."""
    rng = random.Random(seed)
    syllables = ["ka", "lo", "mi", "ne", "ru", "ta", "vo", "shi", "den", "par", "qua", "zel"]
    words = sorted({"".join(rng.choice(syllables) for _ in range(rng.randint(2, 4)))
                    for _ in range(3000)})
    parts, length = ["<!doctype html><html><head><title>big</title></head><body><article>\n"], 0
    while length < size:
        paragraph = "<p>" + " ".join(rng.choices(words, k=rng.randint(40, 120))) + ".</p>\n"
        parts.append(paragraph)
        length += len(paragraph)
    parts.append("</article></body></html>")
    return {"url": url, "cluster": "big", "body": "".join(parts), "site": "big.example"}


def produce(bootstrap, path, partition):
    h.subprocess.run([h.NEARDUP, "produce", "--bootstrap", bootstrap, "--topic", "pages", "--in",
                      path, "--key-field", "cluster", "--partition", str(partition)], check=True,
                     stderr=h.subprocess.DEVNULL)


def test(workdir):
    broker = h.Broker(workdir, ["pages:2:max.message.bytes=33554432", "tagged:4", "dead:1"])
    pages, urls = h.generate_pages(workdir, GOOD_BEFORE + GOOD_AFTER, seed=20)
    with open(pages) as f:
        good_lines = f.read().splitlines()
    before = []
    step = GOOD_BEFORE // len(BAD)
    for n, line in enumerate(good_lines[:GOOD_BEFORE]):
        before.append(line)
        if n % step == 0 and n // step < len(BAD):
            before.append(BAD[n // step][0])
    # Accepted by the input topic, refused by the output and dead-letter topics.
    over_output = big_page(OVER_OUTPUT_BYTES, OVER_URL, seed=21)
    over_dead = dict(big_page(OVER_OUTPUT_BYTES, OVER_DEAD_URL, seed=22), fetched_at="yesterday")
    before[GOOD_BEFORE // 3:GOOD_BEFORE // 3] = [json.dumps(over_output), json.dumps(over_dead)]
    after = good_lines[GOOD_BEFORE:]
    big = big_page()
    big_line = json.dumps(big)
    h.check(len(big["body"]) >= BIG_BYTES, "the big body is too small")
    h.write_lines(workdir.file("before.jsonl"), before)
    h.write_lines(workdir.file("big.jsonl"), [big_line])
    h.write_lines(workdir.file("after.jsonl"), after)

    start = time.monotonic()
    produce(broker.bootstrap, workdir.file("before.jsonl"), 0)
    produce(broker.bootstrap, workdir.file("big.jsonl"), 1)
    h.log(f"produced {len(before)} records and one of {len(big_line)} bytes "
          f"in {time.monotonic() - start:.1f}s")

    # neardup consume reads the big record back unchanged.
    records = h.consume(broker.bootstrap, "pages", timeout=2)
    bigs = [r for r in records if isinstance(r["value"], dict) and r["value"].get("url") == BIG_URL]
    h.check(len(bigs) == 1 and bigs[0]["partition"] == 1 and bigs[0]["value"] == big,
            f"the big record did not come back unchanged from the broker ({len(bigs)} copies)")
    h.check(len(records) == len(before) + 1, f"{len(records)} input records on the broker, "
                                             f"expected {len(before) + 1}")

    # Default input.max_body_bytes: 10MiB.
    config = h.write_config(workdir, broker.bootstrap, metrics_listen=f"127.0.0.1:{h.free_port()}",
                            kafka_extra="  exactly_once: true\n" if EXACTLY_ONCE else "")
    daemon = h.Daemon(workdir, config)
    metrics = daemon.metrics_url()
    expected = set(urls[:GOOD_BEFORE]) | {BIG_URL, OVER_URL} | {
        json.loads(r)["url"] for r, where, _ in BAD if where == "tagged"}
    h.wait_for_outputs(broker.bootstrap, "tagged", expected, timeout=60)
    h.log(f"outputs for the records before and the big one after {time.monotonic() - start:.1f}s")

    # Records produced after the big one are processed too.
    produce(broker.bootstrap, workdir.file("after.jsonl"), 0)
    h.wait_for_outputs(broker.bootstrap, "tagged", expected | set(urls[GOOD_BEFORE:]), timeout=60)
    time.sleep(1)
    tagged = h.consume(broker.bootstrap, "tagged", timeout=2)
    dead = h.consume(broker.bootstrap, "dead", timeout=2)
    h.check(daemon.alive(), "the daemon stopped")
    inputs = len(before) + 1 + len(after)
    h.check(len(tagged) + len(dead) == inputs,
            f"{len(tagged)} outputs + {len(dead)} dead letters != {inputs} inputs")

    big_outputs = [r for r in tagged if r["value"]["url"] == BIG_URL]
    h.check(len(big_outputs) == 1, f"{len(big_outputs)} outputs for the big record")
    output = big_outputs[0]
    tag = output["value"]["neardup"]
    h.check(tag["status"] == "skipped" and tag.get("reason") == "too_large",
            f"big record: got {tag}")
    h.check(output["headers"].get("neardup-status") == "skipped", "big record: status header")
    h.check(output["key"] == "big", f"big record: key {output['key']!r} was not kept")
    h.check("body" not in output["value"] and output["value"].get("site") == "big.example",
            "big record: the output must be the input without its body, plus the tag")
    h.check(len(json.dumps(output["value"])) < 4096, "big record: output too large")
    h.check(not [d for d in dead if BIG_URL in json.dumps(d["value"])],
            "big record: also dead-lettered")

    # The records larger than the output topics accept: one output, one dead letter.
    over = [r for r in tagged if r["value"]["url"] == OVER_URL]
    h.check(len(over) == 1, f"{len(over)} outputs for the 2 MB page")
    over_tag = over[0]["value"]["neardup"]
    h.check(over_tag["status"] == "unique", f"2 MB page: got {over_tag}")
    over_dead_letters = [d for d in dead if d["headers"].get("neardup-error") == "bad_fetched_at"]
    h.check(len(over_dead_letters) == 1, f"{len(over_dead_letters)} dead letters for the 2 MB record")
    if broker.kind == "kafka":
        h.check("body" not in over[0]["value"], "2 MB page: republished with its body")
        h.check(over_dead_letters[0]["value"] == "", "2 MB dead letter: value not dropped")
        h.check("value dropped" in over_dead_letters[0]["headers"]["neardup-error-detail"],
                "2 MB dead letter: the detail does not say the value was dropped")
        h.check(daemon.log_text().count("too large") == 2,
                "expected one 'too large' warning for each of the two refused records")
    else:
        h.check(over[0]["value"]["body"] == over_output["body"], "2 MB page: body changed")
    # Each record counts once, on its delivery report: the counters add up to the records fed.
    def counted():
        samples = h.scrape(metrics)
        out = h.metric_sum(samples, "neardup_pages_out_total")
        letters = h.metric_sum(samples, "neardup_dead_letters_total")
        return (out, letters, h.metric(samples, "neardup_pages_in_total")) \
            if out + letters >= inputs else None
    out, letters, pages_in = h.wait_for(counted, 10, "the output counters")
    h.check(pages_in == inputs and out == len(tagged) and letters == len(dead),
            f"counters: pages_in_total {pages_in:.0f}, pages_out_total {out:.0f}, "
            f"dead_letters_total {letters:.0f}; records fed {inputs}, outputs {len(tagged)}, "
            f"dead letters {len(dead)}")

    by_url = {r["value"]["url"]: r["value"]["neardup"] for r in tagged}
    for record, where, reason in BAD:
        if where == "tagged":
            tag = by_url[json.loads(record)["url"]]
            h.check(tag["status"] == "skipped" and tag["reason"] == reason,
                    f"{reason}: got {tag}")
            continue
        matches = [d for d in dead if d["headers"].get("neardup-error") == reason]
        h.check(len(matches) == 1, f"{reason}: {len(matches)} dead letters")
        h.check(h.same_record(matches[0]["value"], record),
                f"{reason}: dead letter value changed")
    h.check_outputs([r for r in tagged if r["value"].get("cluster") not in (None, "big")], urls)
    daemon.stop()
    h.log(f"exactly_once={EXACTLY_ONCE}: {inputs} inputs = {len(tagged)} outputs + {len(dead)} dead letters = "
          f"pages_out_total {out:.0f} + dead_letters_total {letters:.0f}; the "
          f"{len(big['body'])}-byte body: one output, skipped/too_large, "
          f"{len(json.dumps(output['value']))} bytes; the 2 MB output and dead letter: "
          f"{len(json.dumps(over[0]['value']))} and {len(over_dead_letters[0]['value'])} bytes; "
          f"{time.monotonic() - start:.1f}s")


if __name__ == "__main__":
    h.run(test, "big-body")

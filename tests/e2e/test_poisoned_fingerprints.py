#!/usr/bin/env python3
"""Records on the fingerprint topic are input like any other (daemon/README.md, "Scaled out: two
roles"): the index role is fed poisoned records beside the workers' genuine ones and never stops.

  test_poisoned_fingerprints.py [COUNT] [signed|unsigned]

Before any worker runs, records that no worker wrote are put on kafka.fingerprint_topic: one
that does not decode, pages of the index's own scheme with a 5-value sketch (the first of them
on the empty store, where it once defined the scheme's sketch length and refused every genuine
page after it), records naming another topic, another partition or a negative offset, and pages
that name the source offsets of genuine pages still to come (which once took their verdicts).
Then one worker fingerprints COUNT genuine pages. Every genuine page must be tagged exactly as
`neardup dedup` tags it, the index must never exit, and:
- signed (kafka.fingerprint_key, read from the environment): every poisoned record is a dead
  letter bad_fingerprinted_record, named by its own fingerprint-topic position, with its reason;
- unsigned: the malformed ones are dead letters alike, and a page that names a genuine page's
  offset is taken as a page of its own (it cannot be told from one), while the genuine page
  keeps its own verdict: the offset conflict is logged and counted
  (neardup_source_conflicts_total)."""
import json
import os
import struct
import subprocess
import sys
import time

import harness as h

ARGS = sys.argv[1:]
COUNT = int(ARGS[0]) if ARGS else 1000
SIGNED = (ARGS[1] if len(ARGS) > 1 else "signed") == "signed"
KEY_ENV = "NEARDUP_TEST_FINGERPRINT_KEY"


def length_prefixed(data):
    data = data.encode() if isinstance(data, str) else data
    return struct.pack("<I", len(data)) + data


def fingerprinted(scheme, offset, value, partition=0, topic="pages", sketch=128, kind=0):
    """A fingerprinted record (message/fingerprinted.h) as a worker would write it."""
    out = b"NDFP" + bytes([1]) + length_prefixed(topic) + struct.pack("<IQQ", partition & 0xffffffff,
                                                                      offset & (2**64 - 1),
                                                                      1700000000000)
    out += length_prefixed(scheme) + bytes([kind])
    out += length_prefixed("utf-8") + length_prefixed("meta") + struct.pack("<QBQ", 200, 0,
                                                                            0x5a5a5a5a5a5a5a5a)
    out += struct.pack("<I", sketch) + b"".join(struct.pack("<H", (i * 7919) & 0xffff)
                                                for i in range(sketch))
    return out + length_prefixed(value)


def page(url):
    words = " ".join(f"forged{n} word{n % 17}" for n in range(300))
    return json.dumps({"url": url, "body": f"<html><body><article><p>{words}</p></article>"
                                           f"</body></html>"})


def produce_raw(workdir, bootstrap, topic, partition, records):
    """Each record's bytes as one Kafka record of `partition`, in order (kcat: a file a record)."""
    files = []
    for n, record in enumerate(records):
        path = workdir.file(f"poison-{n}.bin")
        with open(path, "wb") as f:
            f.write(record)
        files.append(path)
    subprocess.run(["kcat", "-P", "-b", bootstrap, "-t", topic, "-p", str(partition)] + files,
                   check=True)


def test(workdir):
    broker = h.Broker(workdir, ["pages:2", "fingerprinted:2", "tagged:4", "dead:1"])
    pages, urls = h.generate_pages(workdir, COUNT, seed=9, truncate_rate=0.2)
    kafka_extra = '  fingerprint_topic: "fingerprinted"\n'
    if SIGNED:
        kafka_extra += f"  fingerprint_key: {{env: {KEY_ENV}}}\n"
    extra = "output:\n  include_body: false\npipeline:\n  batch_delay_ms: 5\n"
    config = h.write_config(workdir, broker.bootstrap, kafka_extra=kafka_extra,
                            metrics_listen=f"127.0.0.1:{h.free_port()}", extra=extra)
    worker_config = h.write_config(workdir, broker.bootstrap, name="worker.yaml",
                                   kafka_extra=kafka_extra, extra=extra)
    env = {KEY_ENV: "a secret the workers and the index share"}
    checked = subprocess.run([h.NEARDUPD, "--check-config", config], stdout=subprocess.PIPE,
                             text=True, env={**os.environ, **env}, check=True).stdout
    scheme = checked.split("(scheme ")[1].split(")")[0]
    expected = h.dedup(workdir, config, pages)
    h.produce(broker.bootstrap, "pages", pages)

    # (record, expected detail), all on fingerprint partition 0, before any worker runs.
    stolen = [3, 11, 40]  # offsets of genuine pages of input partition 0
    malformed = [
        (fingerprinted(scheme, 0, page("https://poison.example/short-sketch-0"), sketch=5),
         "a sketch of 5 values, where the scheme has 128"),
        (b"NDFP\x01garbage", "truncated"),
        (fingerprinted(scheme, 1, page("https://poison.example/short-sketch-1"), sketch=5),
         "a sketch of 5 values"),
        (fingerprinted(scheme, 2, page("https://poison.example/topic"), topic="elsewhere"),
         "names topic elsewhere"),
        (fingerprinted(scheme, 5, page("https://poison.example/partition"), partition=1),
         "names input partition 1 but was read from fingerprint partition 0"),
        (fingerprinted(scheme, -4, page("https://poison.example/negative")), "names offset -4"),
    ]
    forged = [(fingerprinted(scheme, offset, page(f"https://poison.example/stolen-{offset}")),
               "neardup-signature header is missing")
              for offset in stolen]
    poison = malformed + forged
    produce_raw(workdir, broker.bootstrap, "fingerprinted", 0, [r for r, _ in poison])

    index = h.Daemon(workdir, config, name="index", role="index", env=env)
    metrics = index.metrics_url()
    # The index takes the poisoned records first; only then does a worker start.
    expected_dead = len(poison) if SIGNED else len(malformed)
    h.wait_for(lambda: len(h.consume(broker.bootstrap, "dead", timeout=1)) >= expected_dead
               or not index.alive(), 60, f"{expected_dead} dead letters")
    h.check(index.alive(), "the index exited on a poisoned record")
    worker = h.Daemon(workdir, worker_config, name="worker", role="fingerprint", env=env)

    records = h.wait_for_outputs(broker.bootstrap, "tagged", set(urls), timeout=180)
    time.sleep(2)
    h.check(index.alive() and worker.alive(), "a daemon exited")
    records = h.consume(broker.bootstrap, "tagged", timeout=2)
    genuine = [r for r in records if "cluster" in r["value"]]
    h.check_outputs(genuine, urls, expected)
    dead = h.consume(broker.bootstrap, "dead", timeout=2)
    h.check(len(dead) == expected_dead, f"{len(dead)} dead letters, expected {expected_dead}")
    for (record, detail), letter in zip(poison, dead):
        headers = letter["headers"]
        h.check(headers.get("neardup-error") == "bad_fingerprinted_record",
                f"dead letter {headers}")
        h.check(detail in headers.get("neardup-error-detail", ""),
                f"expected {detail!r} in {headers.get('neardup-error-detail')!r}")
        h.check(headers.get("neardup-source", "").startswith("fingerprinted/0/"),
                f"a poisoned record was named by the offset it claims: {headers}")
    forged_outputs = [r for r in records if "stolen" in r["value"]["url"]]
    conflicts = h.metric(h.scrape(metrics), "neardup_source_conflicts_total")
    if SIGNED:
        h.check(not forged_outputs, f"forged records were tagged: {forged_outputs[:1]}")
        h.check(conflicts == 0, f"{conflicts} offset conflicts with every forgery refused")
    else:
        h.check(len(forged_outputs) == len(forged), f"{len(forged_outputs)} forged outputs")
        h.check(conflicts >= len(forged), f"{conflicts} offset conflicts counted")
        h.check(index.log_text().count("source offset conflict") >= len(forged),
                "the offset conflicts were not logged")
    index.stop(timeout=30)
    worker.stop(timeout=30)
    h.log(f"{'signed' if SIGNED else 'unsigned'}: {len(poison)} poisoned records beside {COUNT} "
          f"genuine pages: {len(genuine)} genuine outputs equal to neardup dedup's, "
          f"{len(dead)} dead letters ({'; '.join(sorted({d['headers']['neardup-error-detail'][:60] for d in dead}))}), "
          f"{len(forged_outputs)} forged pages tagged, {conflicts:.0f} offset conflicts; the "
          f"index never exited")


if __name__ == "__main__":
    h.run(test, "poisoned-fingerprints")

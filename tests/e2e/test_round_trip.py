#!/usr/bin/env python3
"""Round trip: N pages through broker + neardupd give exactly N outputs whose verdicts equal
`neardup dedup`'s on the same input in the same order (one input partition keeps the order).
Some planted copies are truncated, so the verdicts include duplicates found by both signatures
and duplicates found by MinHash alone (both kinds must be present).
Client-specific properties (kafka.consumer_properties) reach their client only: the daemon
logs no warning at all. Before that, `neardupd --check-config` prints a config with secrets
(literal, from a file, from an environment variable) without their values, and fails, naming
the key, on a secret file that cannot be read; and a config naming a topic the cluster lacks
stops `neardupd` at start with exit 2 (a config error: systemd does not restart it), naming it.

  test_round_trip.py [COUNT] [exactly_once]   (the second form runs kafka.exactly_once: true)"""
import os
import subprocess
import sys
import time

import harness as h

COUNT = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
EXACTLY_ONCE = len(sys.argv) > 2 and sys.argv[2] == "exactly_once"


def check_config_keeps_secrets(workdir, config):
    with open(config) as f:
        text = f.read()
    secret_file = workdir.file("kafka-password")
    with open(secret_file, "w") as f:
        f.write("from-a-file\n")
    secrets = text.replace("  consumer_properties:\n", f"""  properties:
    sasl.password: "hunter2"
    ssl.key.password: {{env: NEARDUP_E2E_SECRET}}
  producer_properties:
    ssl.keystore.password: {{file: "{secret_file}"}}
  consumer_properties:
""")
    path = workdir.file("secrets.yaml")
    with open(path, "w") as f:
        f.write(secrets)
    result = subprocess.run([h.NEARDUPD, "--check-config", path], capture_output=True, text=True,
                            env=dict(os.environ, NEARDUP_E2E_SECRET="from-env"))
    h.check(result.returncode == 0, f"--check-config exit {result.returncode}: {result.stderr}")
    for secret in ("hunter2", "from-env", "from-a-file"):
        h.check(secret not in result.stdout + result.stderr, f"--check-config printed {secret}")
    h.check('"sasl.password": "<redacted>"' in result.stdout and "{env: " in result.stdout,
            f"--check-config output lacks the redacted secrets:\n{result.stdout}")
    with open(path, "w") as f:
        f.write(secrets.replace(secret_file, secret_file + ".missing"))
    result = subprocess.run([h.NEARDUPD, "--check-config", path], capture_output=True, text=True,
                            env=dict(os.environ, NEARDUP_E2E_SECRET="from-env"))
    h.check(result.returncode == 2 and
            "kafka.producer_properties.ssl.keystore.password: file " in result.stderr,
            f"a missing secret file: exit {result.returncode}, {result.stderr!r}")
    h.log("--check-config: secrets redacted; a missing secret file is a config error naming the "
          "key")


def missing_topic_is_a_config_error(workdir, broker):
    config = h.write_config(workdir, broker.bootstrap, name="misspelt.yaml",
                            input_topic="pages-misspelt", store="misspelt-store")
    start = time.monotonic()
    result = subprocess.run([h.NEARDUPD, "--config", config], capture_output=True, text=True,
                            timeout=60)
    h.check(result.returncode == 2 and "topics missing on the cluster" in result.stderr
            and "pages-misspelt" in result.stderr,
            f"a misspelt topic: exit {result.returncode}, {result.stderr[-500:]!r}")
    h.log(f"a misspelt topic: exit 2 after {time.monotonic() - start:.1f}s, naming it")


def test(workdir):
    broker = h.Broker(workdir, ["pages:1", "tagged:3", "dead:1"])
    pages, urls = h.generate_pages(workdir, COUNT, truncate_rate=0.3)
    config = h.write_config(workdir, broker.bootstrap,
                            kafka_extra="  exactly_once: true\n" if EXACTLY_ONCE else "")
    check_config_keeps_secrets(workdir, config)
    missing_topic_is_a_config_error(workdir, broker)
    expected = h.dedup(workdir, config, pages)
    h.produce(broker.bootstrap, "pages", pages)
    start = time.monotonic()
    daemon = h.Daemon(workdir, config)
    records = h.wait_for_outputs(broker.bootstrap, "tagged", set(urls), timeout=120)
    h.log(f"{COUNT} outputs after {time.monotonic() - start:.1f}s (including group join)")
    time.sleep(2)  # anything extra would show up now
    records = h.consume(broker.bootstrap, "tagged", timeout=2)
    h.check(len(records) == COUNT, f"{len(records)} outputs for {COUNT} inputs")
    h.check_outputs(records, urls, expected)
    h.check(not h.consume(broker.bootstrap, "dead", timeout=1), "unexpected dead letters")
    seconds = daemon.stop()
    warnings = [line for line in daemon.log_text().splitlines()
                if " warning " in line or " error " in line]
    h.check(not warnings, f"the daemon logged {len(warnings)} warnings, e.g. {warnings[:2]}")
    statuses = {}
    for tag in expected.values():
        key = tag["status"] + (f"/{tag['method']}" if tag["status"] == "duplicate" else "")
        statuses[key] = statuses.get(key, 0) + 1
    h.check(statuses.get("duplicate/minhash", 0) > 0 and statuses.get("duplicate/both", 0) > 0,
            f"the verdicts should include MinHash-only and both-signature duplicates: {statuses}")
    h.log(f"exactly_once={EXACTLY_ONCE}: exactly one output per input: {COUNT}; verdicts equal dedup's; statuses {statuses}; "
          f"SIGTERM exit 0 in {seconds:.2f}s")


if __name__ == "__main__":
    h.run(test, "round-trip")

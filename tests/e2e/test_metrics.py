#!/usr/bin/env python3
"""Metrics (docs/operations.md): scrapes neardupd's /metrics while pages stream in and once they are
drained. The counters must add up: pages_in_total = sum of pages_out_total{status} +
dead_letters_total{reason} = the records fed; index_documents = unique + duplicate outputs of
this run; the pipeline stage histograms count every page that reached the stage; every
assigned partition has a consumer_lag (labelled with the group, topic and partition) that falls
to 0; /healthz answers 200; the daemon's threads carry their names (daemon/README.md, Threads)."""
import collections
import os
import json
import time
import urllib.request

import harness as h

GOOD = 1200
CHUNKS = 3
BAD = ["this is not json", json.dumps({"body": "<p>no url</p>"}),
       json.dumps({"url": "https://bad.example/short", "body": "<p>hi</p>"})]
STAGES = ["decode", "denoise", "features", "fingerprint", "index", "produce"]


def test(workdir):
    broker = h.Broker(workdir, ["pages:3", "tagged:3", "dead:1"])
    pages, urls = h.generate_pages(workdir, GOOD, seed=6)
    with open(pages) as f:
        lines = f.read().splitlines()
    config = h.write_config(workdir, broker.bootstrap,
                            metrics_listen=f"127.0.0.1:{h.free_port()}",
                            consumer_extra='    statistics.interval.ms: "500"\n')
    daemon = h.Daemon(workdir, config)
    url = daemon.metrics_url()
    daemon.wait_assigned()
    with urllib.request.urlopen(url + "/healthz", timeout=5) as response:
        h.check(response.status == 200, f"/healthz answered {response.status}")
    names = collections.Counter()
    for task in os.listdir(f"/proc/{daemon.process.pid}/task"):
        with open(f"/proc/{daemon.process.pid}/task/{task}/comm") as f:
            names[f.read().strip()] += 1
    h.check(names["nd:work"] >= 1 and names["nd:index"] == 1 and names["nd:deliver"] == 1 and
            names["nd:consume"] == 1, f"the daemon's threads are named {dict(names)}")

    fed = 0
    during = []
    size = len(lines) // CHUNKS
    for n in range(CHUNKS):
        chunk = lines[n * size:(n + 1) * size] + [BAD[n]]
        path = workdir.file(f"chunk{n}.jsonl")
        with open(path, "w") as f:
            f.write("\n".join(chunk) + "\n")
        h.produce(broker.bootstrap, "pages", path)
        fed += len(chunk)
        time.sleep(0.3)
        samples = h.scrape(url)
        during.append((fed, h.metric(samples, "neardup_pages_in_total"),
                       h.metric_sum(samples, "neardup_pages_out_total") +
                       h.metric_sum(samples, "neardup_dead_letters_total")))

    def drained():
        s = h.scrape(url)
        done = (h.metric_sum(s, "neardup_pages_out_total") +
                h.metric_sum(s, "neardup_dead_letters_total"))
        out = (h.metric(s, "neardup_pages_out_total", status="unique") +
               h.metric(s, "neardup_pages_out_total", status="duplicate"))
        lags = [v for (n, _), v in s.items() if n == "neardup_consumer_lag"]
        during.append((fed, h.metric(s, "neardup_pages_in_total"), done))
        settled = (done == fed and h.metric(s, "neardup_index_documents") == out and
                   len(lags) == 3 and not any(lags))
        return s if settled else None

    samples = h.wait_for(drained, 30, "the counters to settle", interval=0.25)
    pages_in = h.metric(samples, "neardup_pages_in_total")
    status = {s: h.metric(samples, "neardup_pages_out_total", status=s)
              for s in ("unique", "duplicate", "skipped")}
    dead = {labels[0][1]: v for (n, labels), v in samples.items()
            if n == "neardup_dead_letters_total"}
    documents = h.metric(samples, "neardup_index_documents")
    counts = {s: h.metric(samples, "neardup_stage_seconds_count", stage=s) for s in STAGES}
    lags = {labels: v for (n, labels), v in samples.items() if n == "neardup_consumer_lag"}
    h.check(set(lags) == {(("group", "neardup"), ("partition", str(p)), ("topic", "pages"))
                          for p in range(3)},
            f"consumer_lag labels {sorted(lags)}: expected group, topic and partition of each of "
            f"the 3 input partitions")
    lags = {dict(labels)["partition"]: v for labels, v in lags.items()}
    h.check(pages_in == fed, f"pages_in_total {pages_in} != {fed} fed")
    h.check(pages_in == sum(status.values()) + sum(dead.values()), "in != out + dead")
    h.check(dead == {"not_json": 1, "missing_url": 1}, f"dead letters {dead}")
    h.check(status["skipped"] == 1, f"skipped {status['skipped']}")
    h.check(documents == status["unique"] + status["duplicate"], "index_documents")
    fingerprinted = status["unique"] + status["duplicate"]
    h.check(counts["decode"] == counts["denoise"] == counts["features"] == fingerprinted + 1,
            f"decode/denoise/features counts {counts} != {fingerprinted} + 1 low_content page")
    h.check(counts["fingerprint"] == fingerprinted, f"fingerprint count {counts['fingerprint']}")
    h.check(counts["produce"] == fed and counts["index"] > 0, f"stage counts {counts}")
    h.check(h.metric(samples, "neardup_index_bytes") > 0, "index_bytes is 0")
    probes = h.metric(samples, "neardup_probe_candidates_count")
    h.check(probes == documents, f"probe_candidates observed {probes} times, {documents} pages probed")
    daemon.stop()
    h.log("scrapes (fed, pages_in_total, pages_out_total + dead_letters_total): " +
          " ".join(f"({a},{b:.0f},{c:.0f})" for a, b, c in during))
    h.log(f"drained: pages_in_total {pages_in:.0f} = pages_out_total "
          f"{ {k: int(v) for k, v in status.items()} } + dead_letters_total "
          f"{ {k: int(v) for k, v in dead.items()} }; index_documents {documents:.0f} = unique + "
          f"duplicate; index_bytes {h.metric(samples, 'neardup_index_bytes'):.0f}; stage counts "
          f"{ {k: int(v) for k, v in counts.items()} }; consumer_lag {lags}")


if __name__ == "__main__":
    h.run(test, "metrics")

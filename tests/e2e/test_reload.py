#!/usr/bin/env python3
"""SIGHUP reload under load (docs/configuration.md). While filler pages stream in without pause, the
config file is changed and reloaded four times:

  1. dedup.max_distance 3 -> 1: planted pairs at distance 2-3 (known from the fingerprints
     `neardup dedup` computes offline) are duplicates before and unique after; pairs at
     distance 0-1 stay duplicates.
  2. invalid YAML (a document starting with ","): rejected, the daemon carries on with max_distance 1.
  3. max_distance 5 with store.design_k 5 in the file: rejected, the open store's k is 3.
  4. features.ngram 2 -> 1: a new scheme. Copies of pages indexed under the old scheme are
     unique again, name the new scheme (field and header), and a second copy is a duplicate
     of the first at distance 0.

The second signature is off (minhash.enabled: false), so that the planted pairs' verdicts
depend on dedup.max_distance alone. Across all of it every input has exactly one output (no replays, nothing lost), and the
daemon's own counts and reloads_total agree."""
import json
import os
import random
import subprocess
import threading
import time

import gen_pages
import harness as h

FILLERS_PER_CHUNK = 80
CHUNK_SECONDS = 0.2
FILLERS = 8000  # at most; the stream runs until the last phase is checked
BURST = 600  # fillers produced at once just before each SIGHUP: the reload meets pages in flight
BASES = 160


def popcount(x):
    return bin(x).count("1")


def fingerprints(workdir, pages, config, name):
    """url -> (fingerprint, scheme) under `config`, computed offline by `neardup dedup`."""
    out = workdir.file(f"{name}.jsonl")
    subprocess.run([h.NEARDUP, "dedup", "--store", workdir.file(f"{name}-store"), "--config",
                    config, "--in", pages, "--out", out], check=True, stderr=subprocess.DEVNULL)
    with open(out) as f:
        tags = {o["url"]: o["neardup"] for o in map(json.loads, f)}
    return {u: (int(t["fingerprint"], 16), t["scheme"]) for u, t in tags.items()
            if t["status"] != "skipped"}


def write_jsonl(path, pages):
    with open(path, "w") as f:
        for page in pages:
            f.write(json.dumps(page) + "\n")
    return path


def candidates(rng, words):
    """Base articles, each with variants 1..4 words apart, as pages (cluster = base)."""
    pages = []
    for b in range(BASES):
        paragraphs = gen_pages.article(rng, words)
        title = f"base {b}"
        page = lambda n, p: {"url": f"https://probe.example/{b}/{n}",
                             "body": gen_pages.html(title, p, "probe.example"),
                             "content_type": "text/html; charset=utf-8", "cluster": f"p{b}"}
        pages.append(page("base", paragraphs))
        for changes in (1, 2, 3, 4):
            pages.append(page(f"v{changes}", gen_pages.mutate(rng, paragraphs, words, changes)))
    return pages


def rewrite(path, text):
    """Replaces the config file atomically, as an editor or a deployment tool would."""
    with open(path + ".new", "w") as f:
        f.write(text)
    os.replace(path + ".new", path)


class Fillers:
    """Produces filler pages in small chunks from a background thread until stopped, and in
    bursts on request."""

    def __init__(self, workdir, bootstrap, pages):
        self.workdir, self.bootstrap, self.pages = workdir, bootstrap, pages
        self.sent = 0
        self.lock = threading.Lock()
        self.stop = threading.Event()
        # Cleared while the test reads the output topic: `neardup consume --timeout` stops only
        # once the topic is idle.
        self.running = threading.Event()
        self.running.set()
        self.thread = threading.Thread(target=self._run)
        self.thread.start()

    def send(self, count, name):
        with self.lock:
            chunk = self.pages[self.sent:self.sent + count]
            h.produce(self.bootstrap, "pages", write_jsonl(self.workdir.file(name), chunk))
            self.sent += len(chunk)

    def start_burst(self, count):
        """Starts producing `count` fillers at once; returns a function that waits for it."""
        self.lock.acquire()
        chunk = self.pages[self.sent:self.sent + count]
        path = write_jsonl(self.workdir.file("filler-burst.jsonl"), chunk)
        process = subprocess.Popen([h.NEARDUP, "produce", "--bootstrap", self.bootstrap,
                                    "--topic", "pages", "--in", path, "--key-field", "cluster"],
                                   stderr=subprocess.DEVNULL)

        def wait():
            h.check(process.wait() == 0, "producing the burst failed")
            self.sent += len(chunk)
            self.lock.release()
        return wait

    def _run(self):
        while not self.stop.is_set() and self.sent < len(self.pages):
            self.running.wait()
            self.send(FILLERS_PER_CHUNK, "filler-chunk.jsonl")
            time.sleep(CHUNK_SECONDS)

    def finish(self):
        self.stop.set()
        self.running.set()
        self.thread.join()
        return self.sent


def test(workdir):
    broker = h.Broker(workdir, ["pages:6", "tagged:4", "dead:1"])
    # SimHash alone: the planted pairs' verdicts then follow dedup.max_distance only.
    base_extra = ("output:\n  include_body: false\npipeline:\n  batch_delay_ms: 5\n"
                  "minhash:\n  enabled: false\n")
    config = h.write_config(workdir, broker.bootstrap, extra=base_extra,
                            metrics_listen=f"127.0.0.1:{h.free_port()}")
    with open(config) as f:
        config_text = f.read()
    ngram1 = h.write_config(workdir, broker.bootstrap, name="ngram1.yaml",
                            extra=base_extra + "features:\n  ngram: 1\n")

    # Planted pairs with known distances under both schemes.
    rng = random.Random(7)
    words = gen_pages.vocabulary(rng, 3000)
    probes = candidates(rng, words)
    probes_path = write_jsonl(workdir.file("probes.jsonl"), probes)
    fillers_path, _ = h.generate_pages(workdir, FILLERS, seed=8, name="fillers.jsonl")
    with open(fillers_path) as f:
        fillers = [json.loads(line) for line in f]
    fp2 = fingerprints(workdir, probes_path, config, "ngram2")
    fp1 = fingerprints(workdir, probes_path, ngram1, "ngram1")
    scheme2, scheme1 = next(iter(fp2.values()))[1], next(iter(fp1.values()))[1]
    h.check(scheme1 != scheme2, "features.ngram does not change the scheme")
    # A probe must be far (> 3 bits) from every probe outside its own cluster, so that the
    # order in which the daemon interleaves partitions cannot change a verdict. (Fillers are
    # unrelated text: two unrelated SimHashes are within 3 bits with odds of about 1e-15.)
    by_cluster = {}
    for p in probes:
        by_cluster.setdefault(p["cluster"], []).append(p["url"])
    usable = {}
    for cluster, cluster_urls in by_cluster.items():
        if all(u in fp2 for u in cluster_urls):
            usable[cluster] = cluster_urls
    for cluster, cluster_urls in list(usable.items()):
        outside = [fp2[u][0] for c, us in usable.items() if c != cluster for u in us]
        if any(popcount(fp2[u][0] ^ o) <= 3 for u in cluster_urls for o in outside):
            del usable[cluster]

    def distance(cluster, variant):
        urls = usable[cluster]
        return popcount(fp2[urls[0]][0] ^ fp2[urls[variant]][0])

    # Pairs (base, variant): 2-3 bits apart ("far") and 0-1 bits apart ("near").
    far, near = [], []
    for cluster in usable:
        for v in (1, 2, 3, 4):
            d = distance(cluster, v)
            if d in (2, 3):
                far.append((cluster, v, d))
                break
            if d in (0, 1) and len(near) < 40:
                near.append((cluster, v, d))
                break
    h.log(f"{len(far)} pairs at distance 2-3, {len(near)} at 0-1, "
          f"schemes {scheme2} (ngram 2) and {scheme1} (ngram 1)")
    h.check(len(far) >= 30 and len(near) >= 8, "too few planted pairs")
    page_of = {p["url"]: p for p in probes}

    def pair_pages(pairs, suffix=""):
        out = []
        for cluster, v, _ in pairs:
            for u in (usable[cluster][0], usable[cluster][v]):
                page = dict(page_of[u])
                page["url"] = u + suffix
                out.append(page)
        return out

    phase1 = far[:12] + near[:4]
    phase2 = far[12:24] + near[4:8]
    copies = far[:12]  # phase 1's pairs again, under new urls
    copy_fps = [fp1[usable[c][0]][0] for c, _, _ in copies]
    h.check(all(popcount(a ^ b) > 1 for i, a in enumerate(copy_fps) for b in copy_fps[i + 1:]),
            "two copied pages are near-duplicates under the new scheme")

    broker_pages = []

    def feed(name, pages):
        path = write_jsonl(workdir.file(f"{name}.jsonl"), pages)
        h.produce(broker.bootstrap, "pages", path)
        broker_pages.extend(pages)
        filler_thread.running.clear()
        records = h.wait_for_outputs(broker.bootstrap, "tagged", {p["url"] for p in pages}, 40)
        filler_thread.running.set()
        return {r["value"]["url"]: r for r in records if r["value"]["url"] in
                {p["url"] for p in pages}}

    daemon = h.Daemon(workdir, config)
    url = daemon.metrics_url()
    daemon.wait_assigned()
    filler_thread = Fillers(workdir, broker.bootstrap, fillers)
    time.sleep(2)  # the stream is established before the first phase
    report = []
    in_flight_at_sighup = []

    def reload_under_load():
        burst_done = filler_thread.start_burst(BURST)
        h.wait_for(lambda: h.metric(h.scrape(url), "neardup_pages_in_total") > pages_in_so_far(),
                   10, "the burst to arrive", interval=0.02)
        samples = h.scrape(url)
        in_flight_at_sighup.append(int(
            h.metric(samples, "neardup_pages_in_total") -
            h.metric_sum(samples, "neardup_pages_out_total") -
            h.metric_sum(samples, "neardup_dead_letters_total")))
        daemon.reload()
        burst_done()

    def pages_in_so_far():
        return filler_thread.sent + len(broker_pages)

    def check_pairs(name, out, pairs, max_distance, suffix=""):
        changed = 0
        for cluster, v, d in pairs:
            base = out[usable[cluster][0] + suffix]["value"]["neardup"]
            variant = out[usable[cluster][v] + suffix]["value"]["neardup"]
            h.check(base["status"] == "unique", f"{name}: base {cluster} is {base}")
            if d <= max_distance:
                h.check(variant["status"] == "duplicate" and variant["distance"] == d,
                        f"{name}: {cluster} v{v} at distance {d} is {variant}")
            else:
                h.check(variant["status"] == "unique",
                        f"{name}: {cluster} v{v} at distance {d} > {max_distance} is {variant}")
                changed += 1
        return changed

    # Phase 1: max_distance 3.
    out = feed("phase1", pair_pages(phase1))
    check_pairs("max_distance 3", out, phase1, 3)
    h.check(all(r["value"]["neardup"]["scheme"] == scheme2 for r in out.values()), "scheme")
    dup1 = sum(r["value"]["neardup"]["status"] == "duplicate" for r in out.values())
    report.append(f"max_distance 3: {len(out)} probe pages, {dup1} duplicates "
                  f"(all {len(phase1)} pairs incl. {len([p for p in phase1 if p[2] >= 2])} at "
                  f"distance 2-3)")

    # Reload 1: max_distance 3 -> 1.
    inputs_before = filler_thread.sent + len(broker_pages)
    fillers_at = [filler_thread.sent]
    rewrite(config, config_text + "dedup:\n  max_distance: 1\n")
    reload_under_load()
    text = daemon.wait_log("reload accepted")
    h.check("dedup.max_distance 3 -> 1" in text, "the reload line does not name the change")
    out = feed("phase2", pair_pages(phase2))
    unique_now = check_pairs("max_distance 1", out, phase2, 1)
    dup2 = sum(r["value"]["neardup"]["status"] == "duplicate" for r in out.values())
    report.append(f"reload max_distance 3 -> 1 after ~{inputs_before} inputs: {len(out)} probe "
                  f"pages, {dup2} duplicates; {unique_now} pairs at distance 2-3 now unique")

    # Reload 2: invalid YAML. Reload 3: max_distance above the store's design k.
    fillers_at.append(filler_thread.sent)
    # A second document that starts with "," (yaml-cpp 0.7 alone would loop on it forever).
    rewrite(config, config_text + "---\n,\n")
    reload_under_load()
    daemon.wait_log("reload rejected")
    rewrite(config, config_text.replace("store:\n", "store:\n  design_k: 5\n") +
            "dedup:\n  max_distance: 5\n")
    fillers_at.append(filler_thread.sent)
    reload_under_load()
    text = daemon.wait_log("reload rejected", count=2)
    rejected = [line for line in text.splitlines() if "reload rejected" in line]
    h.check("YAML" in rejected[0] or "syntax" in rejected[0], f"invalid YAML: {rejected[0]}")
    h.check("exceeds the store's design k 3" in rejected[1], f"design k: {rejected[1]}")
    for line in rejected:
        report.append("rejected: " + line.split("reload rejected, ")[1][:150])
    h.check(daemon.alive(), "the daemon died on a rejected reload")
    out = feed("phase3", pair_pages(far[24:30], suffix="#3"))
    check_pairs("after the rejections", out, far[24:30], 1, suffix="#3")
    report.append(f"after both rejections: {len(out)} probe pages, pairs at 2-3 still unique")

    # Reload 4: features.ngram 2 -> 1, a new scheme.
    with open(ngram1) as f:
        rewrite(config, f.read() + "dedup:\n  max_distance: 1\n")
    fillers_at.append(filler_thread.sent)
    reload_under_load()
    text = daemon.wait_log("reload accepted", count=2)
    h.check(f"scheme {scheme2} -> {scheme1}" in text, "the reload line does not name the scheme")
    first = [dict(page_of[usable[c][0]], url=usable[c][0] + "#copy") for c, _, _ in copies]
    second = [dict(p, url=p["url"] + "#again") for p in first]
    out = feed("phase4", [p for pair in zip(first, second) for p in pair])
    for page in first:
        tag = out[page["url"]]["value"]["neardup"]
        again = out[page["url"] + "#again"]["value"]["neardup"]
        h.check(tag["status"] == "unique" and tag["scheme"] == scheme1,
                f"copy of an old-scheme page under the new scheme: {tag}")
        h.check(again["status"] == "duplicate" and again["distance"] == 0 and
                again["duplicate_of"] == page["url"] and again["scheme"] == scheme1,
                f"second copy under the new scheme: {again}")
        h.check(out[page["url"]]["headers"].get("neardup-scheme") == scheme1, "scheme header")
    report.append(f"reload ngram 2 -> 1: scheme {scheme2} -> {scheme1}; {len(first)} copies of "
                  f"pages indexed under {scheme2} are unique under {scheme1}, their second "
                  f"copies duplicates at distance 0")

    # Every input exactly one output.
    sent = filler_thread.finish()
    h.check(sent < len(fillers), "the filler stream ran dry before the last phase")
    report.append(f"filler pages produced before each of the 4 reloads: {fillers_at}; "
                  f"{sent} in all; consumed but not yet delivered when each SIGHUP was sent "
                  f"(pages_in_total - out - dead): {in_flight_at_sighup}")
    inputs = {p["url"] for p in fillers[:sent]} | {p["url"] for p in broker_pages}
    total = sent + len(broker_pages)
    h.check(len(inputs) == total, "input urls are not distinct")
    records = h.wait_for_outputs(broker.bootstrap, "tagged", inputs, timeout=60)
    time.sleep(1.5)
    records = h.consume(broker.bootstrap, "tagged", timeout=2)
    dead = h.consume(broker.bootstrap, "dead", timeout=1)
    out_urls = [r["value"]["url"] for r in records]
    h.check(len(out_urls) == len(set(out_urls)), f"{len(out_urls) - len(set(out_urls))} outputs "
                                                 f"were published twice")
    h.check(set(out_urls) == inputs and not dead,
            f"{total} inputs, {len(records)} outputs, {len(dead)} dead letters")
    samples = h.scrape(url)
    accepted = h.metric(samples, "neardup_reloads_total", outcome="accepted")
    rejected_n = h.metric(samples, "neardup_reloads_total", outcome="rejected")
    h.check((accepted, rejected_n) == (2, 2), f"reloads_total {accepted} accepted, "
                                              f"{rejected_n} rejected")
    schemes_out = {}
    for r in records:
        schemes_out[r["value"]["neardup"]["scheme"]] = schemes_out.get(
            r["value"]["neardup"]["scheme"], 0) + 1
    daemon.stop()
    stopped = [line for line in daemon.log_text().splitlines() if "stopped pages_in" in line][-1]
    h.check(f"pages_in={total} outputs={total} dead_letters=0 replayed=0" in stopped, stopped)
    for line in report:
        h.log(line)
    h.log(f"{total} inputs ({sent} fillers streamed throughout, {len(broker_pages)} probes) -> "
          f"{len(records)} outputs, 0 dead letters, 0 published twice; outputs by scheme "
          f"{schemes_out}; reloads_total accepted={accepted:.0f} rejected={rejected_n:.0f}")


if __name__ == "__main__":
    h.run(test, "reload")

#!/usr/bin/env python3
"""Scaled out (daemon/README.md, "Scaled out: two roles"): fingerprint workers in one consumer
group and one index, through kafka.fingerprint_topic, while they are killed.

  test_roles.py [COUNT] [exactly_once] [--partitions N] [--main-text]

Two workers (`neardupd --role fingerprint`, one pipeline thread each) and one index
(`neardupd --role index`) run over COUNT synthetic pages on N input partitions (default 8),
all produced before they start. Meanwhile, in a random order and each at the next step of the
outputs' progress (so that every one lands while pages are in flight): three kill -9s of a
worker, three of the index, and a third worker that joins and later leaves (SIGTERM). At the end
every input has an output, all copies of a page carry one verdict, none is a duplicate of
itself, and every verdict equals `neardup dedup`'s over the same pages (so precision and recall
against the planted clusters are a single process's; both are printed). With exactly_once, both
hops are transactional (and the fingerprinted records signed) and a read_committed consumer
sees exactly one output per input. With --main-text, containment is on and outputs carry the
main text without the paragraphs published before (output.main_text: unseen): every copy of a
page repeats its relations, paragraphs and text, however often the index was killed."""
import random
import sys
import time

import harness as h

OPTIONS = {"--partitions"}
ARGS = [a for i, a in enumerate(sys.argv[1:], 1)
        if not a.startswith("--") and sys.argv[i - 1] not in OPTIONS]
COUNT = int(ARGS[0]) if ARGS else 20000
EXACTLY_ONCE = len(ARGS) > 1 and ARGS[1] == "exactly_once"
PARTITIONS = int(sys.argv[sys.argv.index("--partitions") + 1]) if "--partitions" in sys.argv \
    else 8
MAIN_TEXT = "--main-text" in sys.argv



def cluster_scores(pages_path, tags):
    """Pairwise precision and recall of the verdicts against the planted clusters: a duplicate
    is right when its duplicate_of page is of its cluster; a page of a cluster seen before is
    found when it is tagged duplicate."""
    import json
    cluster_of, first = {}, {}
    with open(pages_path) as f:
        for line in f:
            page = json.loads(line)
            cluster_of[page["url"]] = page["cluster"]
            first.setdefault(page["cluster"], page["url"])
    duplicates = [u for u, t in tags.items() if t["status"] == "duplicate"]
    right = sum(1 for u in duplicates if cluster_of.get(tags[u]["duplicate_of"]) == cluster_of[u])
    planted = [u for u in cluster_of if first[cluster_of[u]] != u and tags[u]["status"] != "skipped"]
    found = sum(1 for u in planted if tags[u]["status"] == "duplicate")
    precision = right / len(duplicates) if duplicates else 1.0
    recall = found / len(planted) if planted else 1.0
    return precision, recall, len(planted)


def test(workdir):
    rng = random.Random(int(time.time()))
    broker = h.Broker(workdir, [f"pages:{PARTITIONS}", f"fingerprinted:{PARTITIONS}", "tagged:8",
                                "dead:1"])
    pages, urls = h.generate_pages(workdir, COUNT, seed=5, truncate_rate=0.2)
    # The exactly-once run also signs the fingerprinted records (kafka.fingerprint_key).
    kafka_extra = '  fingerprint_topic: "fingerprinted"\n' + \
        ('  exactly_once: true\n  fingerprint_key: "the workers\' and the index\'s"\n'
         if EXACTLY_ONCE else "")
    config = h.write_config(workdir, broker.bootstrap, kafka_extra=kafka_extra,
                            extra="output:\n  include_body: false\n" +
                                  ("  main_text: unseen\ncontainment:\n  enabled: true\n"
                                   if MAIN_TEXT else "") +
                                  "pipeline:\n  threads: 1\n  batch_delay_ms: 5\n")
    expected = h.dedup(workdir, config, pages)
    started = {"n": 0}

    def start(role):
        started["n"] += 1
        return h.Daemon(workdir, config, name=f"{role}-{started['n']}", role=role)

    h.produce(broker.bootstrap, "pages", pages)
    index = start("index")
    workers = [start("fingerprint"), start("fingerprint")]
    events = ["kill worker"] * 3 + ["kill index"] * 3 + ["join worker"]
    rng.shuffle(events)
    # The third worker leaves some time after it joined.
    events.insert(rng.randint(events.index("join worker") + 1, len(events)), "leave worker")
    third = None
    done = []
    # Restarted processes catch up between the steps.
    for event in h.at_progress_steps(broker.bootstrap, COUNT, events, rng, 240):
        if event == "kill worker":
            n = rng.randrange(len(workers))
            workers[n].kill9()
            workers[n] = start("fingerprint")
        elif event == "kill index":
            index.kill9()
            index = start("index")
        elif event == "join worker":
            third = start("fingerprint")
        else:
            # A worker that has joined (it may be asked to leave in the step it joined, before
            # its process installed its signal handling: SIGTERM would then end it at once).
            # With exactly_once, its partitions' committed offsets may be held by the open
            # transaction of a worker killed just before, until the broker aborts it
            # (transaction.timeout.ms, 60 s): the worker is assigned only once it has them.
            third.wait_assigned(timeout=120)
            code, _ = third.terminate(timeout=30)
            h.check(code == 0, f"a leaving worker exited with {code}")
            third = None
        seen = h.output_count(broker.bootstrap, "tagged", 8)
        done.append(f"{event} ({seen} outputs)")
        h.log(f"{event}; {seen} outputs so far")
    records = h.settled_outputs(broker.bootstrap, urls, expected, timeout=240, settle=2)
    tags = {r["value"]["url"]: r["value"]["neardup"] for r in records}
    precision, recall, planted = cluster_scores(pages, tags)
    expected_precision, expected_recall, _ = cluster_scores(pages, expected)
    h.check((precision, recall) == (expected_precision, expected_recall),
            "precision/recall differ from one process's")
    for daemon in [index] + workers:
        daemon.stop(timeout=30)
    summary = (f"exactly_once={EXACTLY_ONCE} broker={broker.kind}: {COUNT} inputs on "
               f"{PARTITIONS} partitions; events: {', '.join(done)}; {len(records)} outputs "
               f"({len(records) - COUNT} replayed copies); precision {precision:.4f} recall "
               f"{recall:.4f} over {planted} planted copies, as neardup dedup's")
    if EXACTLY_ONCE and broker.kind == "kafka":
        seen = [r["value"]["url"] for r in records]
        h.check(len(seen) == len(set(seen)) == COUNT,
                f"{len(records)} committed outputs for {COUNT} inputs")
    if MAIN_TEXT:
        texts = [t for t in tags.values() if "text" in t]
        seen = sum(t.get("paragraphs", {}).get("seen", 0) for t in tags.values())
        h.check(len(texts) >= COUNT // 2 and seen > 0,
                f"{len(texts)} outputs with a main text, {seen} paragraphs seen before")
        summary += (f"; main text in {len(texts)} outputs, {seen} paragraphs left out as seen "
                    f"before, every copy with the same text")
    h.log(summary)
    h.log("every input present, copies agree, none a duplicate of itself, verdicts equal dedup's")


if __name__ == "__main__":
    h.run(test, "roles")

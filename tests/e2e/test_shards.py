#!/usr/bin/env python3
"""The index split into shards (docs/scale-out.md): fingerprint workers, S shards and merge
stages on Kafka give every page the verdict one process gives, exactly once, while they are
killed.

  test_shards.py [COUNT] [--partitions N] [--shards S] [--kills K] [--pages FILE]
                 [--stop-shard SECONDS] [--reshard S2] [--replica live|lagging|rebuild]

Two workers (`neardupd --role fingerprint`), S shards (`--role shard --shard j`) and two merge
stages (`--role merge`), all with kafka.exactly_once, over COUNT generated pages (or the JSONL
pages of FILE) on N input partitions, produced before they start. Meanwhile K kill -9s, each at
the next step of the outputs' progress and spread over the roles (worker, shard, merge, ...),
each killed process started again. With --stop-shard, only the first half of the pages is
produced first (the kills spread over its outputs); once it is out, shard 1 is stopped
(SIGTERM) and the second half produced: for that many seconds no output may appear, the merge
stages must say which shard they wait for (/readyz and the log), and once shard 1 is back every
page comes out. With --reshard S2, the map changes from S shards to S2 during the run
(docs/scale-out.md, "Resharding"): the pages come in thirds, the new shards start after the
first, the merge stages are replaced by the new map's during the second. With --replica, a
standby replica of shard 1 (`--shard 1 --replica`, a store of its own) runs from the start, the
pages come in a half and two quarters, and once the third quarter is out shard 1 is lost
(kill -9, its store removed) and the last quarter produced. Then, with `live`, the replica is
stopped and a shard 1 started on its store takes over; with `lagging`, the same, but the
replica was killed (kill -9) once the first half was out, so that its store stands below the
primary's commits, as a lagging replica's would: the new primary must start there; with
`rebuild` there is no replica, and shard 1 starts on a new, empty store, which it builds from
the fingerprint topic's beginning (the time a replica saves).

At the end a read_committed consumer sees exactly one output per input, and every verdict equals
`neardup dedup`'s over the same pages in the same order (pages of one cluster share a partition,
so partitions cannot reorder what matters)."""
import json
import os
import random
import re
import subprocess
import sys
import time

import harness as h

OPTIONS = {"--partitions", "--shards", "--kills", "--pages", "--stop-shard", "--reshard",
           "--replica"}
ARGS = [a for i, a in enumerate(sys.argv[1:], 1)
        if not a.startswith("--") and sys.argv[i - 1] not in OPTIONS]
COUNT = int(ARGS[0]) if ARGS else 3000


def option(name, default, kind=int):
    return kind(sys.argv[sys.argv.index(name) + 1]) if name in sys.argv else default


PARTITIONS = option("--partitions", 1)
SHARDS = option("--shards", 3)
KILLS = option("--kills", 6)
PAGES = option("--pages", None, str)
STOP_SHARD = option("--stop-shard", 0, float)
RESHARD = option("--reshard", 0)
REPLICA = option("--replica", "", str)


def test(workdir):
    rng = random.Random(int(time.time()))
    broker = h.Broker(workdir, [f"pages:{PARTITIONS}", f"fingerprinted:{PARTITIONS}",
                                f"candidates:{PARTITIONS}", "documents:4:cleanup.policy=compact",
                                "tagged:8", "dead:1", "kept:1"] +
                       ([f"candidates-{RESHARD}:{PARTITIONS}"] if RESHARD else []))
    if PAGES:
        pages = PAGES
        with open(pages) as f:
            urls = [json.loads(line)["url"] for line in f]
    else:
        pages, urls = h.generate_pages(workdir, COUNT, seed=7, truncate_rate=0.2)
    count = len(urls)
    # A killed process's open transaction holds what reads committed records behind it until the
    # broker aborts it: 10 s here rather than a minute.
    kafka_extra = ('  fingerprint_topic: "fingerprinted"\n  candidates_topic: "candidates"\n'
                   '  documents_topic: "documents"\n  exactly_once: true\n'
                   '  producer_properties:\n    transaction.timeout.ms: "10000"\n')
    config = h.write_config(workdir, broker.bootstrap, kafka_extra=kafka_extra,
                            metrics_listen="127.0.0.1:0",
                            extra="output:\n  include_body: false\n"
                                  "pipeline:\n  threads: 1\n  batch_delay_ms: 5\n")
    with open(config) as f:
        text = f.read()
    text = text.replace("  sync: false\n", f"  sync: false\n  shards: {SHARDS}\n")
    with open(config, "w") as f:
        f.write(text)
    if RESHARD:
        # The new map: its own candidates topic (which names its groups) and stores.
        resharded = workdir.file("resharded.yaml")
        with open(resharded, "w") as f:
            f.write(text.replace(f"shards: {SHARDS}\n", f"shards: {RESHARD}\n")
                    .replace('candidates_topic: "candidates"', f'candidates_topic: "candidates-{RESHARD}"')
                    .replace(workdir.file("store"), workdir.file("store-resharded")))
    if REPLICA:
        # A standby replica of shard 1, on a store of its own (another machine's).
        replica_config = workdir.file("replica.yaml")
        with open(replica_config, "w") as f:
            f.write(text.replace(workdir.file("store"), workdir.file("store-replica")))
    # --check-config with a role checks what the role needs of the cluster.
    for role in (["--role", "shard", "--shard", str(SHARDS - 1)], ["--role", "merge"]):
        checked = subprocess.run([h.NEARDUPD, "--check-config", config] + role,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        h.check(checked.returncode == 0 and "the topics it needs are on" in checked.stderr,
                f"--check-config {' '.join(role)}: exit {checked.returncode}: {checked.stderr}")
    uncompacted = workdir.file("uncompacted.yaml")
    with open(uncompacted, "w") as f:
        f.write(text.replace('documents_topic: "documents"', 'documents_topic: "kept"'))
    checked = subprocess.run([h.NEARDUPD, "--check-config", uncompacted, "--role", "merge"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    h.check(checked.returncode == 2 and "must be compacted" in checked.stderr,
            f"a documents topic that is not compacted: exit {checked.returncode}: "
            f"{checked.stderr}")
    expected = h.dedup(workdir, config, pages)
    # With --stop-shard the second half is produced while shard 1 is stopped; with --reshard,
    # each third at a step of the change of maps.
    halves = STOP_SHARD or REPLICA
    first, second = h.split_pages(workdir, pages, count // 2) if halves else (pages, None)
    if REPLICA:
        third, fourth = h.split_pages(workdir, second, count // 4, names=("3.jsonl", "4.jsonl"))
    if RESHARD:
        first, rest = h.split_pages(workdir, pages, count // 3)
        second, third = h.split_pages(workdir, rest, count // 3, names=("2.jsonl", "3.jsonl"))
    h.produce(broker.bootstrap, "pages", first)

    started = {"n": 0}

    def start(role, shard=None, config=config, replica=False):
        started["n"] += 1
        name = f"{role}{'' if shard is None else shard}{'r' if replica else ''}-{started['n']}"
        args = () if shard is None else ("--shard", str(shard))
        return h.Daemon(workdir, config, name=name, role=role,
                        args=args + (("--replica",) if replica else ()))

    workers = [start("fingerprint"), start("fingerprint")]
    shards = [start("shard", j) for j in range(SHARDS)]
    merges = [start("merge"), start("merge")]
    replica = (start("shard", 1, replica_config, replica=True)
               if REPLICA in ("live", "lagging") else None)
    roles = ["worker", "shard", "merge"]
    events = [roles[n % 3] for n in range(KILLS)]
    rng.shuffle(events)
    done = []
    start_time = time.monotonic()
    h.wait_for(lambda: h.output_count(broker.bootstrap, "tagged", 8) > 0, 120, "a first output",
               interval=0.05)
    first_output = time.monotonic()
    # The kills spread over the first half's outputs when a shard is stopped for the second.
    spread = count // 2 if halves else count
    for event in h.at_progress_steps(broker.bootstrap, spread, events, rng, 300):
        if event == "worker":
            i = rng.randrange(len(workers))
            workers[i].kill9()
            workers[i] = start("fingerprint")
        elif event == "shard":
            j = rng.randrange(SHARDS)
            shards[j].kill9()
            shards[j] = start("shard", j)
        else:
            i = rng.randrange(len(merges))
            merges[i].kill9()
            merges[i] = start("merge")
        seen = h.output_count(broker.bootstrap, "tagged", 8)
        done.append(f"kill -9 {event} ({seen} outputs)")
        h.log(f"kill -9 {event}; {seen} outputs so far")
    if STOP_SHARD:
        # Shard 1 stops once the first half is out; the second half comes while it is away:
        # none of it may get an output, the merge stages must say they wait for shard 1, and
        # it catches up once back.
        h.wait_for_outputs(broker.bootstrap, "tagged", set(urls[:count // 2]), timeout=300)
        shards[1].stop(timeout=30)
        stopped = h.output_count(broker.bootstrap, "tagged", 8)
        h.produce(broker.bootstrap, "pages", second)
        time.sleep(STOP_SHARD - 5)
        stalled = h.output_count(broker.bootstrap, "tagged", 8)
        time.sleep(5)
        last = h.output_count(broker.bootstrap, "tagged", 8)
        ready = [h.get(m.metrics_url() + "/readyz") for m in merges]
        # What the second half got (the offsets above also move with transaction markers and
        # with outputs of the first half a restarted merge stage gives again).
        early = {r["value"]["url"] for r in h.consume(broker.bootstrap, "tagged", timeout=2.0)
                 if isinstance(r["value"], dict)} & set(urls[count // 2:])
        h.check(not early, f"{len(early)} pages of the second half got an output while shard 1 "
                           f"was stopped (offsets {stopped}, {stalled}, {last}), e.g. "
                           f"{sorted(early)[:3]}")
        waiting = [m for m in merges if "for the answers of shard 1 for" in m.log_text()]
        h.check(waiting, "no merge stage logged that it waits for shard 1")
        h.check(any(code == 503 and "shard 1 for" in body for code, body in ready),
                f"no merge stage's /readyz names shard 1: {ready}")
        # Past 512 records waiting, a merge stage keeps their pages on disk, not in memory.
        for code, body in ready:
            held = re.search(r"\((\d+) records waiting, the pages of (\d+) of them on disk", body)
            h.check(code == 200 or held, f"/readyz: {body}")
            if held and int(held.group(1)) > 640:
                h.check(int(held.group(2)) > 0, f"every page of {held.group(1)} records waiting "
                                                f"held in memory: {body}")
        rss = [m.rss_kib() for m in merges]
        # The metrics say the same, per shard.
        waiting_metric = 0
        for m in merges:
            metrics = h.get(m.metrics_url() + "/metrics")[1]
            found = re.search(r'neardup_merge_waiting_records\{shard="1"\} (\d+)', metrics)
            h.check(found and re.search(r'neardup_merge_waiting_records\{shard="0"\} 0\b', metrics),
                    f"neardup_merge_waiting_records per shard: {metrics[-3000:]}")
            waiting_metric += int(found.group(1))
        h.check(waiting_metric > 0, "neardup_merge_waiting_records{shard=\"1\"} is 0 while it is "
                                    "stopped")
        shards[1] = start("shard", 1)
        back = time.monotonic()
        h.wait_for_outputs(broker.bootstrap, "tagged", set(urls), timeout=300)
        done.append(f"shard 1 stopped for {STOP_SHARD:.0f} s (no output meanwhile; /readyz "
                    f"said: {[body for code, body in ready if code != 200][0]!r}; "
                    f"neardup_merge_waiting_records{{shard=\"1\"}} {waiting_metric}; merge "
                    f"stages' RSS then {rss} KiB), every page out "
                    f"{time.monotonic() - back:.1f} s after it was back")
        h.log(done[-1])
    if REPLICA:
        # Shard 1 is lost with its store three quarters in; it starts again on the replica's
        # store, or on a new one.
        h.wait_for_outputs(broker.bootstrap, "tagged", set(urls[:count // 2]), timeout=300)
        if REPLICA == "lagging":
            replica.kill9()
        h.produce(broker.bootstrap, "pages", third)
        h.wait_for_outputs(broker.bootstrap, "tagged", set(urls[:count * 3 // 4]), timeout=300)
        shards[1].kill9()
        subprocess.run(["rm", "-rf", workdir.file("store") + "/shard-1"], check=True)
        h.produce(broker.bootstrap, "pages", fourth)
        time.sleep(3)
        lost = h.output_count(broker.bootstrap, "tagged", 8)
        if replica:
            if REPLICA == "live":
                replica.stop(timeout=30)
            shards[1] = start("shard", 1, replica_config)
        else:
            shards[1] = start("shard", 1)
        back = time.monotonic()
        h.wait_for_outputs(broker.bootstrap, "tagged", set(urls), timeout=300)
        took = time.monotonic() - back
        lowered = re.findall(r"partition=\S+ starts at (\S+ ?\S*) below the group's committed "
                             r"offset (\d+)", shards[1].log_text())
        h.check(lowered or REPLICA == "live", "the shard on a store behind its group's commits "
                "started at those commits: " + shards[1].log_text()[-2000:])
        done.append(f"shard 1 lost with its store at {lost} outputs; started on "
                    f"{'the replica' if replica else 'a new'} store (starts: {lowered}), every "
                    f"page out {took:.1f} s after")
        h.log(done[-1])
    if RESHARD:
        # S -> S': the new shards build their stores from the fingerprint topic's beginning
        # beside the old ones; the old merge stages stop (each input partition's mark on the
        # documents topic is where they stopped); the new ones pass over every record up to it
        # and merge the rest from the new shards' answers. No record is merged from a mix.
        h.wait_for_outputs(broker.bootstrap, "tagged", set(urls[:count // 3]), timeout=300)
        new_shards = [start("shard", j, resharded) for j in range(RESHARD)]
        h.produce(broker.bootstrap, "pages", second)
        # The switch while the second third is on its way.
        h.wait_for(lambda: h.output_count(broker.bootstrap, "tagged", 8) >= count * 5 // 12, 300,
                   "a quarter of the second third's outputs", interval=0.02)
        for merge in merges:
            merge.stop(timeout=30)
        switched = h.output_count(broker.bootstrap, "tagged", 8)
        merges = [start("merge", config=resharded), start("merge", config=resharded)]
        h.produce(broker.bootstrap, "pages", third)
        h.wait_for_outputs(broker.bootstrap, "tagged", set(urls), timeout=300)
        for shard in shards:
            shard.stop(timeout=30)
        shards = new_shards
        done.append(f"resharded {SHARDS} -> {RESHARD}: the old merge stages stopped at "
                    f"{switched} outputs (records and markers)")
        h.log(done[-1])
    h.wait_for_outputs(broker.bootstrap, "tagged", set(urls), timeout=300)
    seconds = time.monotonic() - start_time
    rate = count / (time.monotonic() - first_output)
    records = h.settled_outputs(broker.bootstrap, urls, expected, timeout=300, settle=2)
    outputs = [r["value"]["url"] for r in records]
    h.check(len(outputs) == len(set(outputs)) == count,
            f"{len(records)} committed outputs for {count} inputs")
    # CPU seconds of the processes, by role, when none was killed or stopped: what each role
    # costs a page.
    ticks = os.sysconf("SC_CLK_TCK")
    cpu = {}
    for role, daemons in (("workers", workers), ("shards", shards), ("merge stages", merges)):
        for daemon in daemons:
            with open(f"/proc/{daemon.process.pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            cpu[role] = cpu.get(role, 0) + (int(fields[11]) + int(fields[12])) / ticks
    for daemon in workers + shards + merges:
        daemon.stop(timeout=30)
    if RESHARD:
        # The new merge stages published what came after the switch.
        published = sum(int(m) for merge in merges
                        for m in re.findall(r"stopped pages_in=\d+ outputs=(\d+)", merge.log_text()))
        h.check(published > 0, "the new merge stages published nothing")
        done.append(f"{published} outputs from the new merge stages")
    duplicates = sum(1 for r in records if r["value"]["neardup"]["status"] == "duplicate")
    h.log(f"broker={broker.kind}: {count} inputs on {PARTITIONS} partitions, {SHARDS} shards, "
          f"2 workers, 2 merge stages; events: {', '.join(done) or 'none'}; {len(records)} "
          f"committed outputs, {duplicates} duplicates, in {seconds:.1f} s ({rate:.0f} pages/s "
          f"from the first output to the last); every verdict "
          f"equal to neardup dedup's" +
          ("" if KILLS or STOP_SHARD or RESHARD else "; CPU: " + ", ".join(
              f"{role} {c:.1f} s ({1e3 * c / count:.2f} ms a page)" for role, c in cpu.items())))


if __name__ == "__main__":
    h.run(test, "shards")

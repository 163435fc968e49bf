#!/usr/bin/env python3
"""The query API under abuse (docs/operations.md, "Health and readiness"): neardupd with
metrics.queries on drains COUNT pages from a real broker, undisturbed and then while abusive
clients hold its listener:

  - UPLOADS clients each POST a body of UPLOAD_MIB MiB to /v1/lookup (Content-Length declared),
    sending it in 64 KiB pieces every 10 ms; when answered or cut off they wait a second (the
    Retry-After of a 503) and start again;
  - SLOW clients each send a request head one byte every 3 s (a slowloris); a client that finds
    its connection closed at its next byte opens another.

Meanwhile /healthz is asked every 100 ms on a new connection (from 127.0.0.1, like the
attackers, unless --probe-from says otherwise) and the daemon's resident memory (all of it, and
the anonymous part, without the index's mapped file) is read from /proc every 100 ms. Each
run's throughput and the daemon's CPU time a page are measured from 10 % to 90 % of the
outputs acknowledged (the daemon's metrics, polled every 100 ms), so that the attackers have
connected before the clock starts. The attackers run in a process of their own on the same
machine: their CPU time is printed too. Prints one line per run and the comparison of the
medians; exits 1 if /healthz ever took 1 s or more, or failed, under abuse, or the throughput
fell by more than 10 %.

  bench_query_abuse.py [COUNT] [--uploads=256] [--slow=300] [--upload-mib=60] [--rounds=1]
                       [--sources=1] [--probe-from=127.0.0.1] [--attacker-nice=0]
                       [--rss-limit-mib=4096]
      (NEARDUP, NEARDUPD: binaries; NEARDUP_KAFKA_LIB: the broker's jars)

--sources=N spreads the attackers over N loopback addresses (127.0.0.1 ...), each a client
of its own for the listener's per-client limit. --attacker-nice=N runs the attackers at that
niceness, nearer to attackers on other machines, whose CPU time is not the daemon's. --rounds=N alternates N undisturbed and N
abused runs. The daemon is killed if its resident memory passes --rss-limit-mib (an unbounded
listener must not take the machine with it).
"""
import asyncio
import collections
import multiprocessing
import os
import re
import socket
import statistics
import sys
import threading
import time
import urllib.request

import harness as h

ARGS = [a for a in sys.argv[1:] if not a.startswith("--")]
OPTIONS = dict(a[2:].split("=", 1) for a in sys.argv[1:] if a.startswith("--") and "=" in a)
COUNT = int(ARGS[0]) if ARGS else 200000
UPLOADS = int(OPTIONS.get("uploads", 256))
SLOW = int(OPTIONS.get("slow", 300))
UPLOAD_BYTES = int(float(OPTIONS.get("upload-mib", 60)) * (1 << 20))
ROUNDS = int(OPTIONS.get("rounds", 1))
SOURCES = int(OPTIONS.get("sources", 1))
PROBE_FROM = OPTIONS.get("probe-from", "127.0.0.1")
ATTACKER_NICE = int(OPTIONS.get("attacker-nice", 0))
RSS_LIMIT_KIB = int(OPTIONS.get("rss-limit-mib", 4096)) * 1024
PARTITIONS = 4
PIECE = 64 * 1024


# The attackers, in a process of their own so that their work does not skew the probe's clock.

async def connect(port, source, stats, kind, pause):
    """(reader, writer) of a new connection from `source`, counted as `kind`; None, after
    `pause` seconds, when it cannot be made."""
    try:
        connection = await asyncio.open_connection("127.0.0.1", port, local_addr=(source, 0))
    except OSError:
        stats["connect_failed"] += 1
        await asyncio.sleep(pause)
        return None
    stats[f"{kind}_connections"] += 1
    return connection


async def upload(port, source, stats, stop):
    head = (f"POST /v1/lookup HTTP/1.1\r\nHost: x\r\nContent-Type: text/html\r\n"
            f"Content-Length: {UPLOAD_BYTES}\r\n\r\n").encode()
    piece = b"x" * PIECE
    while not stop.is_set():
        if not (connection := await connect(port, source, stats, "upload", 1)):
            continue
        reader, writer = connection
        answer = asyncio.ensure_future(reader.read(200))
        outcome = "cut"
        try:
            writer.write(head)
            await writer.drain()
            sent = 0
            while sent < UPLOAD_BYTES and not stop.is_set():
                await asyncio.wait({answer}, timeout=0.01)
                if answer.done():
                    break
                writer.write(piece[:UPLOAD_BYTES - sent])
                await writer.drain()
                sent += min(PIECE, UPLOAD_BYTES - sent)
            if sent >= UPLOAD_BYTES:
                await asyncio.wait({answer}, timeout=30)
                stats["uploads_sent_whole"] += 1
            if answer.done() and not answer.exception():
                status = re.match(rb"HTTP/1\.1 (\d+)", answer.result())
                outcome = status.group(1).decode() if status else "cut"
        except (OSError, asyncio.IncompleteReadError):
            pass
        finally:
            answer.cancel()
            writer.close()
        stats[f"upload_{outcome}"] += 1
        await asyncio.sleep(1)


async def slow_head(port, source, stats, stop):
    head = b"GET /metrics HTTP/1.1\r\nHost: x\r\nUser-Agent: " + b"s" * 10000
    while not stop.is_set():
        if not (connection := await connect(port, source, stats, "slow", 3)):
            continue
        reader, writer = connection
        opened = time.monotonic()
        for byte in head:
            if stop.is_set():
                break
            if reader.at_eof() or writer.is_closing():
                break
            try:
                writer.write(bytes([byte]))
                await writer.drain()
            except OSError:
                break
            await asyncio.sleep(3)
        stats["slow_longest_s"] = max(stats["slow_longest_s"], time.monotonic() - opened)
        writer.close()


def attack(port, stop, results):
    """Runs the attackers until `stop` (a multiprocessing.Event) is set; puts their counts in
    `results`."""
    os.nice(ATTACKER_NICE)
    stats = collections.Counter()
    sources = [f"127.0.0.{1 + i}" for i in range(SOURCES)]

    async def main():
        done = asyncio.Event()
        loop = asyncio.get_running_loop()
        loop.run_in_executor(None, lambda: (stop.wait(), loop.call_soon_threadsafe(done.set)))
        await asyncio.gather(
            *[upload(port, sources[i % SOURCES], stats, done) for i in range(UPLOADS)],
            *[slow_head(port, sources[i % SOURCES], stats, done) for i in range(SLOW)])
    asyncio.run(main())
    cpu = os.times()
    stats["cpu_s"] = round(cpu.user + cpu.system, 1)
    results.put(dict(stats))


# The measurements, in this process.

def rss_kib(pid, field="VmRSS"):
    try:
        with open(f"/proc/{pid}/status") as f:
            found = re.search(rf"^{field}:\s+(\d+) kB", f.read(), re.M)
        return int(found.group(1)) if found else 0
    except OSError:
        return 0


def cpu_seconds(pid):
    """CPU seconds of the process, and of its threads by name ({name: seconds})."""
    tick = os.sysconf("SC_CLK_TCK")
    by_name = collections.Counter()
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{task}/stat") as f:
                text = f.read()
        except OSError:
            continue
        name = text[text.index("(") + 1:text.rindex(")")]
        fields = text[text.rindex(")") + 2:].split()
        by_name[name] += (int(fields[11]) + int(fields[12])) / tick
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / tick, by_name


def delivered(port):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
        text = response.read().decode()
    return sum(float(value) for value in re.findall(
        r"^neardup_(?:pages_out|dead_letters)_total\{[^}]*\} (\S+)$", text, re.M))


def healthz(port):
    """(seconds, status or the error, seconds to connect) of GET /healthz on a new connection
    from PROBE_FROM."""
    start = time.monotonic()
    connected = None
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5,
                                      source_address=(PROBE_FROM, 0)) as s:
            connected = time.monotonic() - start
            s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            answer = b""
            while chunk := s.recv(4096):
                answer += chunk
        status = answer.split(b" ", 2)[1].decode() if answer.startswith(b"HTTP/1.1 ") else "none"
    except OSError as error:
        status = type(error).__name__
    return time.monotonic() - start, status, connected


def run(workdir, broker, pages, name, abuse):
    """One run of the daemon over the pages (with the attackers when `abuse`): its numbers."""
    port = h.free_port()
    config = h.write_config(workdir, broker.bootstrap, name=f"{name}.yaml", group=name,
                            store=f"store-{name}", metrics_listen=f"127.0.0.1:{port}",
                            queries=True)
    daemon = h.Daemon(workdir, config, name=name)
    daemon.metrics_url()
    pid = daemon.process.pid
    stop = threading.Event()
    samples = {"rss": [0], "anon": [0], "probe": []}

    def sample():
        while not stop.is_set() and daemon.alive():
            samples["rss"].append(rss_kib(pid))
            samples["anon"].append(rss_kib(pid, "RssAnon"))
            if samples["rss"][-1] > RSS_LIMIT_KIB:
                h.log(f"{name}: RSS {samples['rss'][-1] / 1024:.0f} MiB passed the limit, "
                      f"{time.monotonic() - started:.1f} s after the start: killing the daemon")
                daemon.process.kill()
            time.sleep(0.1)

    def probe():
        while not stop.is_set() and daemon.alive():
            began = time.monotonic()
            samples["probe"].append(healthz(port))
            time.sleep(max(0.0, 0.1 - (time.monotonic() - began)))

    started = time.monotonic()
    threads = [threading.Thread(target=sample), threading.Thread(target=probe)]
    for thread in threads:
        thread.start()
    attack_stop = multiprocessing.Event()
    results = multiprocessing.Queue()
    attacker = None
    if abuse:
        attacker = multiprocessing.Process(target=attack, args=(port, attack_stop, results))
        attacker.start()
    result = {"name": name, "rate": 0.0, "cpu_per_page_us": 0.0, "http_cpu_share": 0.0}
    try:
        result.update(measure(daemon, port))
    finally:
        attack_stop.set()
        result["attack"] = results.get(timeout=60) if attacker else {}
        if attacker:
            attacker.join(timeout=30)
        stop.set()
        for thread in threads:
            thread.join()
        latencies = [seconds for seconds, _, _ in samples["probe"]] or [0]
        failed = [status for _, status, _ in samples["probe"] if status != "200"]
        result.update({
            "died": not daemon.alive(), "rss_max_mib": max(samples["rss"]) / 1024,
            "anon_max_mib": max(samples["anon"]) / 1024, "probes": len(samples["probe"]),
            "probe_max_s": max(latencies), "probe_p99_s": quantile(latencies, 0.99),
            "probe_connect_max_s": max((c for _, _, c in samples["probe"] if c), default=0),
            "probe_failed": len(failed), "failures": sorted(set(failed))})
        h.log(f"{name}: {result['rate']:.0f} pages/s (10-90 %), daemon CPU "
              f"{result['cpu_per_page_us']:.0f} us a page, HTTP threads "
              f"{result['http_cpu_share'] * 100:.1f} % of a core; RSS max "
              f"{result['rss_max_mib']:.0f} MiB, anonymous {result['anon_max_mib']:.0f} MiB; "
              f"/healthz x{result['probes']}: max {result['probe_max_s'] * 1000:.0f} ms "
              f"(connecting: {result['probe_connect_max_s'] * 1000:.0f} ms), p99 "
              f"{result['probe_p99_s'] * 1000:.0f} ms, {len(failed)} failed {result['failures']}"
              + (" (the daemon died)" if result["died"] else "")
              + f"; CPU us a page by thread {result.get('threads_us_per_page', {})}"
              + (f"; attackers {result['attack']}" if abuse else ""))
    daemon.stop(timeout=60)
    return result


def measure(daemon, port):
    """Throughput and CPU from 10 % to 90 % of the outputs acknowledged."""
    daemon.wait_assigned(timeout=120)
    marks = {}
    deadline = time.monotonic() + 600
    while len(marks) < 2:
        h.check(daemon.alive(), "the daemon exited")
        h.check(time.monotonic() < deadline, "not done in 600 s")
        try:
            count = delivered(port)
        except OSError:
            count = 0
        for share in (0.1, 0.9):
            if share not in marks and count >= share * COUNT:
                marks[share] = (time.monotonic(), count, cpu_seconds(daemon.process.pid))
        time.sleep(0.1)
    (t0, c0, (cpu0, threads0)), (t1, c1, (cpu1, threads1)) = marks[0.1], marks[0.9]
    http_cpu = sum(threads1[n] - threads0[n] for n in ("MHD-worker", "nd:http-watch"))
    per_page = {n: round((threads1[n] - threads0[n]) / (c1 - c0) * 1e6, 1) for n in threads1}
    return {"rate": (c1 - c0) / (t1 - t0), "cpu_per_page_us": (cpu1 - cpu0) / (c1 - c0) * 1e6,
            "http_cpu_share": http_cpu / (t1 - t0), "threads_us_per_page": per_page}


def quantile(values, q):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def rates(runs):
    return "/".join(f"{r['rate']:.0f}" for r in runs)


def bench(workdir):
    broker = h.Broker(workdir, [f"pages:{PARTITIONS}", f"tagged:{PARTITIONS}", "dead:1"])
    pages, _ = h.generate_pages(workdir, COUNT, seed=11)
    h.produce(broker.bootstrap, "pages", pages)
    h.log(f"{COUNT} pages produced; attackers: {UPLOADS} uploads of {UPLOAD_BYTES >> 20} MiB, "
          f"{SLOW} slow heads, from {SOURCES} address(es); /healthz from {PROBE_FROM}")
    plain, abused = [], []
    for round_ in range(ROUNDS):
        plain.append(run(workdir, broker, pages, f"plain{round_}", abuse=False))
        abused.append(run(workdir, broker, pages, f"abused{round_}", abuse=True))
    ratio = statistics.median(r["rate"] for r in abused) / statistics.median(
        r["rate"] for r in plain)
    cpu_ratio = statistics.median(r["cpu_per_page_us"] for r in abused) / statistics.median(
        r["cpu_per_page_us"] for r in plain)
    probe_max = max(r["probe_max_s"] for r in abused)
    failed = sum(r["probe_failed"] for r in abused)
    print(f"pages={COUNT} uploads={UPLOADS}x{UPLOAD_BYTES >> 20}MiB slow={SLOW} "
          f"sources={SOURCES} attacker_nice={ATTACKER_NICE} rounds={ROUNDS} "
          f"plain_pages_per_s={rates(plain)} abused_pages_per_s={rates(abused)} "
          f"ratio={ratio:.3f} cpu_per_page_ratio={cpu_ratio:.3f} "
          f"rss_max_mib_plain={max(r['rss_max_mib'] for r in plain):.0f} "
          f"rss_max_mib_abused={max(r['rss_max_mib'] for r in abused):.0f} "
          f"anon_max_mib_plain={max(r['anon_max_mib'] for r in plain):.0f} "
          f"anon_max_mib_abused={max(r['anon_max_mib'] for r in abused):.0f} "
          f"healthz_max_ms={probe_max * 1000:.0f} healthz_failed={failed} cores={os.cpu_count()}")
    h.check(failed == 0 and probe_max < 1.0, f"/healthz under abuse: max {probe_max:.2f} s, "
                                            f"{failed} failed")
    h.check(ratio >= 0.9, f"throughput under abuse {ratio:.2f} of undisturbed")


if __name__ == "__main__":
    h.run(bench, "query-abuse")

"""Processes for neardup's end-to-end tests: a broker, neardupd daemons, and the
`neardup produce/consume/dedup` tools. Python 3 standard library only.

The broker is chosen by NEARDUP_TEST_BROKER: `kafka` (the default) starts a real Apache Kafka
broker from the jars in NEARDUP_KAFKA_LIB (tests/kafka/broker.py); `mock` starts the development
broker (`neardup broker`, librdkafka's mock cluster).

Every test gets a fresh temporary directory; every process it starts is stopped at exit.
Binaries come from the NEARDUP and NEARDUPD environment variables (set by CTest).
"""
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

NEARDUP = os.environ.get("NEARDUP", "neardup")
NEARDUPD = os.environ.get("NEARDUPD", "neardupd")
HERE = os.path.dirname(os.path.abspath(__file__))
BROKER_KIND = os.environ.get("NEARDUP_TEST_BROKER", "kafka")
KAFKA_LIB = os.environ.get("NEARDUP_KAFKA_LIB", "")

sys.path.insert(0, os.path.join(HERE, "..", "kafka"))
import broker as kafka_broker  # noqa: E402  (tests/kafka/broker.py)


def log(message):
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def check(condition, message):
    if not condition:
        raise AssertionError(message)


def wait_for(predicate, timeout, what, interval=0.1):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


class Workdir:
    """A fresh temporary directory that keeps its files when the test fails."""

    def __init__(self, name):
        self.path = tempfile.mkdtemp(prefix=f"neardup-e2e-{name}-")
        self.processes = []
        self.cleanups = []  # callables run at close, e.g. stopping a broker

    def file(self, name):
        return os.path.join(self.path, name)

    def close(self):
        for process in self.processes:
            if process.poll() is None:
                process.kill()
                process.wait()
        for cleanup in self.cleanups:
            cleanup()


class MockBroker:
    """The development broker: `neardup broker` (librdkafka's mock cluster)."""
    kind = "mock"

    def __init__(self, workdir, topics, brokers=1):
        self.workdir = workdir
        self.control = workdir.file("broker.control")
        bootstrap_file = workdir.file("bootstrap")
        open(self.control, "w").close()
        args = [NEARDUP, "broker", "--brokers", str(brokers), "--bootstrap-file", bootstrap_file,
                "--control", self.control]
        for topic in topics:
            args += ["--topic", topic]
        self.stderr = open(workdir.file("broker.log"), "w")
        self.process = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                        stderr=self.stderr,
                                        preexec_fn=kafka_broker.die_with_parent)
        workdir.processes.append(self.process)
        wait_for(lambda: os.path.exists(bootstrap_file), 10, "the broker's bootstrap file")
        with open(bootstrap_file) as f:
            self.bootstrap = f.read().strip()
        log(f"development broker (librdkafka's mock cluster, {brokers} brokers) on "
            f"{self.bootstrap}")

    def command(self, line):
        with open(self.control, "a") as f:
            f.write(line + "\n")

    def down(self):
        """Every broker drops its connections and refuses new ones."""
        self.command("down all")

    def up(self):
        self.command("up all")

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=10)


class RealBroker:
    """A single-node Apache Kafka broker process (tests/kafka/broker.py). An outage stops the
    process; up() starts it again on the same data and ports."""
    kind = "kafka"

    def __init__(self, workdir, topics, message_max_bytes=None):
        check(KAFKA_LIB, "NEARDUP_KAFKA_LIB is not set: run the tests through ctest, or set it "
                         "to <build>/tests/kafka/lib (or NEARDUP_TEST_BROKER=mock)")
        self.broker = kafka_broker.KafkaBroker(KAFKA_LIB, workdir.file("kafka"),
                                               message_max_bytes=message_max_bytes,
                                               log_path=workdir.file("broker.log"),
                                               neardup=NEARDUP)
        workdir.cleanups.append(self.broker.stop)
        seconds = self.broker.start()
        self.bootstrap = self.broker.bootstrap
        start = time.monotonic()
        self.broker.create_topics(topics)
        log(f"kafka {self.broker.version} broker on {self.bootstrap}: formatted in "
            f"{self.broker.format_seconds:.1f}s, listening {seconds:.1f}s after the start, RSS "
            f"{self.broker.rss_kib() / 1024:.0f} MiB; topics {' '.join(topics)} created in "
            f"{time.monotonic() - start:.1f}s")

    def down(self):
        """Stops the broker process (SIGTERM, a controlled shutdown)."""
        start = time.monotonic()
        self.broker.stop()
        log(f"kafka broker stopped in {time.monotonic() - start:.1f}s")

    def up(self):
        seconds = self.broker.start()
        log(f"kafka broker restarted: listening after {seconds:.1f}s")

    def stop(self):
        self.broker.stop()


def Broker(workdir, topics, brokers=1, message_max_bytes=None):
    """The broker NEARDUP_TEST_BROKER names, with `topics` (NAME:PARTITIONS[:KEY=VALUE,...];
    topic configs apply to the real broker only). `brokers` > 1 applies to the mock only;
    `message_max_bytes` (the broker's message.max.bytes) to the real broker only."""
    if BROKER_KIND == "mock":
        return MockBroker(workdir, topics, brokers)
    check(BROKER_KIND == "kafka", f"NEARDUP_TEST_BROKER={BROKER_KIND}: expected kafka or mock")
    return RealBroker(workdir, topics, message_max_bytes)


DEFAULT_EXTRA = "pipeline:\n  batch_delay_ms: 5\n"


def write_config(workdir, bootstrap, name="neardup.yaml", input_topic="pages", group="neardup",
                 extra="", kafka_extra="", metrics_listen="", consumer_extra="", store="store",
                 queries=False):
    """A config for neardupd on `bootstrap`; `consumer_extra`: more lines (4-space indented)
    under kafka.consumer_properties; `store`: the store directory's name in the workdir."""
    path = workdir.file(name)
    with open(path, "w") as f:
        f.write(f"""kafka:
  bootstrap_servers: "{bootstrap}"
  group_id: "{group}"
  input_topic: "{input_topic}"
  output_topic: "tagged"
  dead_letter_topic: "dead"
{kafka_extra}  consumer_properties:
    # Restarts in these tests must not wait out the default 45 s session of a killed member.
    session.timeout.ms: "6000"
    heartbeat.interval.ms: "500"
{consumer_extra}store:
  path: "{workdir.file(store)}"
  expected_documents: 100000
  sync: false
metrics:
  listen: "{metrics_listen}"
  queries: {"true" if queries else "false"}
{extra or DEFAULT_EXTRA}""")
    return path


class Daemon:
    def __init__(self, workdir, config, name="neardupd", env=None, role=None, args=()):
        """`env`: variables added to (or, with value None, removed from) the environment;
        `role`: neardupd --role (fingerprint, index, shard or merge; None runs the single
        process); `args`: more arguments (--shard J)."""
        self.log_path = workdir.file(f"{name}.log")
        self.log_start = os.path.getsize(self.log_path) if os.path.exists(self.log_path) else 0
        self.stderr = open(self.log_path, "a")
        environment = dict(os.environ)
        for key, value in (env or {}).items():
            if value is None:
                environment.pop(key, None)
            else:
                environment[key] = value
        args = [NEARDUPD, "--config", config] + (["--role", role] if role else []) + list(args)
        self.process = subprocess.Popen(args, stdin=subprocess.DEVNULL,
                                        stdout=subprocess.DEVNULL, stderr=self.stderr,
                                        env=environment, preexec_fn=kafka_broker.die_with_parent)
        workdir.processes.append(self.process)

    def log_text(self):
        """What this process has logged so far."""
        with open(self.log_path, errors="replace") as f:
            f.seek(self.log_start)
            return f.read()

    def wait_assigned(self, timeout=60):
        """Waits until the daemon has joined the group and got partitions; returns the seconds."""
        start = time.monotonic()
        wait_for(lambda: "assigned partitions" in self.log_text() or not self.alive(), timeout,
                 "the daemon's partition assignment")
        check(self.alive(), "the daemon exited while joining the group")
        return time.monotonic() - start

    def alive(self):
        return self.process.poll() is None

    def metrics_url(self, timeout=30):
        """http://host:port of the metrics endpoint, from the daemon's start-up log line."""
        found = wait_for(lambda: re.search(r"metrics listening on (\S+):(\d+)", self.log_text()),
                         timeout, "the metrics endpoint's log line")
        return f"http://{found.group(1)}:{found.group(2)}"

    def wait_log(self, text, timeout=30, count=1):
        """Waits until `text` has been logged `count` times; returns the log."""
        wait_for(lambda: self.log_text().count(text) >= count or not self.alive(), timeout,
                 f"{text!r} x{count} in the daemon's log")
        check(self.alive(), f"the daemon exited while waiting for {text!r}")
        return self.log_text()

    def reload(self):
        self.process.send_signal(signal.SIGHUP)

    def kill9(self):
        self.process.kill()
        self.process.wait()

    def rss_kib(self):
        """The process's resident memory now, KiB (VmRSS)."""
        with open(f"/proc/{self.process.pid}/status") as f:
            return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1))

    def terminate(self, timeout=15):
        """SIGTERM; returns (exit code, seconds to exit)."""
        start = time.monotonic()
        self.process.send_signal(signal.SIGTERM)
        code = self.process.wait(timeout=timeout)
        return code, time.monotonic() - start

    def stop(self, timeout=15):
        """SIGTERM, which must end the daemon with exit 0; returns the seconds it took."""
        code, seconds = self.terminate(timeout)
        check(code == 0, f"exit code {code} after SIGTERM")
        return seconds


def fill(path):
    """Writes zeros to `path` until the file system is full; returns the bytes written."""
    chunk = b"\0" * (1 << 20)
    written = 0
    with open(path, "wb", buffering=0) as f:
        try:
            while True:
                written += f.write(chunk)
        except OSError:
            pass
        # Then smaller writes into the last partial megabyte.
        for size in (1 << 16, 4096, 512):
            try:
                while True:
                    written += f.write(b"\0" * size)
            except OSError:
                pass
    return written


def free_port():
    """A loopback TCP port that was free a moment ago (config needs a fixed metrics port)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url):
    """(status, body) of a GET; (0, reason) when nothing listens."""
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()
    except urllib.error.URLError as error:  # not listening yet
        return 0, str(error.reason)


def scrape(url):
    """Prometheus text from url + /metrics as {(name, ((label, value), ...)): float}, the labels
    sorted by name (their order in the text means nothing)."""
    with urllib.request.urlopen(url + "/metrics", timeout=5) as response:
        text = response.read().decode()
    samples = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        found = re.match(r'([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$', line)
        check(found, f"unparsable metrics line {line!r}")
        labels = tuple(sorted(re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"',
                                         found.group(2) or "")))
        samples[(found.group(1), labels)] = float(found.group(3))
    return samples


def metric(samples, name, **labels):
    """One sample's value (0 when absent)."""
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def metric_sum(samples, name):
    """The sum over every label set of a metric, e.g. pages_out_total over statuses."""
    return sum(v for (n, _), v in samples.items() if n == name)


def produce(bootstrap, topic, path, key_field="cluster"):
    """Produces JSONL lines keyed by `key_field` (pages of one cluster share a partition)."""
    subprocess.run([NEARDUP, "produce", "--bootstrap", bootstrap, "--topic", topic, "--in", path,
                    "--key-field", key_field], check=True, stderr=subprocess.DEVNULL)


def consume(bootstrap, topic, count=0, timeout=5.0, committed=True):
    """All records of a topic, each {"key","headers","partition","offset","value"}: those of
    committed transactions only (isolation.level=read_committed), or with committed=False also
    those of aborted and open ones."""
    args = [NEARDUP, "consume", "--bootstrap", bootstrap, "--topic", topic, "--with-meta",
            "--timeout", str(timeout), "--property",
            f"isolation.level={'read_committed' if committed else 'read_uncommitted'}"]
    if count:
        args += ["--count", str(count)]
    result = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    return [json.loads(line) for line in result.stdout.splitlines() if line.strip()]


def at_progress_steps(bootstrap, total, events, rng, timeout):
    """Each of `events` in turn, once the outputs on "tagged" reach its step of `total` (step
    n + 1 of len(events) + 1, a little jittered): kills and joins spread over a run."""
    for n, event in enumerate(events):
        target = total * (n + 1 + rng.uniform(-0.3, 0.3)) / (len(events) + 1)
        wait_for(lambda: output_count(bootstrap, "tagged", 8) >= target, timeout,
                 f"{target:.0f} outputs before '{event}'", interval=0.05)
        yield event


def output_count(bootstrap, topic, partitions):
    """Records in a topic's `partitions` partitions (their high watermarks; kcat on PATH),
    without reading them: cheap enough to poll."""
    query = ["kcat", "-b", bootstrap, "-Q"]
    for p in range(partitions):
        query += ["-t", f"{topic}:{p}:-1"]
    result = subprocess.run(query, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    return sum(int(m) for m in re.findall(r"offset (\d+)", result.stdout))


def wait_for_outputs(bootstrap, topic, keys, timeout):
    """Consumes the topic until every url in `keys` has an output; returns the records."""
    deadline = time.monotonic() + timeout
    while True:
        records = consume(bootstrap, topic, timeout=1.0)
        missing = keys - {r["value"]["url"] for r in records if isinstance(r["value"], dict)}
        if not missing:
            return records
        if time.monotonic() > deadline:
            raise AssertionError(f"{len(missing)} inputs have no output after {timeout}s, "
                                 f"e.g. {sorted(missing)[:3]}")
        time.sleep(1)


def dedup(workdir, config, pages):
    """`neardup dedup` over the same pages in the same order: url -> neardup tag."""
    out = workdir.file("dedup.jsonl")
    subprocess.run([NEARDUP, "dedup", "--store", workdir.file("dedup-store"), "--config", config,
                    "--in", pages, "--out", out], check=True, stderr=subprocess.DEVNULL)
    with open(out) as f:
        return {o["url"]: o["neardup"] for o in map(json.loads, f)}


def generate_pages(workdir, count, seed=1, name="pages.jsonl", truncate_rate=0.0,
                   site_notices=False):
    path = workdir.file(name)
    subprocess.run([sys.executable, os.path.join(HERE, "gen_pages.py"), "--count", str(count),
                    "--seed", str(seed), "--truncate-rate", str(truncate_rate), "--out", path] +
                   (["--site-notices"] if site_notices else []),
                   check=True)
    with open(path) as f:
        urls = [json.loads(line)["url"] for line in f]
    return path, urls


def write_lines(path, lines):
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def split_pages(workdir, pages, at, names=("first.jsonl", "second.jsonl")):
    """The JSONL file `pages` as two files in the workdir: lines before `at`, and the rest."""
    with open(pages) as f:
        lines = f.read().splitlines()
    paths = [workdir.file(name) for name in names]
    write_lines(paths[0], lines[:at])
    write_lines(paths[1], lines[at:])
    return paths


def verdict(tag):
    """The parts of a tag that say what the page is: what neardup dedup over the same pages in
    the same order gives."""
    return (tag["status"], tag.get("fingerprint"), tag.get("duplicate_of"), tag.get("matched"),
            tag.get("distance"), tag.get("method"), tag.get("similarity"), tag.get("reason"))


def replayed_fields(tag):
    """What every copy of a page's output must repeat: the verdict and, with containment on, what
    the passages found and the main text (output.main_text), which depend on what the index held
    when the page was first applied."""
    return verdict(tag) + tuple(json.dumps(tag.get(field), sort_keys=True)
                                for field in ("contained_in", "contains", "paragraphs", "text",
                                              "site_boilerplate"))


def settled_outputs(bootstrap, urls, expected, timeout, settle=1.0):
    """Waits until every url has an output, lets late replayed copies arrive for `settle`
    seconds, then reads the whole output topic and checks it (check_outputs)."""
    wait_for_outputs(bootstrap, "tagged", set(urls), timeout=timeout)
    time.sleep(settle)
    records = consume(bootstrap, "tagged", timeout=2)
    check_outputs(records, urls, expected)
    return records


def check_outputs(records, urls, expected=None):
    """Every input has an output; all copies of a page agree; none is a duplicate of itself;
    with `expected` (url -> tag), every verdict equals it. Returns url -> tag."""
    by_url = {}
    for record in records:
        value = record["value"]
        tag = value["neardup"]
        url = value["url"]
        check(record["key"] == value["cluster"], f"{url}: key {record['key']!r} was not kept")
        check(record["headers"].get("neardup-status") == tag["status"],
              f"{url}: header neardup-status disagrees with the value")
        source = record["headers"].get("neardup-source", "")
        check(re.fullmatch(r"[^/]+/\d+/\d+", source) is not None,
              f"{url}: header neardup-source {source!r} is not topic/partition/offset")
        if tag["status"] == "duplicate":
            check(tag["duplicate_of"] != url and tag["matched"] != url,
                  f"{url} is a duplicate of itself")
            check(record["headers"].get("neardup-duplicate-of") == tag["duplicate_of"],
                  f"{url}: header neardup-duplicate-of disagrees")
        if url in by_url:
            check(replayed_fields(by_url[url]) == replayed_fields(tag),
                  f"{url}: copies disagree: {by_url[url]} vs {tag}")
        by_url[url] = tag
    missing = set(urls) - set(by_url)
    check(not missing, f"{len(missing)} inputs have no output, e.g. {sorted(missing)[:3]}")
    if expected is not None:
        differing = [u for u in urls if verdict(by_url[u]) != verdict(expected[u])]
        check(not differing, f"{len(differing)} verdicts differ from neardup dedup's, e.g. "
                             f"{differing[:1]}: {by_url[differing[0]] if differing else ''} vs "
                             f"{expected[differing[0]] if differing else ''}")
    return by_url


# What a sanitizer prints when it reports (a sanitized build: scripts/sanitize.sh --all).
SANITIZER_REPORTS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:")


def check_no_sanitizer_reports(workdir):
    """Fails if a process of the test (a daemon's or the broker's log) printed a sanitizer
    report: a killed or restarted daemon's report would otherwise go unseen."""
    for name in sorted(os.listdir(workdir.path)):
        if not name.endswith(".log"):
            continue
        with open(workdir.file(name), errors="replace") as f:
            for line in f:
                check(not any(marker in line for marker in SANITIZER_REPORTS),
                      f"a sanitizer report in {name}: {line.strip()}")


def run(test, name):
    """Runs test(workdir); exit 0 on success, 1 with the reason on failure."""
    workdir = Workdir(name)
    try:
        test(workdir)
        check_no_sanitizer_reports(workdir)
    except Exception as error:  # report any failure, keep the files for inspection
        log(f"FAILED: {error!r}; files kept in {workdir.path}")
        workdir.close()
        raise
    workdir.close()
    if os.environ.get("NEARDUP_E2E_KEEP"):
        log(f"files kept in {workdir.path}")
    else:
        shutil.rmtree(workdir.path, ignore_errors=True)
    log("PASSED")


# Records that cannot be read as a page, or are useless pages: (record, where it must go:
# "dead" letter or "tagged" output, reason code).
BAD_RECORDS = [
    ("this is not json", "dead", "not_json"),
    ("[1, 2, 3]", "dead", "not_object"),
    # A valid record whose pass-through field is nested 100,000 levels deep (200 KB): refused
    # before parsing, never a crash that the replay of the record would repeat forever.
    ('{"url":"https://bad.example/deep","body":"<p>x</p>","x":' + "[" * 100000 + "]" * 100000
     + "}", "dead", "too_deep"),
    (json.dumps({"body": "<p>no url here</p>"}), "dead", "missing_url"),
    (json.dumps({"url": 42, "body": "<p>x</p>"}), "dead", "wrong_type"),
    (json.dumps({"url": "https://bad.example/b64", "body_base64": "!!not base64!!"}), "dead",
     "invalid_base64"),
    (json.dumps({"url": "https://bad.example/empty", "body": ""}), "tagged", "empty_body"),
    (json.dumps({"url": "https://bad.example/short", "body": "<p>hi</p>"}), "tagged",
     "low_content"),
]


def same_record(consumed_value, record):
    """Whether a value read back by `neardup consume` (JSON when it parses as JSON within the
    nesting limit, else the text) is the original record's bytes."""
    if isinstance(consumed_value, str):
        return consumed_value == record
    return consumed_value == json.loads(record)

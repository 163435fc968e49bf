#!/usr/bin/env python3
"""The documents' examples, run: every `neardup` and `neardupd` command in the sh blocks of
README.md and docs/cli.md that runs on this machine alone (the samples, the development broker
on loopback) is run as written, and its exit code and the shape of its output are checked: the
JSON keys of its lines, and the lines the documents show (docs/cli.md, docs/operations.md), with
their numbers, ids, pids and paths left open. A command the documents add must be run here or
listed in NOT_RUN with why, so that an example cannot drift from what the programs print.

    python3 tests/docs/examples_test.py NEARDUP NEARDUPD SOURCE_DIR
"""
import gzip
import json
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import unittest

NEARDUP = NEARDUPD = SOURCE = None
DOCS = ("README.md", "docs/cli.md")

# Documented commands that are not run here, and why. Keys are the commands as the documents
# write them (normalised by command_key()).
NOT_RUN = {
    "neardup dedup --store /tmp/nd --warc CC-MAIN-20250101000000-00000.warc.gz --out tagged.jsonl":
        "a Common Crawl file the reader downloads",
    "neardup lookup --store idx --jsonl new.jsonl": "new.jsonl is the reader's new pages",
    "neardup topics --bootstrap kafka1:9092 --create pages:12 --create pages-tagged:12 "
    "--create pages-dead:1 --replication-factor 3":
        "a real cluster: the development broker cannot create topics (CreateTopics)",
    "neardupd --check-config /etc/neardup/neardup.yaml":
        "an installed config (tests/install/ checks the installed files)",
}

# The documented commands run here, as command_key() writes them.
COMPARE = "neardup compare samples/pages/a.html samples/pages/b.html"
EXTRACT_ONE = "neardup extract samples/pages/a.html"
EXTRACT_DIR = "neardup extract samples/pages"
DEDUP = "neardup dedup --store /tmp/nd --in samples/crawl.jsonl.gz --out tagged.jsonl"
STATS = "neardup stats --store /tmp/nd"
DEDUP_WARC_SAMPLE = "neardup dedup --store /tmp/nd-warc --warc samples/warc/example.warc.gz"
DEDUP_WARC_CRAWL = "neardup dedup --store /tmp/nd-warc --warc crawl.warc.gz"
CLUSTERS = "neardup clusters --store idx"
SHOW = "neardup show --store idx p00017"
SHOW_EXPLAIN = "neardup show --store idx p00017 --explain --with p00002 --json"
BROKER = ("neardup broker --topic pages:4 --topic pages-tagged:4 --topic pages-dead:1 "
          "--bootstrap-file bs")
PRODUCE = 'neardup produce --bootstrap "$(cat bs)" --topic pages --in samples/crawl.jsonl.gz'
CONSUME = 'neardup consume --bootstrap "$(cat bs)" --topic pages-tagged --count 244'
RUN = (COMPARE, EXTRACT_ONE, EXTRACT_DIR, DEDUP, STATS, DEDUP_WARC_SAMPLE, DEDUP_WARC_CRAWL,
       CLUSTERS, SHOW, SHOW_EXPLAIN, BROKER, PRODUCE, CONSUME)


def command_key(line):
    """The command of a documented line: without `build/cli/`, a trailing comment, what follows a
    pipe or `&&`, and a trailing `&`."""
    line = re.sub(r"\s+#.*$", "", line.strip())
    line = re.split(r"\s+(?:\||&&)\s+", line)[0]
    line = line.removesuffix("&").strip()
    return re.sub(r"^build/(?:cli|daemon)/", "", line)


def documented_commands():
    """command key -> the document it is in, for every neardup/neardupd line of DOCS' sh blocks."""
    found = {}
    for doc in DOCS:
        with open(os.path.join(SOURCE, doc), encoding="utf-8") as f:
            text = f.read()
        for block in re.findall(r"^ *```sh\n(.*?)^ *```", text, re.S | re.M):
            for line in block.replace("\\\n", " ").splitlines():
                key = command_key(line)
                if re.match(r"neardupd? ", key):
                    found[re.sub(r"\s+", " ", key)] = doc
    return found


def doc_text(doc):
    with open(os.path.join(SOURCE, doc), encoding="utf-8") as f:
        return f.read()


def shown_line(doc, prefix):
    """The first line of `doc` (in a code block or in backticks) that starts with `prefix`."""
    match = re.search(r"(?:^|`)(" + re.escape(prefix) + r"[^`\n]*)", doc_text(doc), re.M)
    if not match:
        raise AssertionError(f"{doc} shows no line starting with {prefix!r}")
    return match.group(1)


def shape(line):
    """A pattern of a documented line: its times, scheme ids and numbers open, the rest literal."""
    open_parts = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+|s-[0-9a-f]+|\d+"
    pattern, end = "", 0
    for match in re.finditer(open_parts, line):
        pattern += re.escape(line[end:match.start()])
        pattern += r"\S+" if "T" in match.group() else "s-[0-9a-f]+" if match.group()[0] == "s" else r"\d+"
        end = match.end()
    return "^" + pattern + re.escape(line[end:]) + "$"


def json_lines(data):
    return [json.loads(line) for line in data.splitlines() if line.strip()]


class DocumentedExamples(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.dir = cls.tmp.name
        os.symlink(os.path.join(SOURCE, "samples"), os.path.join(cls.dir, "samples"))
        os.symlink(os.path.join(SOURCE, "examples"), os.path.join(cls.dir, "examples"))
        # `idx`, the store of docs/cli.md's questions, holds the sample crawl.
        cls.run_command("neardup dedup --store idx --in samples/crawl.jsonl.gz --out /dev/null")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    @classmethod
    def argv(cls, command, **substitutions):
        """A documented command's arguments in the work directory: its /tmp/ paths moved there,
        the programs the ones under test, `substitutions` made (e.g. a shell expansion)."""
        command = command.replace("/tmp/", cls.dir + "/tmp-")
        for old, new in substitutions.items():
            command = command.replace(old, new)
        argv = shlex.split(command)
        argv[0] = {"neardup": NEARDUP, "neardupd": NEARDUPD}[argv[0]]
        return argv

    @classmethod
    def run_command(cls, command, *extra, **substitutions):
        return subprocess.run(cls.argv(command, **substitutions) + list(extra), cwd=cls.dir,
                              capture_output=True, text=True, timeout=300)

    def example(self, command, *extra, exit_code=0, **substitutions):
        """Runs one documented command (in RUN) with `extra` arguments, and checks its exit code."""
        self.assertIn(command, RUN)
        self.assertIn(command, documented_commands(), "no longer documented: update this test")
        proc = self.run_command(command, *extra, **substitutions)
        self.assertEqual(proc.returncode, exit_code, f"{command}\n{proc.stderr[-2000:]}")
        return proc

    def path(self, name):
        return os.path.join(self.dir, name)

    def test_every_documented_command_is_run_or_said_why_not(self):
        documented = documented_commands()
        unaccounted = set(documented) - set(RUN) - set(NOT_RUN)
        self.assertFalse(unaccounted, "documented commands neither run nor in NOT_RUN")
        self.assertFalse((set(RUN) | set(NOT_RUN)) - set(documented),
                         "commands no longer documented")

    def test_pages(self):
        self.example(COMPARE)
        (page,) = json_lines(self.example(EXTRACT_ONE).stdout)
        self.assertLessEqual({"file", "status", "charset", "title", "text"}, set(page))
        for page in json_lines(self.example(EXTRACT_DIR).stdout):
            self.assertIn("title", page)

    def test_offline_deduplication_prints_the_documented_summary(self):
        proc = self.example(DEDUP)
        with open(self.path("tagged.jsonl"), encoding="utf-8") as f:
            tagged = json_lines(f.read())
        self.assertEqual(len(tagged), 244)
        self.assertTrue(all(t["neardup"]["status"] in ("unique", "duplicate", "skipped")
                            for t in tagged))
        self.assertTrue(any("duplicate_of" in t["neardup"] for t in tagged))
        summary = proc.stderr.splitlines()[-1]
        self.assertRegex(summary, shape(shown_line("docs/cli.md", "summary: 244 pages")))
        self.example(STATS)
        # docs/cli.md, "Progress": with --progress on a pipe, plain lines like the terminal's
        # (the time left comes after the first second, so it is left open here).
        proc = self.example(DEDUP, "--progress", **{"/tmp/nd": "/tmp/nd-progress"})
        terminal = shape(shown_line("docs/cli.md", "37%  7420 pages"))
        progress = "^neardup dedup: " + terminal[1:].replace(r"\ \ ETA\ \d+:\d+$", r"(  ETA \d+:\d+)?$")
        self.assertRegex(proc.stderr.splitlines()[0], progress)

    def test_warc_input_prints_the_documented_accounting(self):
        proc = self.example(DEDUP_WARC_SAMPLE)
        self.assertTrue(json_lines(proc.stdout))
        self.assertRegex(proc.stderr.splitlines()[-2], r"^warc: 1 file, \d+ records: \d+ pages; ")
        # The sample crawl as WARC (warcio, in the tests' Python environment): the counts shown.
        subprocess.run([sys.executable, os.path.join(SOURCE, "scripts", "warc_from_jsonl.py"),
                        "samples/crawl.jsonl.gz", "crawl.warc.gz"], cwd=self.dir, check=True,
                       capture_output=True)
        proc = self.example(DEDUP_WARC_CRAWL)
        warc, summary = proc.stderr.splitlines()[-2:]
        self.assertEqual(warc, shown_line("docs/cli.md", "warc: 1 file, 489 records"))
        self.assertRegex(summary, shape(shown_line("docs/cli.md", "summary: 244 pages  122 unique")))
        for tagged in json_lines(proc.stdout):
            self.assertIn("url", tagged)
            self.assertIn("status", tagged["neardup"])

    def test_what_the_documents_say_errors_look_like(self):
        # A mistyped command or option.
        shown = re.search(r"\$ neardup dedpu --store idx\n(.*)\n\$ neardup dedup --stroe idx\n(.*)\n",
                          doc_text("docs/cli.md"))
        self.assertTrue(shown, "docs/cli.md no longer shows the did-you-mean lines")
        self.assertEqual(self.run_command("neardup dedpu --store idx").stderr.strip(),
                         shown.group(1))
        self.assertEqual(self.run_command("neardup dedup --stroe idx").stderr.strip(),
                         shown.group(2))
        # Input that is not JSON lines: zstd-compressed.
        with open(self.path("crawl.jsonl.zst"), "wb") as f:
            f.write(b"\x28\xb5\x2f\xfd" + os.urandom(64) + b"\n" + b"\x01\x9a\x00frame\n" * 40)
        proc = self.run_command("neardup dedup --store /tmp/zst --in crawl.jsonl.zst")
        self.assertEqual(proc.returncode, 2)
        documented = shown_line("docs/cli.md", "neardup dedup: none of the first 16 lines of crawl")
        # The parser's own words after "not_json: " depend on the bytes.
        head, tail = documented.split("not_json: ", 1)
        self.assertTrue(proc.stderr.startswith(head + "not_json: "), proc.stderr)
        self.assertTrue(proc.stderr.rstrip().endswith(tail[tail.index("); the input looks"):]),
                        proc.stderr)
        # A --warc file that is not WARC.
        proc = self.run_command("neardup dedup --store /tmp/w --warc samples/crawl.jsonl.gz")
        self.assertEqual(proc.returncode, 2)
        self.assertEqual(proc.stderr.strip(),
                         shown_line("docs/cli.md", "neardup dedup: samples/crawl.jsonl.gz: not a WARC"))

    def test_questions_to_the_index(self):
        clusters = json_lines(self.example(CLUSTERS).stdout)
        self.assertTrue(clusters)
        for cluster in clusters:
            self.assertLessEqual({"root", "size", "members"}, set(cluster))
        self.example(SHOW)
        explained = json_lines(self.example(SHOW_EXPLAIN).stdout)[0]
        self.assertLessEqual({"a", "b", "simhash", "minhash", "stored"}, set(explained))
        self.assertEqual((explained["a"]["id"], explained["b"]["id"]), ("p00017", "p00002"))
        # The documented text is what the sample's pair gives.
        text = subprocess.run([NEARDUP, "show", "--text", "--store", "idx", "p00017", "--explain"],
                              cwd=self.dir, capture_output=True, text=True, timeout=60).stdout
        block = re.search(r"^(p00017 and p00002: .*?)^```", doc_text("docs/cli.md"),
                          re.S | re.M).group(1).splitlines()
        self.assertEqual(len(block), len(text.splitlines()))
        for documented, printed in zip(block, text.splitlines()):
            self.assertTrue(printed.startswith(documented.removesuffix(" …")),
                            f"{printed!r} is documented as {documented!r}")

    def test_the_kafka_tools_and_the_daemon_on_the_development_broker(self):
        self.assertIn(BROKER, documented_commands())
        broker = subprocess.Popen(self.argv(BROKER), cwd=self.dir, stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)
        daemon = None
        try:
            for _ in range(100):
                if os.path.exists(self.path("bs")) and os.path.getsize(self.path("bs")):
                    break
                time.sleep(0.1)
            with open(self.path("bs")) as f:
                bootstrap = f.read().strip()
            config = self.path("neardup.yaml")
            with open(config, "w") as f:
                f.write(f'kafka:\n  bootstrap_servers: "{bootstrap}"\n  input_topic: pages\n'
                        f'  output_topic: pages-tagged\n  dead_letter_topic: pages-dead\n'
                        f'store:\n  path: "{self.path("daemon-store")}"\n'
                        f'  expected_documents: 100000\nmetrics:\n  listen: ""\n')
            with open(self.path("neardupd.log"), "w") as log:
                daemon = subprocess.Popen([NEARDUPD, "--config", config], cwd=self.dir,
                                          stderr=log, stdout=subprocess.DEVNULL)
            expand = {'"$(cat bs)"': bootstrap}
            proc = self.example(PRODUCE, **expand)
            self.assertEqual(proc.stderr.splitlines()[-1],
                             "neardup produce: produced=244 delivered=244 failed=0")
            tagged = json_lines(self.example(CONSUME, "--timeout", "60", **expand).stdout)
            self.assertEqual(len(tagged), 244)
            self.assertTrue(all("status" in t["neardup"] for t in tagged))

            # docs/cli.md: what the Kafka tools say when fewer records came than --count, when
            # a topic is missing and when no broker answers.
            proc = subprocess.run([NEARDUP, "consume", "--bootstrap", bootstrap, "--topic",
                                   "pages-tagged", "--count", "250", "--timeout", "2"],
                                  capture_output=True, text=True, timeout=60)
            self.assertEqual(proc.returncode, 1)
            self.assertRegex(proc.stderr.splitlines()[-1], shape(shown_line(
                "docs/cli.md", "neardup consume: records=")))
            proc = subprocess.run([NEARDUP, "produce", "--bootstrap", bootstrap, "--topic",
                                   "pages-taged", "--in", "samples/crawl.jsonl.gz"], cwd=self.dir,
                                  capture_output=True, text=True, timeout=60)
            self.assertEqual(proc.returncode, 2)
            self.assertRegex(proc.stderr.strip(), shape(shown_line(
                "docs/cli.md", "neardup produce: topics missing on the cluster")))
            with socket.socket() as unused:
                unused.bind(("127.0.0.1", 0))
                nobody = f"127.0.0.1:{unused.getsockname()[1]}"
            proc = subprocess.run([NEARDUP, "produce", "--bootstrap", nobody, "--topic", "pages",
                                   "--in", "samples/crawl.jsonl.gz"], cwd=self.dir,
                                  capture_output=True, text=True, timeout=60)
            self.assertEqual(proc.returncode, 3)
            self.assertRegex(proc.stderr.strip(), shape(shown_line(
                "docs/cli.md", "neardup produce: no broker answered")))

            # docs/operations.md: the daemon's start line, and a second writer refused.
            with open(self.path("neardupd.log")) as f:
                started = [line.rstrip("\n") for line in f if " info daemon started " in line]
            self.assertTrue(started, "neardupd logged no start line")
            self.assertRegex(started[0], shape(shown_line(
                "docs/operations.md", "2026-01-02T03:04:05.678 info daemon started")))
            # (A relative path: run_command() moves /tmp/ paths.)
            proc = self.run_command("neardup dedup --store daemon-store --in "
                                    "samples/crawl.jsonl.gz --out /dev/null")
            self.assertEqual(proc.returncode, 3, proc.stderr)
            documented = shown_line("docs/operations.md", "neardup dedup: the store /var/lib/neardup")
            self.assertRegex(proc.stderr.strip(), shape(
                documented.replace("/var/lib/neardup", "daemon-store")))
        finally:
            if daemon:
                daemon.terminate()
                self.assertEqual(daemon.wait(timeout=30), 0)
            broker.terminate()
            broker.wait(timeout=30)

    def test_generated_man_page_and_completion(self):
        self.assertIn(".TH", self.run_command("neardup generate man").stdout)


if __name__ == "__main__":
    NEARDUP, NEARDUPD, SOURCE = (os.path.abspath(arg) for arg in sys.argv[1:4])
    unittest.main(argv=[sys.argv[0], "-v"])

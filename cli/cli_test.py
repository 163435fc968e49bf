#!/usr/bin/env python3
"""End-to-end tests of the `neardup` command line: real processes, real files, exit codes.

    python3 cli/cli_test.py NEARDUP_BINARY SOURCE_DIR
"""
import base64
import gzip
import html
import json
import os
import pty
import subprocess
import sys
import tempfile
import time
import unittest

NEARDUP = None
SOURCE = None


def run(*args, stdin=None, check=None):
    proc = subprocess.run([NEARDUP, *args], input=stdin, capture_output=True, timeout=300)
    if check is not None and proc.returncode != check:
        raise AssertionError(f"neardup {' '.join(args)}: exit {proc.returncode}, want {check}\n"
                             f"stderr: {proc.stderr.decode(errors='replace')[-2000:]}")
    return proc


def run_on_terminal(*args):
    """Runs neardup with stdout and stderr on a pseudo-terminal; returns what it printed."""
    controller, terminal = pty.openpty()
    proc = subprocess.Popen([NEARDUP, *args], stdout=terminal, stderr=terminal,
                            stdin=subprocess.DEVNULL)
    os.close(terminal)
    output = b""
    while True:
        try:
            chunk = os.read(controller, 65536)
        except OSError:  # EIO: the terminal's other end was closed
            break
        if not chunk:
            break
        output += chunk
    os.close(controller)
    proc.wait(timeout=60)
    return output.decode().replace("\r\n", "\n")


def lines(data):
    return [json.loads(line) for line in data.decode("utf-8").splitlines() if line.strip()]


def free_port():
    """A loopback port nothing listens on."""
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class DevelopmentBroker:
    """`neardup broker` with the given topics, for as long as the `with` block."""

    def __init__(self, directory, *topics):
        self.file = os.path.join(directory, "bootstrap")
        self.process = subprocess.Popen(
            [NEARDUP, "broker", "--bootstrap-file", self.file,
             *[arg for topic in topics for arg in ("--topic", topic)]],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def __enter__(self):
        for _ in range(100):
            if os.path.exists(self.file) and os.path.getsize(self.file) > 0:
                with open(self.file) as f:
                    return f.read().strip()
            time.sleep(0.1)
        raise AssertionError("neardup broker wrote no bootstrap file")

    def __exit__(self, *exc):
        self.process.terminate()
        self.process.wait(timeout=30)


class CommandLine(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name
        self.pages = os.path.join(SOURCE, "samples", "pages")

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, name, data):
        path = os.path.join(self.dir, name)
        with open(path, "wb") as f:
            f.write(data)
        return path

    def test_version_and_help_exit_zero(self):
        self.assertIn(b"neardup", run("--version", check=0).stdout)
        self.assertIn(b"dedup", run("--help", check=0).stdout)

    def test_unknown_option_is_a_usage_error(self):
        self.assertEqual(run("compare", "--no-such-option").returncode, 2)

    def test_mistakes_get_did_you_mean_and_exit_two(self):
        for args, message in [
            (["dedpu", "--store", "x"],
             "neardup: unknown command 'dedpu'; did you mean 'dedup'? (see neardup --help)"),
            (["--verison"],
             "neardup: unknown option '--verison'; did you mean '--version'? (see neardup --help)"),
            (["dedup", "--stroe", "x"],
             "neardup dedup: unknown option '--stroe'; did you mean '--store'? "
             "(see neardup dedup --help)"),
            ([], "neardup: a command is required, one of: fingerprint, extract, compare, decode, "
                 "dedup, learn, stats, boilerplate, lookup, show, clusters, forget, drop-scheme, "
                 "bench, broker, produce, consume, topics, generate (see neardup --help)"),
        ]:
            proc = run(*args, check=2)
            self.assertEqual(proc.stderr.decode().strip(), message)
            self.assertEqual(proc.stdout, b"")

    def test_every_command_help_shows_defaults_and_examples_without_parser_internals(self):
        commands = ["fingerprint", "extract", "compare", "decode", "dedup", "stats", "bench",
                    "broker", "produce", "consume", "generate"]
        for command in commands:
            text = run(command, "--help", check=0).stdout.decode()
            self.assertIn("Examples:\n  neardup " + command, text, command)
            for leftover in ("INT", "TEXT", "UINT", "FLOAT", "REQUIRED", "Excludes", " in ["):
                self.assertNotIn(leftover, text, f"{command}: {leftover}")
        self.assertIn("--in FILE", run("dedup", "--help").stdout.decode())
        self.assertIn("[default: -]", run("dedup", "--help").stdout.decode())
        self.assertIn("[default: url]", run("produce", "--help").stdout.decode())
        self.assertIn("--brokers N", run("broker", "--help").stdout.decode())
        self.assertIn("[default: 1]", run("broker", "--help").stdout.decode())

    def test_a_missing_input_file_is_a_usage_error_for_every_command(self):
        missing = os.path.join(self.dir, "missing.html")
        page = f"{self.pages}/a.html"
        for args in (["fingerprint", missing], ["extract", missing], ["decode", missing],
                     ["compare", page, missing], ["compare", missing, page],
                     ["dedup", "--store", os.path.join(self.dir, "i"), "--in", missing],
                     ["bench", missing],
                     ["produce", "--bootstrap", "127.0.0.1:1", "--topic", "t", "--in", missing]):
            proc = run(*args)
            self.assertEqual(proc.returncode, 2, args)
            self.assertIn(b"missing.html", proc.stderr, args)

    def test_man_page_and_bash_completion_come_from_the_help(self):
        man = run("generate", "man", check=0).stdout.decode()
        self.assertTrue(man.startswith(".TH NEARDUP 1 "))
        for command in ("dedup", "broker", "compare"):
            self.assertIn(f'.SS "neardup {command} ', man)
        self.assertIn("\\fB\\-\\-store\\fR \\fIDIR\\fR", man)
        self.assertIn(".SH EXIT STATUS", man)
        script = run("generate", "complete-bash", check=0).stdout.decode()
        # Complete a command name and an option with bash itself.
        probe = script + (
            'COMP_WORDS=(neardup ded); COMP_CWORD=1; _neardup; echo "${COMPREPLY[*]}"\n'
            'COMP_WORDS=(neardup dedup --st); COMP_CWORD=2; _neardup; echo "${COMPREPLY[*]}"\n')
        out = subprocess.run(["bash", "-c", probe], capture_output=True, text=True, check=True)
        self.assertEqual(out.stdout.splitlines(), ["dedup", "--store"])

    def test_compare_exits_zero_for_near_duplicates_and_one_for_different_pages(self):
        same = run("compare", "--json", f"{self.pages}/a.html", f"{self.pages}/b.html", check=0)
        report = json.loads(same.stdout)
        self.assertEqual(report["verdict"], "near_duplicate")
        self.assertLessEqual(report["distance"], report["max_distance"])
        other = run("compare", "--json", f"{self.pages}/a.html", f"{self.pages}/c.html", check=1)
        self.assertEqual(json.loads(other.stdout)["verdict"], "different")

    def test_answers_are_text_on_a_terminal_and_json_lines_when_piped(self):
        args = ["compare", f"{self.pages}/a.html", f"{self.pages}/b.html"]
        on_terminal = run_on_terminal(*args)
        self.assertEqual(on_terminal.splitlines()[0],
                         f"{self.pages}/a.html and {self.pages}/b.html are near-duplicates, "
                         "found by SimHash and MinHash")
        self.assertEqual(run_on_terminal(*args[:1], "--json", *args[1:]).count("{"), 3)
        piped = json.loads(run(*args, check=0).stdout)
        self.assertEqual(piped["verdict"], "near_duplicate")
        self.assertEqual(run(*args[:1], "--text", *args[1:], check=0).stdout.decode(), on_terminal)
        self.assertEqual(run("compare", "--json", "--text", *args[1:]).returncode, 2)

    def test_compare_text_says_the_verdict_the_numbers_and_no_sketch_unless_asked(self):
        a, c = f"{self.pages}/a.html", f"{self.pages}/c.html"
        text = run("compare", "--text", a, c, check=1).stdout.decode().splitlines()
        self.assertEqual(text[0], f"{a} and {c} are different")
        rows = dict(line.strip().split("  ", 1) for line in text[1:])
        self.assertRegex(rows["SimHash distance"].strip(),
                         r"^\d+ bits of 64 \(near-duplicates at 3 or fewer\)$")
        self.assertRegex(rows["MinHash similarity"].strip(),
                         r"^0\.\d{3} \(near-duplicates at 0.45 or more in a shared band; "
                         r"no band is shared\)$")
        self.assertNotIn("containment", rows)  # containment.enabled is off by default
        on = self.write("containment.yaml", b"containment:\n  enabled: true\n")
        text = run("compare", "--text", "--config", on, a, c, check=1).stdout.decode()
        rows = dict(line.strip().split("  ", 1) for line in text.splitlines()[1:])
        self.assertRegex(rows["containment"].strip(),
                         r"^0\.\d{3} of A found in B, 0\.\d{3} of B in A \(neither is contained at "
                         r"0.5\); 0 paragraphs shared$")
        self.assertRegex(rows["fingerprint of A"].strip(), r"^[0-9a-f]{16} \(\d+ features\)$")
        self.assertTrue(rows["scheme"].strip().startswith("s-"))
        self.assertLess(max(map(len, text)), 120)
        plain = json.loads(run("compare", "--json", a, c, check=1).stdout)
        self.assertNotIn("minhash", plain["a"])
        sketches = json.loads(run("compare", "--json", "--sketches", a, c, check=1).stdout)
        self.assertEqual(len(sketches["a"]["minhash"]), 512)
        self.assertIn("sketch of B", run("compare", "--text", "--sketches", a, c).stdout.decode())
        empty = self.write("empty.html", b"")
        self.assertEqual(run("compare", "--text", a, empty, check=1).stdout.decode(),
                         f"{a} and {empty} cannot be compared: {empty} was skipped (empty_body)\n")

    def test_compare_explain_names_what_an_excerpt_shares_and_where(self):
        a = f"{self.pages}/a.html"
        text = json.loads(run("extract", a).stdout)["text"].split("\n")
        filler = ("<p>In other news the county fair opens next week with a new livestock "
                  "pavilion and a shuttle from the downtown garage every twenty minutes.</p>")
        excerpt = self.write("excerpt.html", ("<html><body><article><h1>Briefing</h1>" + filler +
                                              "".join(f"<p>{p}</p>" for p in text[2:5]) +
                                              "</article></body></html>").encode())
        answer = json.loads(run("compare", "--json", "--explain", excerpt, a, check=1).stdout)
        explain = answer["explain"]
        self.assertEqual(explain["paragraphs_shared"], 3)
        self.assertEqual([p["b"]["paragraph"] for p in explain["paragraphs"]
                          if p["a"]["paragraph"] == 2], [3])  # text[2] is B's paragraph 3
        covered_a = explain["covered"]["a"] / explain["words"]["a"]
        covered_b = explain["covered"]["b"] / explain["words"]["b"]
        self.assertGreater(covered_a, 0.5)   # most of the excerpt is in the article
        self.assertLess(covered_b, 0.35)     # a small part of the article is in the excerpt
        # The longest run starts where the first copied paragraph starts in the article.
        self.assertIn(explain["runs"][0]["b"]["word"],
                      [p["b"]["word"] for p in explain["paragraphs"]])
        same = json.loads(run("compare", "--json", "--explain", a, f"{self.pages}/b.html").stdout)
        self.assertEqual(same["explain"]["covered"]["a"], same["explain"]["words"]["a"])
        self.assertNotIn("explain", json.loads(run("compare", "--json", a, a).stdout))
        shown = run("compare", "--text", "--explain", excerpt, a, check=1).stdout.decode()
        self.assertIn("  shared paragraphs   3\n", shown)
        self.assertRegex(shown, r"A paragraph \d+, word \d+ = B paragraph 4, word \d+, \d+ words: ")

    def test_bad_config_is_exit_two_naming_the_key(self):
        config = self.write("bad.yaml", b"features:\n  ngram: 0\n")
        proc = run("fingerprint", "--config", config, f"{self.pages}/a.html", check=2)
        self.assertIn(b"features.ngram", proc.stderr)

    def test_fingerprint_reports_sixteen_hex_digits_and_the_scheme(self):
        out = lines(run("fingerprint", self.pages, check=0).stdout)
        self.assertEqual(len(out), 3)
        for line in out:
            self.assertEqual(line["status"], "fingerprinted")
            self.assertRegex(line["fingerprint"], r"^[0-9a-f]{16}$")
            self.assertRegex(line["scheme"], r"^s-[0-9a-f]{8}$")
            self.assertGreater(line["features"], 16)
            # The sketch and its upper values: 128 values of 4 hex digits each.
            self.assertRegex(line["minhash"], r"^[0-9a-f]{512}$")
            self.assertRegex(line["minhash_upper"], r"^[0-9a-f]{512}$")
            self.assertNotEqual(line["minhash_upper"], line["minhash"])

    def test_empty_binary_and_oversized_inputs_are_skipped_with_reasons(self):
        empty = self.write("empty.html", b"")
        binary = self.write("binary.html", b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 64)
        huge = self.write("huge.html", b"<p>" + b"word " * (3 * 1024 * 1024) + b"</p>")
        out = {os.path.basename(l["file"]): l for l in lines(
            run("fingerprint", empty, binary, huge, check=0).stdout)}
        self.assertEqual(out["empty.html"]["reason"], "empty_body")
        self.assertEqual(out["binary.html"]["reason"], "not_text")
        self.assertEqual(out["huge.html"]["reason"], "too_large")

    def test_missing_file_is_reported_by_name(self):
        proc = run("fingerprint", os.path.join(self.dir, "nope.html"))
        self.assertNotEqual(proc.returncode, 0)
        self.assertIn(b"nope.html", proc.stderr)

    def test_extract_prints_main_text_without_title(self):
        out = lines(run("extract", f"{self.pages}/a.html", check=0).stdout)
        self.assertEqual(len(out), 1)
        self.assertTrue(out[0]["title"])
        self.assertGreater(len(out[0]["text"]), 200)
        self.assertNotIn(out[0]["title"], out[0]["text"].split("\n")[0:1])

    def test_extract_drops_paragraphs_seen_in_an_earlier_file(self):
        a, b, c = (f"{self.pages}/{x}.html" for x in "abc")
        full = lines(run("extract", a, b, c, check=0).stdout)
        kept = lines(run("extract", "--drop-seen-paragraphs", a, b, c, check=0).stdout)
        self.assertEqual(kept[0]["text"], full[0]["text"])  # the first occurrences stay
        self.assertEqual(kept[0]["dropped_paragraphs"], 0)
        # b is a copy of a's text (under another frame): every paragraph was in a; c is another
        # story.
        paragraphs = full[1]["text"].split("\n")
        self.assertTrue(all(p in full[0]["text"].split("\n") for p in paragraphs))
        self.assertEqual(kept[1]["text"], "")
        self.assertEqual(kept[1]["dropped_paragraphs"], len(paragraphs))
        self.assertEqual(kept[1]["dropped_bytes"], sum(len(p.encode()) for p in paragraphs))
        self.assertEqual(kept[2]["text"], full[2]["text"])
        self.assertEqual(kept[2]["dropped_paragraphs"], 0)
        self.assertNotIn("dropped_paragraphs", full[0])

    def test_decode_names_charset_and_its_source(self):
        page = self.write("cp1251.html", '<html><head><meta charset="windows-1251"></head>'
                          '<body><p>Привет, мир! Это проверка.</p></body></html>'.encode("cp1251"))
        out = lines(run("decode", page, check=0).stdout)[0]
        self.assertEqual(out["charset"], "windows-1251")
        self.assertEqual(out["charset_source"], "meta")
        self.assertIn("Привет, мир!", out["text"])

    def sample_crawl(self):
        with gzip.open(os.path.join(SOURCE, "samples", "crawl.jsonl.gz"), "rb") as f:
            return f.read()

    def test_dedup_tags_every_page_and_a_second_run_is_byte_identical(self):
        crawl = self.sample_crawl()
        store = os.path.join(self.dir, "index")
        first = run("dedup", "--store", store, stdin=crawl, check=0)
        second = run("dedup", "--store", store, stdin=crawl, check=0)
        tagged = lines(first.stdout)
        self.assertEqual(len(tagged), len(crawl.splitlines()))
        self.assertEqual(first.stdout, second.stdout)
        statuses = {t["neardup"]["status"] for t in tagged}
        self.assertTrue({"unique", "duplicate"} <= statuses)
        for t in tagged:
            self.assertNotEqual(t["neardup"].get("duplicate_of"), t["id"])
        self.assertIn(b"summary:", first.stderr)

    def test_questions_to_the_index_agree_with_the_tagged_output(self):
        store = os.path.join(self.dir, "index")
        crawl = self.write("crawl.jsonl", self.sample_crawl())
        tagged = lines(run("dedup", "--store", store, "--in", crawl, check=0).stdout)
        implied = {}
        for t in tagged:
            tag = t["neardup"]
            if tag["status"] == "unique":
                implied.setdefault(t["id"], {t["id"]})
            elif tag["status"] == "duplicate":
                implied.setdefault(tag["duplicate_of"], {tag["duplicate_of"]}).add(t["id"])
        clusters = lines(run("clusters", "--store", store, "--min-size", "1", check=0).stdout)
        self.assertEqual({c["root"]: {m["id"] for m in c["members"]} for c in clusters}, implied)
        for c in clusters:
            self.assertEqual(c["size"], len(c["members"]))
        big = [c for c in clusters if c["size"] >= 2]
        self.assertEqual(lines(run("clusters", "--store", store, check=0).stdout), big)

        member = next(t for t in tagged if t["neardup"]["status"] == "duplicate")
        shown = lines(run("show", "--json", "--store", store, member["id"], check=0).stdout)[0]
        self.assertEqual(shown["page"]["cluster"], member["neardup"]["duplicate_of"])
        self.assertEqual(shown["page"]["fingerprint"], member["neardup"]["fingerprint"])
        self.assertEqual(shown["page"]["matched"], member["neardup"]["matched"])
        self.assertIn(member["id"], [m["id"] for m in shown["cluster"]["members"]])
        missing = run("show", "--json", "--store", store, "no-such-id")
        self.assertEqual(missing.returncode, 1)
        self.assertIn(b"no-such-id: no live page", missing.stderr)

        # lookup inserts nothing and finds each stored page (itself, or an earlier copy).
        before = run("stats", "--store", store, "--json", check=0).stdout
        answers = lines(run("lookup", "--json", "--store", store, "--jsonl", crawl, check=0).stdout)
        self.assertEqual(len(answers), len(tagged))
        for t, a in zip(tagged, answers):
            self.assertEqual(a["id"], t["id"])
            if t["neardup"]["status"] != "skipped":
                self.assertEqual(a["neardup"]["status"], "duplicate")
                self.assertEqual(a["neardup"]["duplicate_of"],
                                 t["neardup"].get("duplicate_of", t["id"]))
        self.assertEqual(run("stats", "--store", store, "--json", check=0).stdout, before)

        # forget: the page is gone from show and clusters; a lookup no longer names it.
        root = big[0]["root"]
        self.assertEqual(run("forget", "--store", store, root, "no-such-id", check=0).stdout,
                         b"forgot 1 of 2 ids\n")
        self.assertEqual(run("show", "--json", "--store", store, root).returncode, 1)
        after = {c["root"]: c for c in
                 lines(run("clusters", "--store", store, "--min-size", "1", check=0).stdout)}
        self.assertNotIn(root, [m["id"] for c in after.values() for m in c["members"]])
        page = next(t for t in tagged if t["id"] == root)
        answer = lines(run("lookup", "--json", "--store", store, "--jsonl", "-",
                           stdin=(json.dumps({k: v for k, v in page.items() if k != "neardup"})
                                  + "\n").encode(), check=0).stdout)[0]
        self.assertNotEqual(answer["neardup"].get("matched"), root)

    def test_show_explain_says_from_the_stored_signatures_why_two_pages_match(self):
        store = os.path.join(self.dir, "index")
        crawl = self.write("crawl.jsonl", self.sample_crawl())
        tagged = lines(run("dedup", "--store", store, "--in", crawl, check=0).stdout)
        by_id = {t["id"]: t["neardup"] for t in tagged}
        stats = lines(run("stats", "--store", store, "--json", check=0).stdout)[0]
        k = stats["design"]["k"]
        checked = set()
        for t in tagged:
            tag = t["neardup"]
            if tag["status"] != "duplicate" or tag["method"] in checked:
                continue
            checked.add(tag["method"])
            explained = lines(run("show", "--json", "--explain", "--store", store, t["id"],
                                  check=0).stdout)[0]
            self.assertEqual((explained["a"]["id"], explained["b"]["id"]), (t["id"], tag["matched"]))
            stored = explained["stored"]
            self.assertTrue(stored["matched"])
            self.assertEqual((stored["method"], stored["distance"]), (tag["method"], tag["distance"]))
            simhash = explained["simhash"]
            differ = int(tag["fingerprint"], 16) ^ int(by_id[tag["matched"]]["fingerprint"], 16)
            self.assertEqual(simhash["distance"], bin(differ).count("1"))
            self.assertEqual(sum(simhash["blocks"]), simhash["distance"])
            self.assertEqual(simhash["k"], k)
            if simhash["distance"] <= k:  # the permuted tables find every pair within k
                self.assertTrue(simhash["tables"], explained)
            minhash = explained["minhash"]
            self.assertAlmostEqual(minhash["similarity"], tag["similarity"], places=4)
            if tag["method"] in ("minhash", "both"):
                self.assertTrue(minhash["bands"], explained)
            text = run("show", "--text", "--explain", "--store", store, t["id"],
                       check=0).stdout.decode()
            self.assertTrue(text.startswith(f"{t['id']} and {tag['matched']}: {t['id']} was "
                                            f"tagged a duplicate matching {tag['matched']}"), text)
            self.assertIn("the index keeps no text", text)
        self.assertTrue(checked & {"minhash", "both"}, checked)

        # Two pages of different clusters: no match, far apart, no band shared.
        roots = [t["id"] for t in tagged if t["neardup"]["status"] == "unique"]
        apart = lines(run("show", "--json", "--explain", "--with", roots[1], "--store", store,
                          roots[0], check=0).stdout)[0]
        self.assertFalse(apart["stored"]["matched"])
        self.assertGreater(apart["simhash"]["distance"], k)
        self.assertEqual(apart["minhash"]["bands"], [])
        # A first page that matched nothing needs --with; --with needs --explain; no such page.
        alone = run("show", "--json", "--explain", "--store", store, roots[0])
        self.assertEqual(alone.returncode, 1)
        self.assertIn(b"name the page to compare it with (--with)", alone.stderr)
        self.assertEqual(run("show", "--store", store, roots[0], "--with", roots[1]).returncode, 2)
        gone = run("show", "--explain", "--store", store, roots[0], "--with", "no-such-id")
        self.assertEqual(gone.returncode, 1)
        self.assertIn(b"no-such-id: no live page", gone.stderr)

    def test_lookup_show_and_stats_answer_in_words_with_text(self):
        store = os.path.join(self.dir, "index")
        crawl = self.write("crawl.jsonl", self.sample_crawl())
        tagged = lines(run("dedup", "--store", store, "--in", crawl, check=0).stdout)
        member = next(t for t in tagged if t["neardup"]["status"] == "duplicate")
        tag = member["neardup"]
        found = f"found by {'SimHash and MinHash' if tag['method'] == 'both' else tag['method']}"
        found = found.replace("simhash", "SimHash").replace("minhash", "MinHash")
        matched = "" if tag["matched"] == tag["duplicate_of"] else f"matched {tag['matched']}, "
        shown = run("show", "--text", "--store", store, member["id"], check=0).stdout.decode()
        first = shown.splitlines()[0]
        self.assertTrue(first.startswith(f"{member['id']}: duplicate of {tag['duplicate_of']} "
                                         f"({matched}{found}: distance {tag['distance']} bit"),
                        first)
        self.assertIn(f"  cluster             {tag['duplicate_of']}, ", shown)

        pages = self.write("pages.jsonl", b"".join(
            json.dumps({k: v for k, v in t.items() if k != "neardup"}).encode() + b"\n"
            for t in tagged[:3]) + b"not json\n")
        looked = run("lookup", "--text", "--store", store, "--jsonl", pages,
                     check=0).stdout.decode().splitlines()
        self.assertEqual(len(looked), 4)
        self.assertTrue(looked[0].startswith(f"{tagged[0]['id']}: duplicate of "), looked[0])
        self.assertTrue(looked[3].startswith("line 4: not a page (not_json: "), looked[3])
        one = run("lookup", "--text", "--store", store, f"{self.pages}/c.html", check=0)
        self.assertRegex(one.stdout.decode(),
                         r"^\S+/c.html: (unique|duplicate of \S+ \(.*\))\n(  .*\n)*$")

        stats = run("stats", "--text", "--store", store, check=0).stdout.decode().splitlines()
        self.assertEqual(stats[0], f"{store}: {len(tagged)} documents")
        self.assertRegex(stats[1], r"^  on disk +\d+\.\d KiB, [\d,]+ bytes per document$")

    def test_containment_and_paragraphs_in_dedup_show_and_lookup_when_enabled(self):
        on = self.write("containment.yaml", b"containment:\n  enabled: true\n")
        article = lines(run("extract", f"{self.pages}/a.html", check=0).stdout)[0]
        paragraphs = article["text"].split("\n")
        # A page of another site quoting the article's first four paragraphs only.
        excerpt = ("<html><head><title>Quoted</title></head><body><nav><a href='/'>Home</a>"
                   "</nav><article><h1>What was said</h1>" +
                   "".join(f"<p>{html.escape(p)}</p>" for p in paragraphs[:4]) +
                   "</article></body></html>")
        with open(f"{self.pages}/a.html", "rb") as f:
            body = f.read()
        crawl = self.write("crawl.jsonl", b"".join(json.dumps(r).encode() + b"\n" for r in [
            {"url": "https://a.example/1", "id": "article",
             "body_base64": base64.b64encode(body).decode()},
            {"url": "https://b.example/2", "id": "excerpt", "body": excerpt}]))
        for config, store in ((on, "on"), (None, "off")):
            args = ["--config", config] if config else []
            tagged = lines(run("dedup", "--store", os.path.join(self.dir, store), *args,
                               "--in", crawl, check=0).stdout)
            tag = tagged[1]["neardup"]
            if config is None:
                self.assertNotIn("contained_in", tag)
                self.assertNotIn("paragraphs", tag)
                continue
            self.assertEqual(tag["status"], "unique")
            self.assertEqual(tag["contained_in"]["id"], "article")
            self.assertGreater(tag["contained_in"]["containment"], 0.8)
            self.assertEqual(tag["paragraphs"]["first"], ["article"])
            self.assertEqual(tag["paragraphs"]["seen"], tag["paragraphs"]["total"])
            self.assertEqual(tagged[0]["neardup"]["paragraphs"]["seen"], 0)
            shown = run("show", "--text", "--store", os.path.join(self.dir, store), "excerpt",
                        check=0).stdout.decode()
            self.assertRegex(shown, r"\n  contained in +article \([01]\.\d{3} of this text found "
                                    r"there\)\n")
            looked = lines(run("lookup", "--store", os.path.join(self.dir, store), *args,
                               "--jsonl", crawl, check=0).stdout)
            self.assertEqual(looked[1]["neardup"]["contained_in"], tag["contained_in"])
        # output.main_text: the text as extracted, or without what was published before.
        for main_text in ("all", "unseen"):
            config = self.write(f"{main_text}.yaml", b"containment:\n  enabled: true\n"
                                b"output:\n  main_text: " + main_text.encode() + b"\n")
            tagged = lines(run("dedup", "--store", os.path.join(self.dir, main_text), "--config",
                               config, "--in", crawl, check=0).stdout)
            self.assertEqual(tagged[0]["neardup"]["text"], article["text"])
            excerpt_text = tagged[1]["neardup"]["text"]
            if main_text == "all":
                self.assertEqual(excerpt_text.split("\n"), paragraphs[:4])
            else:
                self.assertEqual(excerpt_text, "")  # every paragraph was the article's first

    def test_lookup_progress_is_quiet_when_stderr_is_not_a_terminal(self):
        store = os.path.join(self.dir, "index")
        crawl = self.write("crawl.jsonl", self.sample_crawl())
        run("dedup", "--store", store, "--in", crawl, check=0)
        proc = run("lookup", "--store", store, "--jsonl", crawl, check=0)
        self.assertEqual(proc.stderr, b"")

    def test_drop_scheme_deletes_a_retired_schemes_columns_only(self):
        store = os.path.join(self.dir, "index")
        crawl = self.write("crawl.jsonl", self.sample_crawl())
        seeded = self.write("seed.yaml", b"fingerprint:\n  seed: 7\n")
        run("dedup", "--store", store, "--in", crawl, check=0)
        tagged = lines(run("dedup", "--store", store, "--config", seeded, "--in", crawl,
                           check=0).stdout)
        described = json.loads(run("stats", "--store", store, "--json", check=0).stdout)["schemes"]
        schemes = [s["id"] for s in described]
        self.assertEqual(len(schemes), 2)
        # A new store's schemes band by wide keys (their pages carry their upper values).
        self.assertTrue(all(s["minhash"]["wide_bands"] for s in described))
        old, new = schemes
        refused = run("drop-scheme", "--store", store, new, check=2)
        self.assertIn(b"is the newest scheme", refused.stderr)
        unknown = run("drop-scheme", "--store", store, "s-nope", check=3)
        self.assertIn(f"has no scheme s-nope (its schemes: {old}, {new})".encode(), unknown.stderr)
        self.assertRegex(run("drop-scheme", "--store", store, old, check=0).stdout.decode(),
                         r"^dropped scheme s-[0-9a-f]+: \d+ columns, \d+ runs, \d+ entries\n$")
        stats = json.loads(run("stats", "--store", store, "--json", check=0).stdout)
        self.assertEqual([s["id"] for s in stats["schemes"]], [new])
        # The newer scheme still answers: every page is found again.
        answers = lines(run("lookup", "--json", "--store", store, "--config", seeded, "--jsonl", crawl,
                            check=0).stdout)
        for t, a in zip(tagged, answers):
            if t["neardup"]["status"] != "skipped":
                self.assertEqual(a["neardup"]["status"], "duplicate")

    def test_learn_seeds_a_sites_boilerplate_that_dedup_then_drops_and_boilerplate_shows(self):
        store = os.path.join(self.dir, "index")
        notice = "Found a mistake in this story? Select it and press Ctrl+Enter to tell us."
        pages = []
        for n in range(12):
            words = " ".join(f"w{n}x{i}" for i in range(80))
            body = f"<html><body><article><p>{words}</p><p>{notice}</p></article></body></html>"
            pages.append(json.dumps({"url": f"https://www.news.example/{n}", "body": body}))
        seed = self.write("seed.jsonl", "\n".join(pages[:10]).encode() + b"\n")
        crawl = self.write("crawl.jsonl", "\n".join(pages[10:]).encode() + b"\n")
        config = self.write("sites.yaml", b"denoise:\n  site_boilerplate: true\n")
        refused = run("learn", "--store", store, "--in", seed, check=2)
        self.assertIn(b"learn nothing: set features.weighting: tfidf or denoise.site_boilerplate",
                      refused.stderr)
        learned = run("learn", "--store", store, "--config", config, "--in", seed, check=0)
        self.assertIn(b"summary: learned from 10 pages", learned.stderr)
        self.assertEqual(json.loads(run("stats", "--store", store, "--json", check=0).stdout)
                         ["documents"], 0)
        host = json.loads(run("boilerplate", "--store", store, "--config", config, "--host",
                              "news.example", "--json", check=0).stdout)
        self.assertEqual(host, {"host": "news.example", "pages": 10,
                                "blocks": [{"pages": 10, "text": notice}]})
        hosts = json.loads(run("boilerplate", "--store", store, "--config", config, "--json",
                               check=0).stdout)
        self.assertEqual(hosts["hosts"], 1)
        self.assertGreater(hosts["stored_bytes"], 0)
        run("boilerplate", "--store", store, "--config", config, "--host", "other.example",
            check=1)
        tagged = lines(run("dedup", "--store", store, "--config", config, "--in", crawl,
                           "--progress", check=0).stdout)
        self.assertEqual([t["neardup"].get("site_boilerplate") for t in tagged], [[1], [1]])

    def test_directories_where_files_belong_are_named(self):
        proc = run("compare", "--json", self.pages, self.pages)
        self.assertEqual(proc.returncode, 2)
        self.assertIn(b": is a directory", proc.stderr)
        proc = run("dedup", "--store", os.path.join(self.dir, "index"), "--in", self.pages)
        self.assertEqual(proc.returncode, 2)
        self.assertIn(b"is a directory", proc.stderr)

    def test_a_file_over_max_body_bytes_is_skipped_without_being_read_whole(self):
        big = self.write("big.html", b"<p>" + b"word " * (3 << 20) + b"</p>")  # 15 MiB
        small = self.write("small.html", b"<p>" + b"word " * 100 + b"</p>")
        config = self.write("small.yaml", b"input:\n  max_body_bytes: 1MiB\n")

        def peak_kib(path):
            proc = subprocess.run(["/usr/bin/time", "-f", "%M", NEARDUP, "fingerprint",
                                   "--config", config, path], capture_output=True, timeout=60)
            self.assertEqual(proc.returncode, 0, proc.stderr)
            return lines(proc.stdout)[0], int(proc.stderr.decode().strip().splitlines()[-1])

        _, base_kib = peak_kib(small)
        result, big_kib = peak_kib(big)
        self.assertEqual(result["reason"], "too_large")
        # Reading the file whole would add its 15 MiB to the process's baseline.
        self.assertLess(big_kib, base_kib + 8 * 1024, f"baseline {base_kib} KiB")

    def test_kafka_tools_give_up_on_an_unreachable_broker_in_one_line(self):
        port = free_port()
        page = self.write("p.jsonl", b'{"url": "https://a.example/1", "body": "x"}\n')
        for command in (["produce", "--topic", "pages", "--in", page],
                        ["consume", "--topic", "pages", "--count", "1"], ["topics"]):
            start = time.monotonic()
            proc = run(command[0], "--bootstrap", f"127.0.0.1:{port}", "--connect-timeout", "2",
                       *command[1:])
            self.assertEqual(proc.returncode, 3, proc.stderr)
            self.assertLess(time.monotonic() - start, 10, command[0])
            err = proc.stderr.decode()
            self.assertEqual(err.splitlines(), [
                f"neardup {command[0]}: no broker answered at 127.0.0.1:{port} within 2 s "
                f"(Connect to ipv4#127.0.0.1:{port} failed: Connection refused)"], err)

    def test_kafka_tools_refuse_a_topic_the_cluster_lacks_and_name_what_it_has(self):
        page = self.write("p.jsonl", b'{"url": "https://a.example/1", "body": "x"}\n')
        with DevelopmentBroker(self.dir, "pages:1", "pages-tagged:1") as bootstrap:
            for command in (["produce", "--in", page], ["consume", "--count", "1"]):
                proc = run(command[0], "--bootstrap", bootstrap, "--topic", "pages-taged",
                           *command[1:])
                self.assertEqual(proc.returncode, 2, proc.stderr)
                self.assertIn(f"neardup {command[0]}: topics missing on the cluster at {bootstrap}: "
                              "pages-taged (it has pages, pages-tagged;".encode(), proc.stderr)
            produced = run("produce", "--bootstrap", bootstrap, "--topic", "pages", "--in", page,
                           check=0)
            self.assertIn(b"produced=1 delivered=1 failed=0", produced.stderr)
            # Fewer records than --count: exit 1, and the last line says so.
            proc = run("consume", "--bootstrap", bootstrap, "--topic", "pages", "--count", "2",
                       "--timeout", "1", check=1)
            self.assertEqual(len(lines(proc.stdout)), 1)
            self.assertIn(b"records=1 of --count 2: none came for 1 s (--timeout); exit 1",
                          proc.stderr)

    def test_a_store_on_a_full_file_system_is_refused_with_the_space_left(self):
        # An 8 MiB tmpfs: less than a writer needs; LMDB would die of SIGBUS opening it.
        mount = os.path.join(self.dir, "small")
        os.mkdir(mount)
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", mount], check=True)
        try:
            proc = run("dedup", "--store", os.path.join(mount, "index"), stdin=self.sample_crawl())
            self.assertEqual(proc.returncode, 3, proc.stderr)
            self.assertIn(b"bytes free (at least 16777216 are needed to write)", proc.stderr)
            self.assertIn(mount.encode(), proc.stderr)
        finally:
            subprocess.run(["umount", mount], check=True)

    def test_lookup_warns_when_the_store_has_no_page_of_the_scheme(self):
        store = os.path.join(self.dir, "index")
        run("dedup", "--store", store, stdin=self.sample_crawl(), check=0)
        config = self.write("other.yaml", b"fingerprint:\n  seed: 7\n")
        proc = run("lookup", "--json", "--store", store, "--config", config,
                   os.path.join(self.pages, "a.html"), check=0)
        self.assertIn(b"holds no page of scheme", proc.stderr)
        self.assertEqual(lines(proc.stdout)[0]["neardup"]["status"], "unique")
        self.assertEqual(run("lookup", "--json", "--store", os.path.join(self.dir, "none"),
                             os.path.join(self.pages, "a.html")).returncode, 3)

    def test_dedup_finds_planted_duplicates_with_high_precision(self):
        with open(os.path.join(SOURCE, "samples", "crawl-truth.jsonl"), encoding="utf-8") as f:
            truth = {row["id"]: row["cluster"] for row in map(json.loads, f)}
        out = run("dedup", "--store", os.path.join(self.dir, "index"), stdin=self.sample_crawl(),
                  check=0)
        dups = [t for t in lines(out.stdout) if t["neardup"]["status"] == "duplicate"]
        right = sum(truth[t["id"]] == truth[t["neardup"]["duplicate_of"]] for t in dups)
        self.assertGreater(len(dups), 40)
        self.assertGreaterEqual(right / len(dups), 0.95)

    def test_dedup_reports_bad_lines_by_number_and_keeps_going(self):
        good = json.dumps({"url": "https://a.example/1", "body": "<p>" + "alpha beta gamma " * 40 + "</p>"})
        body64 = base64.b64encode(b"<p>" + b"delta epsilon zeta " * 40 + b"</p>").decode()
        records = [good, "not json at all", json.dumps({"body": "no url"}),
                   json.dumps({"url": "u", "body_base64": "!!!"}),
                   json.dumps({"url": "https://b.example/2", "body_base64": body64}),
                   json.dumps({"url": "https://c.example/3", "body": ""})]
        dead = os.path.join(self.dir, "dead.jsonl")
        proc = run("dedup", "--store", os.path.join(self.dir, "index"), "--dead-letter", dead,
                   stdin=("\n".join(records) + "\n").encode(), check=0)
        out = lines(proc.stdout)
        self.assertEqual([o["url"] for o in out], ["https://a.example/1", "https://b.example/2",
                                                   "https://c.example/3"])
        self.assertEqual(out[2]["neardup"]["reason"], "empty_body")
        err = proc.stderr.decode()
        self.assertIn("line 2: not_json", err)
        self.assertIn("line 3: missing_url", err)
        self.assertIn("line 4: invalid_base64", err)
        with open(dead, encoding="utf-8") as f:
            self.assertEqual(f.read().splitlines(), records[1:4])

    def gzip_with_a_long_line(self, name, before, mib, after):
        """A gzip file: the line `before`, a line of `mib` MiB of x, the line `after`. Concatenated
        members read as one stream, so one member of 1 MiB written `mib` times makes the long
        line without holding it."""
        member = gzip.compress(b"x" * (1 << 20), 9)
        path = os.path.join(self.dir, name)
        with open(path, "wb") as f:
            f.write(gzip.compress(before.encode() + b"\n"))
            for _ in range(mib):
                f.write(member)
            f.write(gzip.compress(b"\n" + after.encode() + b"\n"))
        return path

    def test_a_gzip_bomb_line_is_refused_as_too_large_without_being_held(self):
        pages = [json.dumps({"url": f"https://a.example/{i}",
                             "body": "<p>" + f"alpha beta gamma {i} " * 40 + "</p>"})
                 for i in (1, 3)]
        bomb = self.gzip_with_a_long_line("bomb.jsonl.gz", pages[0], 512, pages[1])
        plain = self.write("plain.jsonl", ("\n".join(pages) + "\n").encode())
        config = self.write("small.yaml", b"input:\n  max_record_bytes: 1MiB\n")
        dead = os.path.join(self.dir, "dead.jsonl")

        def dedup(path, store):
            proc = subprocess.run(["/usr/bin/time", "-f", "%M", NEARDUP, "dedup", "--store",
                                   os.path.join(self.dir, store), "--config", config, "--in", path,
                                   "--dead-letter", dead], capture_output=True, timeout=300)
            self.assertEqual(proc.returncode, 0, proc.stderr[-2000:])
            return proc, int(proc.stderr.decode().strip().splitlines()[-1])

        _, base_kib = dedup(plain, "base")
        proc, bomb_kib = dedup(bomb, "bomb")
        self.assertEqual([o["url"] for o in lines(proc.stdout)],
                         ["https://a.example/1", "https://a.example/3"])
        self.assertIn("line 2: record_too_large: 536870912 bytes > input.max_record_bytes 1048576",
                      proc.stderr.decode())
        self.assertIn(" 1 bad ", proc.stderr.decode())
        with open(dead, "rb") as f:
            self.assertEqual(f.read(), b"")  # the line was never held, so it is not written
        # Holding the line would add its 512 MiB to the baseline.
        self.assertLess(bomb_kib, base_kib + 64 * 1024, f"baseline {base_kib} KiB")

        answers = lines(run("lookup", "--json", "--store", os.path.join(self.dir, "bomb"), "--config",
                            config, "--jsonl", bomb, check=0).stdout)
        self.assertEqual([a.get("error") for a in answers], [None, "record_too_large", None])

    def test_produce_refuses_a_line_over_max_record_bytes_and_goes_on(self):
        page = json.dumps({"url": "https://a.example/1", "body": "x"})
        bomb = self.gzip_with_a_long_line("bomb.jsonl.gz", page, 65, page)
        with DevelopmentBroker(self.dir, "pages:1") as bootstrap:
            proc = run("produce", "--bootstrap", bootstrap, "--topic", "pages", "--in", bomb)
        self.assertEqual(proc.returncode, 3, proc.stderr)
        self.assertIn(b"record 2 (line 2): record_too_large: 68157440 bytes > "
                      b"input.max_record_bytes 67108864", proc.stderr)
        self.assertIn(b"delivered=2 failed=1", proc.stderr)

    def test_dedup_survives_a_record_nested_100000_levels_deep(self):
        deep = '{"url":"u","body":"<p>x</p>","x":' + "[" * 100000 + "]" * 100000 + "}"
        good = json.dumps({"url": "https://a.example/1", "body": "<p>" + "alpha beta gamma " * 40 + "</p>"})
        proc = run("dedup", "--store", os.path.join(self.dir, "index"),
                   stdin=(deep + "\n" + good + "\n").encode(), check=0)
        self.assertEqual([o["url"] for o in lines(proc.stdout)], ["https://a.example/1"])
        self.assertIn("line 1: too_deep", proc.stderr.decode())

    def test_dedup_reads_gzip_input_by_its_magic_bytes(self):
        crawl = self.sample_crawl()
        plain = run("dedup", "--store", os.path.join(self.dir, "a"), stdin=crawl, check=0)
        # A gzip file named like a plain one, and gzip on stdin.
        gz = self.write("crawl.jsonl", gzip.compress(crawl))
        from_file = run("dedup", "--store", os.path.join(self.dir, "b"), "--in", gz, check=0)
        from_stdin = run("dedup", "--store", os.path.join(self.dir, "c"),
                         stdin=gzip.compress(crawl), check=0)
        self.assertEqual(from_file.stdout, plain.stdout)
        self.assertEqual(from_stdin.stdout, plain.stdout)
        self.assertIn(b" 0 bad", from_file.stderr)

    def test_dedup_stops_when_no_first_line_is_a_page_and_says_what_the_input_is(self):
        store = os.path.join(self.dir, "index")
        out = os.path.join(self.dir, "out.jsonl")
        cases = {
            "zstd": (b"\x28\xb5\x2f\xfd" + b"\x01\x9a\x00frame\n" * 40, "zstd-compressed data"),
            "html": (b"<!doctype html><html><body>" + b"<p>text</p>\n" * 40, "HTML or XML"),
            "array": (b"[\n" + b'{"url": "u", "body": "b"},\n' * 40 + b"]\n", "a JSON array"),
            "fields": (b'{"link": "https://a.example/", "html": "<p>x</p>"}\n' * 40,
                       'JSON objects with the fields html, link but no "url"'),
        }
        for name, (data, looks) in cases.items():
            path = self.write(name, data)
            proc = run("dedup", "--store", store, "--in", path, "--out", out, check=2)
            err = proc.stderr.decode()
            self.assertIn(f"none of the first 16 lines of {path} is a page", err, name)
            self.assertIn("the input looks like " + looks, err, name)
            self.assertIn("Nothing was written.", err)
            with open(out, "rb") as f:
                self.assertEqual(f.read(), b"", name)
        # One good page among the first lines: the run goes on, bad lines reported.
        good = json.dumps({"url": "https://a.example/1", "body": "<p>" + "alpha beta " * 40 + "</p>"})
        mixed = ("not json\n" * 15 + good + "\n" + "not json\n" * 20).encode()
        proc = run("dedup", "--store", store, stdin=mixed, check=0)
        self.assertEqual(len(lines(proc.stdout)), 1)
        self.assertIn(b"35 bad", proc.stderr)

    def test_dedup_stops_when_no_first_page_has_a_body_and_names_the_field_to_set(self):
        page = {"url": "https://a.example/1", "html": "<!DOCTYPE html><html><p>alpha</p></html>"}
        path = self.write("html.jsonl", (json.dumps(page) + "\n").encode() * 20)
        proc = run("dedup", "--store", os.path.join(self.dir, "index"), "--in", path, check=2)
        self.assertEqual(proc.stdout, b"")
        self.assertIn(f"none of the first 16 pages of {path} has a body (line 1: skipped: "
                      'empty_body); the input looks like JSON objects with the fields html, url but '
                      'no "body" or "body_base64" (html looks like HTML: set input.fields.body: '
                      "html in --config). Nothing was written.", proc.stderr.decode())
        config = self.write("html.yaml", b"input:\n  fields:\n    body: html\n")
        proc = run("dedup", "--store", os.path.join(self.dir, "index"), "--config", config,
                   "--in", path, check=0)
        self.assertEqual(len(lines(proc.stdout)), 20)
        # A body that is there but empty is a page skipped for it, not a misnamed field.
        empty = self.write("empty.jsonl", b'{"url": "https://a.example/1", "body": ""}\n' * 20)
        run("dedup", "--store", os.path.join(self.dir, "index2"), "--in", empty, check=0)

    def test_dedup_draws_progress_on_a_terminal_and_leaves_a_clean_summary(self):
        crawl = os.path.join(SOURCE, "samples", "crawl.jsonl.gz")
        leader, follower = pty.openpty()
        proc = subprocess.Popen([NEARDUP, "dedup", "--store", os.path.join(self.dir, "index"),
                                 "--in", crawl, "--out", os.devnull], stderr=follower)
        os.close(follower)
        seen = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the terminal closed with the process
                break
            if not chunk:
                break
            seen += chunk
        self.assertEqual(proc.wait(timeout=60), 0)
        os.close(leader)
        text = seen.decode()
        self.assertRegex(text, r"\r\d+%  \d+ pages  \d+ unique")  # a share of the input read
        summary = text.replace("\r\x1b[K", "\n").replace("\r\n", "\n").splitlines()[-1]
        self.assertRegex(summary, r"^summary: 244 pages  \d+ unique  \d+ duplicate  \d+ skipped  "
                                  r"0 bad  \d+ pages/s$")
        # Not a terminal: no progress unless asked, and no stray carriage return.
        plain = run("dedup", "--store", os.path.join(self.dir, "index2"), "--in", crawl, check=0)
        self.assertNotIn(b"\r", plain.stderr)
        self.assertTrue(plain.stderr.startswith(b"summary: 244 pages"), plain.stderr)
        asked = run("dedup", "--progress", "--store", os.path.join(self.dir, "index3"),
                    "--in", crawl, check=0)
        self.assertRegex(asked.stderr.decode(), r"^neardup dedup: \d+%  \d+ pages")

    def test_dedup_help_documents_the_durability_choice(self):
        text = run("dedup", "--help", check=0).stdout.decode()
        self.assertIn("--sync", text)
        self.assertIn("Off by default for offline runs", text)

    def test_stats_prints_the_design_and_document_count(self):
        store = os.path.join(self.dir, "index")
        run("dedup", "--store", store, stdin=self.sample_crawl(), check=0)
        stats = json.loads(run("stats", "--store", store, "--json", check=0).stdout)
        text = json.dumps(stats)
        self.assertIn("documents", text)

    def test_stats_on_a_missing_store_fails_clearly(self):
        proc = run("stats", "--store", os.path.join(self.dir, "missing"))
        self.assertNotEqual(proc.returncode, 0)
        self.assertIn(b"missing", proc.stderr)


if __name__ == "__main__":
    NEARDUP, SOURCE = sys.argv[1], sys.argv[2]
    unittest.main(argv=[sys.argv[0], "-v"])

#!/usr/bin/env python3
"""End-to-end tests of WARC input (`neardup dedup --warc`, `neardup produce --warc`) on WARC files
written by real tools: warcio (from the sample crawl), wget, and public samples.

    python3 warc/warc_test.py NEARDUP_BINARY SOURCE_DIR
"""
import base64
import functools
import gzip
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import unittest

try:
    from warcio.archiveiterator import ArchiveIterator
except ImportError:
    sys.exit("warc_test.py: warcio is not installed for " + sys.executable +
             " (bash scripts/install-deps.sh installs it)")

NEARDUP = None
SOURCE = None
SUMMARY = re.compile(r"^warc: (\d+) files?, (\d+) records: (\d+) pages; passed over: (.*); "
                     r"skipped: (.*); damaged: (\d+)$", re.M)


def run(*args, check=0, stdin=None):
    proc = subprocess.run([NEARDUP, *args], input=stdin, capture_output=True, timeout=600)
    if check is not None and proc.returncode != check:
        raise AssertionError(f"neardup {' '.join(args)}: exit {proc.returncode}, want {check}\n"
                             f"stderr: {proc.stderr.decode(errors='replace')[-3000:]}")
    return proc


def counts(text):
    """"request 3, warcinfo 1" -> {"request": 3, "warcinfo": 1}."""
    if text == "none":
        return {}
    return {name: int(n) for name, n in (item.rsplit(" ", 1) for item in text.split(", "))}


def summary(stderr):
    match = SUMMARY.search(stderr.decode())
    assert match, stderr.decode()
    files, records, pages, over, skipped, damaged = match.groups()
    return {"records": int(records), "pages": int(pages), "passed_over": counts(over),
            "skipped": counts(skipped), "damaged": int(damaged)}


def verdicts(outputs):
    """Each output's verdict, with ids replaced by input positions (the two paths' ids differ)."""
    position = {record["id"] if "id" in record else record["url"]: i
                for i, record in enumerate(outputs)}
    result = []
    for record in outputs:
        tag = dict(record["neardup"])
        for field in ("duplicate_of", "matched"):
            if field in tag:
                tag[field] = position[tag[field]]
        for field in ("contained_in", "contains"):
            if field in tag:
                tag[field] = dict(tag[field], id=position[tag[field]["id"]])
        if "first" in tag.get("paragraphs", {}):
            tag["paragraphs"] = dict(tag["paragraphs"],
                                     first=[position[i] for i in tag["paragraphs"]["first"]])
        result.append((record["url"], tag))
    return result


def warcio_records(path):
    """(offset, WARC-Type, HTTP status, Content-Type) of every record, as warcio reads them."""
    records = []
    with open(path, "rb") as f:
        iterator = ArchiveIterator(f)
        for record in iterator:
            status = record.http_headers.get_statuscode() if record.http_headers else None
            ctype = record.http_headers.get_header("Content-Type") if record.http_headers else None
            records.append((iterator.get_record_offset(), record.rec_type, status, ctype))
    return records


def write_warc_with_a_lie(path, lie, pages_after, layout, source_dir):
    """A WARC file written by warcio: a warcinfo record, one response, then a response whose
    Content-Length claims `lie` bytes (its block is a few KB), then `pages_after` genuine
    response records (the sample crawl's pages, each under its own URL). `layout`: "plain",
    "per-record" (a gzip member per record, as warcio writes them) or "whole" (the plain file
    gzipped as one stream). Written a record at a time: big files are never held. Returns the
    offset of the lying record (of its gzip member; 0 in a whole-file stream)."""
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter
    import io
    with gzip.open(os.path.join(source_dir, "samples", "crawl.jsonl.gz"), "rt") as f:
        bodies = [base64.b64decode(json.loads(line)["body_base64"]) for line in f if line.strip()]

    def response(writer, i):
        body = bodies[i % len(bodies)]
        headers = StatusAndHeaders("200 OK", [("Content-Type", "text/html; charset=utf-8")],
                                   protocol="HTTP/1.1")
        return writer.create_warc_record(f"https://lie.example/{i}", "response",
                                         payload=io.BytesIO(body), http_headers=headers)

    raw = open(path, "wb")
    out = gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=1) if layout == "whole" else raw
    writer = WARCWriter(out, gzip=layout == "per-record")
    writer.write_record(writer.create_warcinfo_record("lie", {"software": "warc_test.py"}))
    writer.write_record(response(writer, 0))
    at = 0 if layout == "whole" else raw.tell()
    liar = io.BytesIO()
    WARCWriter(liar, gzip=False).write_record(response(writer, 1))
    liar = re.sub(rb"Content-Length: \d+", b"Content-Length: %d" % lie, liar.getvalue(), count=1)
    out.write(gzip.compress(liar) if layout == "per-record" else liar)
    for i in range(2, 2 + pages_after):
        writer.write_record(response(writer, i))
    if out is not raw:
        out.close()
    raw.close()
    return at


class WarcInput(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name
        self.crawl = os.path.join(SOURCE, "samples", "crawl.jsonl.gz")

    def tearDown(self):
        self.tmp.cleanup()

    def path(self, name):
        return os.path.join(self.dir, name)

    def make_warc(self, name, *flags):
        subprocess.run([sys.executable, os.path.join(SOURCE, "scripts", "warc_from_jsonl.py"),
                        *flags, self.crawl, self.path(name)], check=True, capture_output=True)
        return self.path(name)

    def dedup(self, store, *args):
        proc = run("dedup", "--store", self.path(store), *args)
        return [json.loads(line) for line in proc.stdout.decode().splitlines()], proc.stderr

    def test_sample_crawl_as_warc_gets_the_same_verdicts_as_jsonl(self):
        jsonl, _ = self.dedup("jsonl-index", "--in", self.crawl)
        per_record = self.make_warc("crawl.warc.gz")
        plain = self.make_warc("crawl.warc", "--no-gzip")
        with open(plain, "rb") as f, gzip.open(self.path("whole.warc.gz"), "wb") as g:
            shutil.copyfileobj(f, g)
        self.assertEqual(len(jsonl), 244)
        for name, warc in [("per-record gzip", per_record), ("uncompressed", plain),
                           ("whole-file gzip", self.path("whole.warc.gz"))]:
            outputs, stderr = self.dedup("index-" + name, "--warc", warc)
            self.assertEqual(summary(stderr), {
                "records": 489, "pages": 244, "passed_over": {"warcinfo": 1, "request": 244},
                "skipped": {}, "damaged": 0}, name)
            self.assertEqual(verdicts(outputs), verdicts(jsonl), name)
            # What the WARC path adds: where each page is, and WARC-Date as fetched_at.
            self.assertEqual([o["fetched_at"] for o in outputs], [j["fetched_at"] for j in jsonl])
            self.assertTrue(all(o["id"].startswith("urn:uuid:") for o in outputs))
            self.assertEqual(outputs[0]["warc"]["file"], warc)
        statuses = [tag["status"] for _, tag in verdicts(jsonl)]
        print(f"\nsample crawl: {statuses.count('unique')} unique, "
              f"{statuses.count('duplicate')} duplicate, {statuses.count('skipped')} skipped, "
              "identical through JSONL and three WARC layouts", file=sys.stderr)

    def test_public_samples_have_every_record_accounted_for(self):
        samples = os.path.join(SOURCE, "samples", "warc")
        names = sorted(n for n in os.listdir(samples) if ".warc" in n)
        self.assertGreaterEqual(len(names), 3)
        for name in names:
            path = os.path.join(samples, name)
            outputs, stderr = self.dedup("index-" + name, "--warc", path)
            got = summary(stderr)
            theirs = warcio_records(path)
            # Every record warcio finds is a page, passed over or skipped: none lost or extra.
            self.assertEqual(got["records"], len(theirs), name)
            self.assertEqual(got["damaged"], 0, name)
            by_type = {}
            for _, rec_type, _, _ in theirs:
                by_type[rec_type] = by_type.get(rec_type, 0) + 1
            responses = by_type.pop("response", 0)
            self.assertEqual(got["passed_over"], by_type, name)
            self.assertEqual(got["pages"] + sum(got["skipped"].values()), responses, name)
            self.assertEqual(got["pages"], len(outputs), name)
            # Offsets are warcio's record offsets.
            response_offsets = [o for o, t, s, c in theirs if t == "response"]
            for output in outputs:
                self.assertIn(output["warc"]["offset"], response_offsets, name)
                self.assertNotEqual(output["neardup"].get("reason"), "not_text", name)
            print(f"\n{name}: {got}", file=sys.stderr)

    def test_damaged_and_truncated_files_are_reported_with_offsets_and_the_rest_read(self):
        warc = self.make_warc("crawl.warc.gz")
        responses = [(o, t) for o, t, _, _ in warcio_records(warc) if t == "response"]
        with open(warc, "rb") as f:
            data = bytearray(f.read())
        # A garbled byte in the middle of the 100th response's gzip member, and the file cut in
        # the middle of the last member.
        damaged_at = responses[100][0]
        data[damaged_at + 300] ^= 0xff
        cut_at = responses[-1][0]
        with open(self.path("damaged.warc.gz"), "wb") as f:
            f.write(data[:cut_at + 200])
        outputs, stderr = self.dedup("index", "--warc", self.path("damaged.warc.gz"))
        err = stderr.decode()
        self.assertIn(f"damaged.warc.gz: offset {damaged_at}: damaged gzip member", err)
        self.assertIn(f"damaged.warc.gz: offset {cut_at}: damaged gzip member: the file ends "
                      "inside it (truncated); no gzip member follows", err)
        self.assertEqual(summary(stderr)["damaged"], 2)
        self.assertEqual(len(outputs), 242)
        self.assertEqual([o["warc"]["offset"] for o in outputs],
                         [o for o, _ in responses if o not in (damaged_at, cut_at)])

        # Uncompressed: a garbled Content-Length digit, a flipped bit in a page (found by the
        # record's SHA-1 block digest) and a record cut short mid-file.
        plain = self.make_warc("crawl.warc", "--no-gzip")
        responses = [o for o, t, _, _ in warcio_records(plain) if t == "response"]
        with open(plain, "rb") as f:
            data = bytearray(f.read())
        header_end = data.index(b"Content-Length: ", responses[50]) + len("Content-Length: ")
        data[header_end] = ord("x")
        body_byte = data.index(b"<body", responses[100]) + 100
        data[body_byte] ^= 0x20
        cut_from, cut_to = responses[150] + 2000, responses[150] + 4000
        del data[cut_from:cut_to]
        with open(self.path("damaged.warc"), "wb") as f:
            f.write(data)
        outputs, stderr = self.dedup("index-plain", "--warc", self.path("damaged.warc"))
        err = stderr.decode()
        self.assertIn(f"damaged.warc: offset {responses[50]}: Content-Length is missing or not a "
                      "number", err)
        self.assertIn(f"damaged.warc: offset {responses[150]}: the block is not followed by "
                      "CRLF CRLF", err)
        self.assertIn(f"damaged.warc: offset {responses[100]}: WARC-Block-Digest sha1:", err)
        # Reading resumes at the next record header after each damaged record's start, so only
        # the three damaged responses are lost (the cut one's length ran into the next records).
        self.assertEqual(len(outputs), 241)
        self.assertEqual(summary(stderr)["damaged"], 3)
        self.assertEqual(summary(stderr)["passed_over"], {"warcinfo": 1, "request": 244})

    def test_a_false_content_length_loses_only_its_own_record(self):
        # 60 MiB: held and found wrong where the file ends; 100 MiB (over the 64 MiB a block is
        # held to): passed over to the claimed end, found wrong, and read again from the record.
        for lie in (60 << 20, 100 << 20):
            for layout in ("plain", "per-record", "whole"):
                name = f"lie-{lie >> 20}-{layout}.warc" + ("" if layout == "plain" else ".gz")
                at = write_warc_with_a_lie(self.path(name), lie, 2000, layout, SOURCE)
                outputs, stderr = self.dedup("index-" + name, "--warc", self.path(name))
                got = summary(stderr)
                self.assertEqual(got["pages"], 2001, name)
                self.assertEqual(got["damaged"], 1, name)
                self.assertEqual([o["url"] for o in outputs],
                                 [f"https://lie.example/{i}" for i in [0] + list(range(2, 2002))],
                                 name)
                err = stderr.decode()
                self.assertIn(f"{name}: offset {at}", err)
                self.assertIn(f"Content-Length {lie}", err)
                self.assertIn(f"neardup dedup: warning: the WARC input is damaged in 1 place "
                              f"({self.path(name)}; offsets above): the records there are lost, "
                              "every record after each was read", err)

    def test_wget_warc_of_a_local_site(self):
        if not shutil.which("wget"):
            self.fail("wget is not installed (scripts/install-deps.sh installs it)")
        site = self.path("site")
        os.makedirs(site)
        words = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu ".split()
        pages = {}
        for i in range(3):
            text = " ".join(words[(i + j) % len(words)] + str(j % 17) for j in range(300))
            pages[f"p{i}.html"] = f"<html><body><h1>Page {i}</h1><p>{text}</p></body></html>"
        index = "".join(f'<a href="{name}">{name}</a> ' for name in pages)
        pages["index.html"] = f"<html><body>{index}<a href='missing.html'>x</a>" \
                              f"<img src='dot.png'></body></html>"
        for name, html in pages.items():
            with open(os.path.join(site, name), "w") as f:
                f.write(html)
        with open(os.path.join(site, "dot.png"), "wb") as f:
            f.write(b"\x89PNG\r\n\x1a\n" + bytes(64))
        class Quiet(http.server.SimpleHTTPRequestHandler):
            def log_message(self, *args):
                pass

        handler = functools.partial(Quiet, directory=site)
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        try:
            subprocess.run(["wget", "-q", "-r", "-p", "-l", "2", "--no-proxy", "-e", "robots=off",
                            "-P", self.path("mirror"), "--warc-file", self.path("site"),
                            f"http://127.0.0.1:{server.server_address[1]}/index.html"],
                           timeout=120)  # exit 8: the 404, as intended
        finally:
            server.shutdown()
            server.server_close()
        warc = self.path("site.warc.gz")
        outputs, stderr = self.dedup("index", "--warc", warc)
        got = summary(stderr)
        self.assertEqual(got["pages"], 4)
        self.assertEqual(got["skipped"], {"status_404": 1, "not_html": 1})
        # One request record per fetch: six, or more when a loaded machine made wget retry one
        # (its request is then recorded without a response).
        records = warcio_records(warc)
        requests = sum(1 for r in records if r[1] == "request")
        self.assertGreaterEqual(requests, 6)
        self.assertEqual(got["passed_over"]["request"], requests)
        self.assertIn("warcinfo", got["passed_over"])
        self.assertEqual(got["records"], len(records))
        self.assertEqual(sorted(o["url"].rsplit("/", 1)[1] for o in outputs),
                         ["index.html", "p0.html", "p1.html", "p2.html"])
        print(f"\nwget: {got}", file=sys.stderr)

    def test_produce_publishes_warc_pages_keyed_by_url(self):
        warc = os.path.join(SOURCE, "samples", "warc", "example-iana.org-chunked.warc")
        bootstrap = self.path("bootstrap")
        broker = subprocess.Popen([NEARDUP, "broker", "--topic", "pages:1", "--bootstrap-file",
                                   bootstrap], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

        def servers():
            if not os.path.exists(bootstrap):
                return ""
            with open(bootstrap) as f:
                return f.read().strip()

        try:
            for _ in range(200):
                if servers():
                    break
                threading.Event().wait(0.05)
            proc = run("produce", "--bootstrap", servers(), "--topic", "pages", "--warc", warc)
            self.assertIn(b"produced=1 delivered=1 failed=0", proc.stderr)
            self.assertEqual(summary(proc.stderr)["passed_over"], {"warcinfo": 1, "request": 1})
            consumed = run("consume", "--bootstrap", servers(), "--topic", "pages", "--count", "1",
                           "--with-meta", "--timeout", "30")
            record = json.loads(consumed.stdout.decode().splitlines()[0])
            self.assertEqual(record["key"], "http://www.iana.org/")
            value = record["value"]
            value = json.loads(value) if isinstance(value, str) else value
            self.assertEqual(value["url"], "http://www.iana.org/")
            self.assertTrue(value["id"].startswith("urn:uuid:"))
            self.assertEqual(value["content_type"], "text/html; charset=UTF-8")
            # The chunked transfer coding is undone: the body is the page itself.
            self.assertTrue(base64.b64decode(value["body_base64"]).lstrip().startswith(b"<!doctype"))
        finally:
            broker.terminate()
            broker.wait(timeout=30)

    def test_input_that_is_not_warc_is_refused_before_anything_is_written(self):
        proc = run("dedup", "--store", self.path("index"), "--warc", self.crawl, check=2)
        self.assertIn(b"not a WARC file", proc.stderr)
        self.assertEqual(proc.stdout, b"")
        proc = run("dedup", "--store", self.path("index"), "--warc", self.path("missing.warc"),
                   check=2)
        self.assertIn(b"missing.warc: cannot open", proc.stderr)
        self.assertEqual(run("dedup", "--store", self.path("index"), "--in", self.crawl, "--warc",
                             self.crawl, check=None).returncode, 2)


if __name__ == "__main__":
    NEARDUP, SOURCE = sys.argv[1], sys.argv[2]
    unittest.main(argv=[sys.argv[0], "-v"])

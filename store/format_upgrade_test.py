#!/usr/bin/env python3
"""Stores written by earlier formats (version 5, store/testdata/format5/; version 7,
store/testdata/format7/) opened, queried and written by this build: their stored verdicts and
clusters read alike, the next pages get the verdicts the earlier build gave them, and a store is
marked this build's version (9) only once written.

    python3 store/format_upgrade_test.py NEARDUP_BINARY SOURCE_DIR
"""
import base64
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

NEARDUP = None
SOURCE = None
FIRST_PAGES = 150  # the fixture holds the first 150 pages of samples/crawl.jsonl.gz


def neardup(*args):
    proc = subprocess.run([NEARDUP, *args], capture_output=True, timeout=300)
    if proc.returncode != 0:
        raise AssertionError(f"neardup {' '.join(args)}: exit {proc.returncode}\n"
                             f"{proc.stderr.decode(errors='replace')[-2000:]}")
    return proc.stdout.decode()


def json_lines(text):
    return [json.loads(line) for line in text.splitlines() if line.strip()]


CURRENT = 13


def fixture(name, version=5):
    with open(os.path.join(SOURCE, "store", "testdata", f"format{version}", name),
              encoding="utf-8") as f:
        return json_lines(f.read())


class FormatFive(unittest.TestCase):
    VERSION = 5

    def setUp(self):
        self.work = tempfile.mkdtemp(prefix=f"nd-format{self.VERSION}-")
        self.store = os.path.join(self.work, "store")
        os.mkdir(self.store)
        with gzip.open(os.path.join(SOURCE, "store", "testdata", f"format{self.VERSION}",
                                    "data.mdb.gz")) as f, \
                open(os.path.join(self.store, "data.mdb"), "wb") as out:
            shutil.copyfileobj(f, out)
        with gzip.open(os.path.join(SOURCE, "samples", "crawl.jsonl.gz"), "rt",
                       encoding="utf-8") as f:
            lines = f.readlines()
        self.first = [json.loads(line)["id"] for line in lines[:FIRST_PAGES]]
        self.rest = os.path.join(self.work, "rest.jsonl")
        with open(self.rest, "w", encoding="utf-8") as out:
            out.writelines(lines[FIRST_PAGES:])

    def tearDown(self):
        shutil.rmtree(self.work)

    def stats(self):
        return json.loads(neardup("stats", "--store", self.store, "--json"))

    def dedup_rest(self, out):
        neardup("dedup", "--store", self.store, "--in", self.rest, "--out", out, "--no-progress")
        with open(out, encoding="utf-8") as f:
            return [{"id": r["id"], "status": r["neardup"]["status"],
                     "duplicate_of": r["neardup"].get("duplicate_of"),
                     "method": r["neardup"].get("method")} for r in json_lines(f.read())]

    def test_read_alike_then_written_on(self):
        # Read-only: the store stays version 5 (an older build can still open it).
        self.assertEqual(self.stats()["format_version"], 5)
        shown = json_lines(neardup("show", "--store", self.store, "--json", *self.first))
        self.assertEqual(shown, fixture("show-first.jsonl"))
        self.assertEqual(self.stats()["format_version"], 5)

        # Written on: the previous build's verdicts for the next pages (their MinHash
        # similarity now estimated from 8 bits a value, against stored sketches of 16).
        got = self.dedup_rest(os.path.join(self.work, "rest.out"))
        want = fixture("rest-verdicts.jsonl")
        self.assertEqual(len(got), len(want))
        for g, w in zip(got, want):
            self.assertEqual(g, w)
        self.assertEqual(self.stats()["format_version"], CURRENT)
        # The defaults leave the LSH design to the store: its scheme keeps the one it was
        # written with (42 x 3) and its keys of 16 bits a value (its pages carry upper values,
        # unused), under the same scheme id, while a new store's gets 21 x 2 and wide keys.
        self.assertEqual([s["minhash"] for s in self.stats()["schemes"]],
                         [{"hashes": 128, "bands": 42, "rows": 3, "wide_bands": False}])
        fresh = os.path.join(self.work, "fresh")
        neardup("dedup", "--store", fresh, "--in", self.rest, "--out", os.devnull,
                "--no-progress")
        fresh_stats = json.loads(neardup("stats", "--store", fresh, "--json"))
        self.assertEqual([s["id"] for s in fresh_stats["schemes"]],
                         [s["id"] for s in self.stats()["schemes"]])
        self.assertEqual([s["minhash"] for s in fresh_stats["schemes"]],
                         [{"hashes": 128, "bands": 21, "rows": 2, "wide_bands": True}])
        # 42 x 3 set explicitly (the same scheme id) on the new store: refused before any page.
        explicit = os.path.join(self.work, "explicit.yaml")
        with open(explicit, "w", encoding="utf-8") as f:
            f.write("minhash:\n  bands: 42\n  rows: 3\n")
        refused = subprocess.run([NEARDUP, "dedup", "--config", explicit, "--store", fresh,
                                  "--in", self.rest, "--out", os.devnull, "--no-progress"],
                                 capture_output=True)
        self.assertEqual(refused.returncode, 2)
        self.assertIn(b"the store holds scheme " + fresh_stats["schemes"][0]["id"].encode() +
                      b" banded 21 x 2, and the config asks for 42 x 3", refused.stderr)
        self.assertEqual(json.loads(neardup("stats", "--store", fresh, "--json"))["documents"],
                         fresh_stats["documents"])
        clusters = json_lines(neardup("clusters", "--store", self.store, "--min-size", "1",
                                      "--no-progress"))
        self.assertEqual(clusters, fixture("clusters-all.jsonl"))

        # Reopened (the new pages' band keys rebuilt from their stored low bits and the high
        # bits kept beside them): the same pages again get their stored verdicts.
        again = self.dedup_rest(os.path.join(self.work, "again.out"))
        self.assertEqual(again, got)
        # The first pages' own records unchanged (their clusters have grown since).
        shown = json_lines(neardup("show", "--store", self.store, "--json", *self.first))
        self.assertEqual([r["page"] for r in shown],
                         [r["page"] for r in fixture("show-first.jsonl")])


class FormatSeven(FormatFive):
    """Version 7 (containment on: anchors, relations and passages stored) to 8: the documents
    numbered before the upgrade keep their wide records, those after it are compact, and both
    are read, rewritten (forget, a re-crawl) and reopened alike."""
    VERSION = 7

    def config(self):
        return os.path.join(SOURCE, "store", "testdata", "format7", "config.yaml")

    def dedup(self, path, out):
        neardup("dedup", "--config", self.config(), "--store", self.store, "--in", path,
                "--out", out, "--no-progress")
        keys = ("status", "duplicate_of", "method", "contained_in", "contains", "paragraphs_seen")
        with open(out, encoding="utf-8") as f:
            return [{k: r["neardup"].get(k) for k in keys} | {"id": r["id"]}
                    for r in json_lines(f.read())]

    def test_read_alike_then_written_on(self):
        self.assertEqual(self.stats()["format_version"], 7)
        shown = json_lines(neardup("show", "--store", self.store, "--json", *self.first))
        self.assertEqual(shown, fixture("show-first.jsonl", 7))
        self.assertEqual(self.stats()["format_version"], 7)

        got = self.dedup(self.rest, os.path.join(self.work, "rest.out"))
        self.assertEqual(got, fixture("rest-verdicts.jsonl", 7))
        self.assertEqual(self.stats()["format_version"], CURRENT)
        clusters = json_lines(neardup("clusters", "--store", self.store, "--min-size", "1",
                                      "--no-progress"))
        self.assertEqual(clusters, fixture("clusters-all.jsonl", 7))
        # Reopened: the stored verdicts again, old (wide) and new (compact) records alike.
        again = self.dedup(self.rest, os.path.join(self.work, "again.out"))
        self.assertEqual(again, got)
        shown = json_lines(neardup("show", "--store", self.store, "--json", *self.first))
        self.assertEqual([r["page"] for r in shown],
                         [r["page"] for r in fixture("show-first.jsonl", 7)])

        # Rewritten in place: an old document forgotten, another re-crawled with new text (the
        # old record flagged in its wide form, the new one compact), a new document forgotten.
        old_forgotten, recrawled = self.first[3], self.first[0]
        new_forgotten = got[-1]["id"]
        neardup("forget", "--store", self.store, old_forgotten, new_forgotten)
        with gzip.open(os.path.join(SOURCE, "samples", "crawl.jsonl.gz"), "rt",
                       encoding="utf-8") as f:
            page = next(json.loads(line) for line in f if json.loads(line)["id"] == recrawled)
        body = base64.b64decode(page["body_base64"]).decode()
        words = " ".join(f"revision{i} changed the story in place" for i in range(80))
        body = body.replace("</p>", " " + words + "</p>", 4)  # the article's first paragraphs
        page["body_base64"] = base64.b64encode(body.encode()).decode()
        recrawl = os.path.join(self.work, "recrawl.jsonl")
        with open(recrawl, "w", encoding="utf-8") as out:
            out.write(json.dumps(page) + "\n")
        self.dedup(recrawl, os.path.join(self.work, "recrawl.out"))
        kept = [pid for pid in self.first if pid != old_forgotten]
        shown = {r["page"]["id"]: r["page"] for r in json_lines(
            neardup("show", "--store", self.store, "--json", *kept))}
        before = {r["page"]["id"]: r["page"] for r in fixture("show-first.jsonl", 7)}
        for pid in (old_forgotten, new_forgotten):
            gone = subprocess.run([NEARDUP, "show", "--store", self.store, pid],
                                  capture_output=True)
            self.assertEqual(gone.returncode, 1)
            self.assertIn(b"no live page stored under this id", gone.stderr)
        self.assertNotEqual(shown[recrawled]["fingerprint"], before[recrawled]["fingerprint"])
        self.assertEqual(shown[recrawled]["first_seen"], before[recrawled]["first_seen"])
        for pid in self.first:
            if pid not in (old_forgotten, recrawled):
                self.assertEqual(shown[pid], before[pid])
        self.assertEqual(self.stats()["documents"], 244 - 2)


if __name__ == "__main__":
    NEARDUP, SOURCE = sys.argv[1], sys.argv[2]
    unittest.main(argv=sys.argv[:1])

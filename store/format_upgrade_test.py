#!/usr/bin/env python3
"""A store written by the previous format (version 5, store/testdata/format5/) opened, queried
and written by this build: its stored verdicts and clusters read alike, the next pages get the
verdicts the previous build gave them, and the store is marked this build's version (7) only
once written.

    python3 store/format_upgrade_test.py NEARDUP_BINARY SOURCE_DIR
"""
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


def fixture(name):
    with open(os.path.join(SOURCE, "store", "testdata", "format5", name), encoding="utf-8") as f:
        return json_lines(f.read())


class FormatFive(unittest.TestCase):
    def setUp(self):
        self.work = tempfile.mkdtemp(prefix="nd-format5-")
        self.store = os.path.join(self.work, "store")
        os.mkdir(self.store)
        with gzip.open(os.path.join(SOURCE, "store", "testdata", "format5", "data.mdb.gz")) as f, \
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
        self.assertEqual(self.stats()["format_version"], 7)
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


if __name__ == "__main__":
    NEARDUP, SOURCE = sys.argv[1], sys.argv[2]
    unittest.main(argv=sys.argv[:1])

#!/usr/bin/env python3
"""neardup.Index's insert loop against `neardup dedup`: the same pages, in the same order, into
an index in memory from Python and into a store by the command; prints how many pages got the
same verdict (status, duplicate_of, matched, method, distance) and each page that did not.
Exit 0 when every verdict agrees.

    python3 python/verdicts.py CRAWL [--neardup build/cli/neardup] [--config F]

CRAWL is a JSONL crawl (docs/records.md; plain or gzip: url, id, body or body_base64,
content_type), or a directory of pages with a truth.jsonl listing them (id, url) as the
synthetic evaluation sets are laid out (pages/<id>.html).
"""
import argparse
import base64
import collections
import gzip
import json
import os
import subprocess
import sys
import tempfile
import time

import neardup


def records(crawl):
    """The crawl's input records as dicts, in order."""
    if os.path.isdir(crawl):
        with open(os.path.join(crawl, "truth.jsonl"), encoding="utf-8") as truth:
            for line in truth:
                row = json.loads(line)
                with open(os.path.join(crawl, "pages", row["id"] + ".html"), "rb") as page:
                    body = page.read()
                yield {"url": row["url"], "id": row["id"],
                       "body_base64": base64.b64encode(body).decode("ascii")}
        return
    with open(crawl, "rb") as raw:
        gzipped = raw.read(2) == b"\x1f\x8b"
    with (gzip.open if gzipped else open)(crawl, "rt", encoding="utf-8") as lines:
        for line in lines:
            if line.strip():
                yield json.loads(line)


def body_of(record):
    """The page as Python gives it to neardup: the raw bytes, or the text (a str, read as UTF-8)."""
    if record.get("body_base64") is not None:
        return base64.b64decode(record["body_base64"])
    return record.get("body") or b""


def verdict_of(tag):
    return (tag["status"], tag.get("duplicate_of"), tag.get("matched"), tag.get("method"),
            tag.get("distance"))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("crawl")
    parser.add_argument("--neardup", default="build/cli/neardup")
    parser.add_argument("--config")
    args = parser.parse_args()
    config = neardup.Config.load(args.config) if args.config else neardup.Config.default()
    config_args = ["--config", args.config] if args.config else []

    pages = list(records(args.crawl))
    with tempfile.TemporaryDirectory() as work:
        crawl = os.path.join(work, "pages.jsonl")
        with open(crawl, "w", encoding="utf-8") as out:
            for record in pages:
                out.write(json.dumps(record) + "\n")
        started = time.monotonic()
        tagged = subprocess.run(
            [args.neardup, "dedup", *config_args, "--store", os.path.join(work, "store"),
             "--in", crawl], capture_output=True, check=True).stdout
        dedup_seconds = time.monotonic() - started
    expected = [verdict_of(json.loads(line)["neardup"]) for line in tagged.splitlines()]

    started = time.monotonic()
    got = []
    with neardup.Index(config=config) as index:
        for record in pages:
            v = index.insert(record.get("id") or record["url"], body_of(record),
                             record.get("content_type") or "")
            got.append((v.status, v.duplicate_of, v.matched, v.method, v.distance))
    python_seconds = time.monotonic() - started

    same = sum(a == b for a, b in zip(got, expected))
    statuses = collections.Counter(v[0] for v in expected)
    print(f"{len(pages)} pages ({', '.join(f'{n} {s}' for s, n in sorted(statuses.items()))}): "
          f"{same} verdicts the same, {len(pages) - same} different")
    print(f"neardup dedup {dedup_seconds:.2f} s, neardup.Index insert loop {python_seconds:.2f} s")
    for record, a, b in zip(pages, got, expected):
        if a != b:
            print(f"  {record.get('id') or record['url']}: python {a}, dedup {b}")
    return 0 if same == len(pages) == len(expected) else 1


if __name__ == "__main__":
    sys.exit(main())

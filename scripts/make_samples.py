#!/usr/bin/env python3
"""Builds the bundled samples from the synthetic-dev crawl of the evaluation data.

    python3 scripts/make_samples.py DATA_DIR [--pages 240] [--out samples]

Writes, deterministically:
  samples/crawl.jsonl.gz   pages in the input message format (docs/records.md): url, id,
                           body_base64 (raw bytes, any charset), fetched_at, lang
  samples/crawl-truth.jsonl  id -> cluster, op (pages of one cluster are near-duplicates)
  samples/pages/*.html     three raw pages for `neardup compare`: a.html and b.html are
                           near-duplicates (one article on two sites), c.html is another article
Whole clusters are taken, so every planted duplicate's original is in the sample.
"""
import argparse
import base64
import gzip
import json
import os
import random
import shutil


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("data_dir")
    ap.add_argument("--pages", type=int, default=240)
    ap.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "samples"))
    args = ap.parse_args()

    root = os.path.join(args.data_dir, "data", "neardup", "synthetic-dev")
    truth = [json.loads(line) for line in open(os.path.join(root, "truth.jsonl"), encoding="utf-8")]
    clusters = {}
    for row in truth:
        clusters.setdefault(row["cluster"], []).append(row)
    # Hard negatives are only meaningful beside their target cluster: keep them together.
    rng = random.Random(7)
    names = sorted(clusters)
    rng.shuffle(names)
    chosen, count = set(), 0
    for name in names:
        if count >= args.pages:
            break
        group = {name} | {r["cluster"] for r in truth if r["neg_of"] == name}
        group -= chosen
        size = sum(len(clusters[c]) for c in group)
        if count + size > args.pages + 6:
            continue
        chosen |= group
        count += size
    rows = [r for r in truth if r["cluster"] in chosen]  # truth order = crawl order

    os.makedirs(args.out, exist_ok=True)
    base_ms = 1_600_000_000_000
    with gzip.GzipFile(os.path.join(args.out, "crawl.jsonl.gz"), "wb", mtime=0) as gz, \
            open(os.path.join(args.out, "crawl-truth.jsonl"), "w", encoding="utf-8") as tf:
        for n, row in enumerate(rows):
            body = open(os.path.join(root, "pages", row["id"] + ".html"), "rb").read()
            record = {"url": row["url"], "id": row["id"],
                      "body_base64": base64.b64encode(body).decode("ascii"),
                      "fetched_at": base_ms + n * 1000, "lang": row["lang"]}
            gz.write((json.dumps(record) + "\n").encode("utf-8"))
            tf.write(json.dumps({"id": row["id"], "cluster": row["cluster"], "op": row["op"],
                                 "lang": row["lang"], "charset": row["charset"]}) + "\n")

    # A cross-site pair and an unrelated article for the compare quick start.
    pages_dir = os.path.join(args.out, "pages")
    os.makedirs(pages_dir, exist_ok=True)
    by_cluster = {}
    for r in rows:
        by_cluster.setdefault(r["cluster"], []).append(r)
    pair = next(v for k, v in sorted(by_cluster.items())
                if v[0]["lang"] == "en" and any(r["op"] == "original" for r in v)
                and any(r["op"] == "cross_site" for r in v))
    other = next(v[0] for k, v in sorted(by_cluster.items())
                 if v[0]["lang"] == "en" and v[0]["cluster"] != pair[0]["cluster"])
    cross = next(r for r in pair if r["op"] == "cross_site")
    original = next(r for r in pair if r["op"] == "original")
    for name, row in (("a.html", original), ("b.html", cross), ("c.html", other)):
        shutil.copyfile(os.path.join(root, "pages", row["id"] + ".html"), os.path.join(pages_dir, name))
    print(f"{len(rows)} pages in {len(chosen)} clusters -> {args.out}")


if __name__ == "__main__":
    main()

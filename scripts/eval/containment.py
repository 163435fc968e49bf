#!/usr/bin/env python3
"""Scores containment on the containment development set (containment_set.py): which derived
pages the index relates to the page they were made from, and what the negatives match.

    scripts/eval/containment.py DATA_DIR [--neardup build/cli/neardup] [--config FILE]
                                [--seed 1] [--per-kind 12] [--keep DIR]

Without --config, containment.enabled: true and every other default; a --config FILE must
enable containment itself.

Two measurements:
  stream    `neardup dedup` over the set in its stream order (one store). A derived page is
            found when its record says so: `contained_in` naming its source (the derived page
            came later), `contains` naming it (the later page holds the earlier one), or a
            duplicate verdict matching it. A negative is matched when its record names any page
            of the set.
  pairs     `neardup compare --explain` of each derived page with its source (and of each
            negative with the source it stands beside): the share of each text's words inside
            the runs the two share, the text-level containment that an index can at best find.
  bodies    `neardup dedup` over the 737 article bodies of synthetic-dev (as text/plain pages,
            in the pool's order): every containment or paragraph seen before between two
            different articles is listed with the paragraphs they share (the pool was cleaned of
            shared paragraphs and of bodies more than 30 % contained in another, so each one
            says what the cleaning left).
Prints a table per kind (plain and +edit) — found by the stream, of which as duplicates, found
by the pairs, the anchors' and the text's shares, how many pairs reach each share of the text,
and how many derived pages' main text does not hold the copied text (under 5 %: extraction took
something else) — and lists every matched negative. Exit 0.
Python standard library only."""

import argparse
import gzip
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from containment_set import generate  # noqa: E402
from evalcore import dataset_dir, default_neardup  # noqa: E402

THRESHOLDS = (0.3, 0.5, 0.7)


def run_dedup(neardup, config, work):
    command = [neardup, "dedup", "--store", os.path.join(work, "store"), "--no-progress",
               "--in", os.path.join(work, "pages.jsonl"), "--out", os.path.join(work, "out.jsonl")]
    if config:
        command += ["--config", config]
    run = subprocess.run(command, capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"{' '.join(command)}: exit {run.returncode}\n{run.stderr}")
    out = {}
    for line in open(os.path.join(work, "out.jsonl"), encoding="utf-8"):
        record = json.loads(line)
        out[record["id"]] = record["neardup"]
    return out


def named(tag, other):
    """Whether an output record's tag relates the page to `other` (an id), and how."""
    for field in ("contained_in", "contains"):
        value = tag.get(field)
        if isinstance(value, dict) and value.get("id") == other:
            return field
    if tag.get("status") == "duplicate" and other in (tag.get("matched"), tag.get("duplicate_of")):
        return "duplicate"
    return None


def related_ids(tag):
    ids = set()
    for field in ("contained_in", "contains"):
        value = tag.get(field)
        if isinstance(value, dict) and value.get("id"):
            ids.add(value["id"])
    if tag.get("status") == "duplicate":
        ids.update(x for x in (tag.get("matched"), tag.get("duplicate_of")) if x)
    return ids


def compare(neardup, config, a, b):
    command = [neardup, "compare", "--json", "--explain", a, b]
    if config:
        command += ["--config", config]
    run = subprocess.run(command, capture_output=True, text=True)
    if run.returncode not in (0, 1):
        sys.exit(f"{' '.join(command)}: exit {run.returncode}\n{run.stderr}")
    record = json.loads(run.stdout)
    e = record.get("explain", {})
    words, covered = e.get("words", {}), e.get("covered", {})
    share = {k: covered.get(k, 0) / words[k] if words.get(k) else 0.0 for k in ("a", "b")}
    c = record.get("containment", {})
    share["anchors_a"], share["anchors_b"] = c.get("a_in_b", 0.0), c.get("b_in_a", 0.0)
    share["contained"] = record.get("contained")
    share["paragraphs_shared"] = c.get("paragraphs_shared", 0)
    return share, record.get("verdict")


def words_of(text):
    """A paragraph's words, lower case, punctuation aside (as the paragraph hashes see it,
    roughly)."""
    return " ".join(re.findall(r"\w+", text.lower()))


def bodies(data_dir, neardup, config, work):
    """The relations `neardup dedup` finds among the article bodies: [(later, kind, earlier,
    value, shared paragraphs)]."""
    root = dataset_dir(data_dir, "synthetic-dev")
    with gzip.open(os.path.join(root, "source-bodies.jsonl.gz"), "rt", encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    os.makedirs(work, exist_ok=True)
    path = os.path.join(work, "bodies.jsonl")
    texts = {}
    with open(path, "w", encoding="utf-8") as out:
        for n, row in enumerate(rows):
            page_id = f"b{n:03d}"
            texts[page_id] = [row.get("title") or ""] + row["paras"]
            out.write(json.dumps({"url": f"https://bodies.example/{page_id}", "id": page_id,
                                  "content_type": "text/plain",
                                  "body": "\n".join(texts[page_id])}) + "\n")
    command = [neardup, "dedup", "--store", os.path.join(work, "bodies-store"), "--no-progress",
               "--in", path, "--out", os.path.join(work, "bodies.out")]
    if config:
        command += ["--config", config]
    run = subprocess.run(command, capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"{' '.join(command)}: exit {run.returncode}\n{run.stderr}")
    found = []
    for line in open(os.path.join(work, "bodies.out"), encoding="utf-8"):
        record = json.loads(line)
        tag, page_id = record["neardup"], record["id"]
        related = [(f, tag[f]["id"], tag[f]["containment"]) for f in ("contained_in", "contains")
                   if f in tag]
        related += [("paragraph_seen", other, None)
                    for other in tag.get("paragraphs", {}).get("first", [])]
        if tag.get("status") == "duplicate":
            related.append(("duplicate", tag["duplicate_of"], tag.get("similarity")))
        for kind, other, value in related:
            theirs = {words_of(p) for p in texts[other]}
            shared = [p for p in texts[page_id] if words_of(p) and words_of(p) in theirs]
            found.append((page_id, kind, other, value, shared))
    return len(rows), found


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data_dir")
    parser.add_argument("--neardup", default=default_neardup())
    parser.add_argument("--config")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--per-kind", type=int, default=12)
    parser.add_argument("--keep", help="write the set and the outputs here (else a temporary "
                        "directory, removed)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temporary:
        work = args.keep or temporary
        if not args.config:
            args.config = os.path.join(temporary, "containment.yaml")
            with open(args.config, "w", encoding="utf-8") as f:
                f.write("containment:\n  enabled: true\n")
        truth = generate(args.data_dir, work, args.seed, args.per_kind)
        tags = run_dedup(args.neardup, args.config, work)
        page = lambda i: os.path.join(work, "pages", i + ".html")  # noqa: E731
        order = {t["id"]: n for n, t in enumerate(truth)}
        rows = {}
        for t in truth:
            if t["relation"] is None:
                continue
            # The later page of the pair says it; `earlier` is the page it names.
            later, earlier = t["id"], t["source"]
            if order[later] < order[earlier]:
                later, earlier = earlier, later
            how = named(tags[later], earlier)
            derived = later if t["role"] == "derived" else earlier
            source = earlier if derived == later else later
            share, verdict = compare(args.neardup, args.config, page(derived), page(source))
            kind = t["kind"] + ("+edit" if t["edited"] else "")
            if t["relation"] == "contains" and t["kind"] != "quote":
                kind += " (first)"
            # compare (derived, source): the smaller text is the derived one but for quotes.
            small_in_large = "b_in_a" if t["kind"] == "quote" else "a_in_b"
            rows.setdefault(kind, []).append({
                "found": how, "derived_in_source": share["a"], "source_in_derived": share["b"],
                "anchors": share["anchors_b"] if t["kind"] == "quote" else share["anchors_a"],
                "pair_found": share["contained"] == small_in_large or verdict == "near_duplicate",
                "compare": verdict, "share": t["share"]})
        # Relations a derived page or a source states with any page but its partner: wrong.
        partner = {}
        for t in truth:
            if t["relation"] is not None:
                partner.setdefault(t["id"], set()).add(t["source"])
                partner.setdefault(t["source"], set()).add(t["id"])
        wrong = []
        for t in truth:
            if t["role"] in ("source", "derived", "derived_first"):
                for other in sorted(related_ids(tags[t["id"]]) - partner.get(t["id"], set())):
                    wrong.append((t["id"], other))
        negatives = []
        for t in truth:
            if t["role"] != "negative":
                continue
            hits = related_ids(tags[t["id"]])
            stand_by = t.get("shares_paragraph_with") or t["id"].replace("-negative", "-source")
            share = {"a": 0.0, "b": 0.0}
            if stand_by in order:
                share, _ = compare(args.neardup, args.config, page(t["id"]), page(stand_by))
            negatives.append({"id": t["id"], "kind": t["kind"], "hits": sorted(hits),
                              "in_other": share["a"], "other_in": share["b"],
                              "anchors": max(share.get("anchors_a", 0), share.get("anchors_b", 0)),
                              "pair_found": bool(share.get("contained"))})

        n_bodies, body_relations = bodies(args.data_dir, args.neardup, args.config, work)

    print(f"containment set: seed {args.seed}, {len(truth)} pages")
    header = (f"{'kind':24} {'n':>3} {'found':>5} {'as dup':>6} {'pairs':>5} "
              f"{'anchors: median':>15} {'min':>5} {'text share: median':>18} {'min':>5}  "
              + " ".join(f">={x}" for x in THRESHOLDS))
    print(header)
    for kind in sorted(rows):
        r = rows[kind]
        found = sum(1 for x in r if x["found"])
        dup = sum(1 for x in r if x["found"] == "duplicate")
        # The share of the smaller text found in the larger: the containment to detect.
        shares = [x["source_in_derived"] if kind.startswith("quote") else x["derived_in_source"]
                  for x in r]
        anchors = [x["anchors"] for x in r]
        pairs = sum(1 for x in r if x["pair_found"])
        over = " ".join(f"{sum(s >= th for s in shares):>5}" for th in THRESHOLDS)
        print(f"{kind:24} {len(r):>3} {found:>5} {dup:>6} {pairs:>5} "
              f"{statistics.median(anchors):>15.3f} {min(anchors):>5.3f} "
              f"{statistics.median(shares):>18.3f} {min(shares):>5.3f}  {over}  "
              f"{sum(1 for v in shares if v < 0.05):>11}")
    print(f"relations of sources and derived pages with a page not their partner: {len(wrong)}")
    for page_id, other in wrong:
        print(f"  {page_id} names {other}")
    for kind in ("same_site", "quote_one_paragraph"):
        n = [x for x in negatives if x["kind"] == kind]
        if not n:
            continue
        matched = [x for x in n if x["hits"]]
        worst = max(max(x["in_other"], x["other_in"]) for x in n)
        print(f"negative {kind:15} {len(n):>3} matched {len(matched):>3}, pairs contained "
              f"{sum(1 for x in n if x['pair_found'])}, anchors max "
              f"{max(x['anchors'] for x in n):.3f}, text share max {worst:.3f}")
        for x in matched:
            print(f"  {x['id']}: names {', '.join(x['hits'])}")
    print(f"article bodies: {n_bodies} pages, {len(body_relations)} relations between different "
          "articles")
    for later, kind, earlier, value, shared in body_relations:
        what = f" {value}" if value is not None else ""
        print(f"  {later} {kind} {earlier}{what}; paragraphs shared (words): "
              f"{len(shared)}" + (f" ({shared[0][:70]!r})" if shared else ""))


if __name__ == "__main__":
    main()

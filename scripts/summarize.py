#!/usr/bin/env python3
"""Summarises tagged JSONL (neardup dedup / neardupd output): counts by status and reason, a few
example duplicates, and, with --truth (id -> cluster), pairwise precision and recall of the
duplicate links against the planted clusters.

    python3 scripts/summarize.py TAGGED.jsonl [--truth TRUTH.jsonl] [--examples 5]
"""
import argparse
import collections
import json


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("tagged")
    ap.add_argument("--truth")
    ap.add_argument("--examples", type=int, default=5)
    args = ap.parse_args()

    rows = [json.loads(line) for line in open(args.tagged, encoding="utf-8") if line.strip()]
    status = collections.Counter(r["neardup"]["status"] for r in rows)
    reasons = collections.Counter(r["neardup"].get("reason") for r in rows
                                  if r["neardup"]["status"] == "skipped")
    print(f"pages: {len(rows)}  " + "  ".join(f"{k}: {v}" for k, v in sorted(status.items())))
    if reasons:
        print("skipped: " + ", ".join(f"{k} {v}" for k, v in reasons.most_common()))
    dups = [r for r in rows if r["neardup"]["status"] == "duplicate"]
    for r in dups[: args.examples]:
        t = r["neardup"]
        print(f"  {r.get('id', r.get('url'))} duplicate_of {t['duplicate_of']} "
              f"(matched {t['matched']}, distance {t['distance']})")
    if not args.truth:
        return
    cluster = {}
    for line in open(args.truth, encoding="utf-8"):
        t = json.loads(line)
        cluster[t["id"]] = t["cluster"]
    # A page tagged duplicate_of X is a true link when both are in one planted cluster.
    true_links = sum(1 for r in dups if cluster.get(r["id"]) == cluster.get(r["neardup"]["duplicate_of"]))
    # Pages that should be duplicates: every page of a cluster after its first-seen page.
    seen, should = set(), 0
    for r in rows:
        c = cluster.get(r["id"])
        if c in seen:
            should += 1
        seen.add(c)
    precision = true_links / len(dups) if dups else 1.0
    recall = true_links / should if should else 1.0
    print(f"against the planted clusters: duplicate precision {precision:.3f} "
          f"({true_links}/{len(dups)}), recall {recall:.3f} ({true_links}/{should})")


if __name__ == "__main__":
    main()

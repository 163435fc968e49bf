#!/usr/bin/env python3
"""Precision, recall and F1 of each signature (SimHash, MinHash) and of both combined, on the
natural-pairs and synthetic-dev sets, and the matches among unrelated article bodies.

  scripts/eval/signatures.py SHARED_DIR [--neardup PATH] [--config F] [--k 3]
                             [--threshold 0.45] [--bands 21] [--rows 2] [--sketch-bits 8]
                             [--sweep 0.3,0.4,0.5,0.6] [--pairs-out FILE] [--json]

SHARED_DIR holds natural-pairs/ and synthetic-dev/ (or data/neardup/...). Runs
`neardup fingerprint` once per page. --k, --threshold, --bands and --rows must match the
config's dedup.max_distance, dedup.min_similarity, minhash.bands and minhash.rows (their
defaults are the defaults; 21 x 2 is the design a new store gives a scheme with minhash.bands
and minhash.rows unset, 42 x 3 that of stores written before it chose). The rules are the index's:
  simhash: Hamming distance <= k;
  minhash: the sketches share an LSH band (all 32 bits of its values: the 16 of the sketch and
           the upper 16 `neardup fingerprint` prints as minhash_upper, as a new store's wide
           band keys hash them; the 16 alone without them) and the Jaccard
           similarity estimated from the low --sketch-bits bits of each value (what the index
           stores: common/sketch.h) is >= threshold;
  combined: either.
Sets:
  natural-pairs   every labelled pair: near_duplicate pairs found (recall) per language, and
                  different_same_site pairs wrongly matched;
  synthetic-dev   every pair of the 1,000 pages (same planted cluster = positive);
  bodies          every same-language pair of synthetic-dev's source-bodies.jsonl.gz (737
                  unrelated real article bodies, fingerprinted as text/plain): all negatives.
--sweep prints the MinHash and combined figures for several thresholds (how the default was
chosen). A pair with a skipped page is never a match. --pairs-out writes every scored pair's
distance, estimated similarity and verdicts as JSON lines (to compare two rules pair by pair).
"""

import argparse
import gzip
import json
import os
import sys
import tempfile
from collections import defaultdict

import evalcore


def sketch_of(record):
    """The sketch's values, with their upper 16 bits above the low 16 when the record has them
    (the estimate masks them off; bands compare all of them)."""
    text = record.get("minhash")
    if record.get("status") != "fingerprinted" or not text:
        return None
    upper = record.get("minhash_upper") or "0" * len(text)
    return tuple(int(upper[i:i + 4], 16) << 16 | int(text[i:i + 4], 16)
                 for i in range(0, len(text), 4))


def estimate_jaccard(a, b, bits=16):
    """As common/sketch.h: values equal in their low `bits` bits, corrected for the chance
    2^-bits that two different minima agree in them (b-bit minwise hashing)."""
    mask = (1 << bits) - 1
    chance = 1 / (1 << bits)
    observed = sum((x ^ y) & mask == 0 for x, y in zip(a, b)) / len(a)
    return min(1.0, max(0.0, (observed - chance) / (1 - chance)))


class Signatures:
    """Fingerprints and sketches of a set of pages, and the pairs each rule matches."""

    def __init__(self, fingerprints, sketches, args):
        self.fingerprints = fingerprints
        self.sketches = sketches
        self.bands, self.rows, self.bits = args.bands, args.rows, args.sketch_bits

    def distance(self, a, b):
        return evalcore.distance(self.fingerprints[a], self.fingerprints[b])

    def similarity(self, a, b):
        """Estimated Jaccard when the sketches share a band (the LSH candidates), else None."""
        sa, sb = self.sketches[a], self.sketches[b]
        if sa is None or sb is None:
            return None
        r = self.rows
        if not any(sa[i * r:(i + 1) * r] == sb[i * r:(i + 1) * r] for i in range(self.bands)):
            return None
        return estimate_jaccard(sa, sb, self.bits)

    def band_candidates(self, pages):
        """Pairs of pages sharing at least one band (each pair once, a < b in `pages` order)."""
        order = {p: i for i, p in enumerate(pages)}
        buckets = defaultdict(list)
        for p in pages:
            s = self.sketches[p]
            if s is None:
                continue
            for band in range(self.bands):
                buckets[(band, s[band * self.rows:(band + 1) * self.rows])].append(p)
        pairs = set()
        for members in buckets.values():
            for i, a in enumerate(members):
                for b in members[i + 1:]:
                    pairs.add((a, b) if order[a] < order[b] else (b, a))
        return pairs


PAIRS_OUT = []  # (set, a, b, distance, similarity, simhash match, minhash match) with --pairs-out


def verdicts(sig, pairs, k, thresholds, name=None, threshold=None):
    """{pair: (simhash match, {threshold: minhash match})} for the given pairs."""
    out = {}
    for a, b in pairs:
        d = sig.distance(a, b)
        j = sig.similarity(a, b)
        out[(a, b)] = (d is not None and d <= k,
                       {t: j is not None and j >= t for t in thresholds})
        if name is not None:
            PAIRS_OUT.append({"set": name, "a": a, "b": b, "distance": d, "similarity": j,
                              "simhash": out[(a, b)][0], "minhash": out[(a, b)][1][threshold]})
    return out


def scores(tp, fp, positives):
    precision = tp / (tp + fp) if tp + fp else None
    recall = tp / positives if positives else None
    f1 = (2 * precision * recall / (precision + recall)
          if precision and recall else None)
    return {"tp": tp, "fp": fp, "precision": precision, "recall": recall, "f1": f1}


def rule_names(threshold):
    return {"simhash": lambda s, m: s, "minhash": lambda s, m: m[threshold],
            "combined": lambda s, m: s or m[threshold]}


def natural(args, thresholds):
    root = evalcore.dataset_dir(args.shared_dir, "natural-pairs")
    pairs = evalcore.read_jsonl(os.path.join(root, "pairs.jsonl"))
    pages = sorted({p for pair in pairs for p in (pair["a"], pair["b"])})
    records = evalcore.fingerprint_files(args.neardup, [os.path.join(root, p) for p in pages],
                                         args.config)
    sig = Signatures({p: evalcore.fingerprint_of(records[os.path.join(root, p)]) for p in pages},
                     {p: sketch_of(records[os.path.join(root, p)]) for p in pages},
                     args)
    v = verdicts(sig, [(p["a"], p["b"]) for p in pairs], args.k, thresholds, "natural",
                 args.threshold)
    result = {}
    for t in thresholds:
        by_rule = {}
        for name, rule in rule_names(t).items():
            found = defaultdict(int)
            totals = defaultdict(int)
            for p in pairs:
                key = p["label"] if p["label"] != "near_duplicate" else f"near_duplicate/{p['lang']}"
                matched = rule(*v[(p["a"], p["b"])])
                for group in {p["label"], key}:
                    totals[group] += 1
                    found[group] += matched
            by_rule[name] = {g: f"{found[g]}/{totals[g]}" for g in sorted(totals)}
        result[t] = by_rule
    return result


def synthetic(args, thresholds):
    root = evalcore.dataset_dir(args.shared_dir, "synthetic-dev")
    truth = evalcore.read_jsonl(os.path.join(root, "truth.jsonl"))
    ids = [row["id"] for row in truth]
    files = {i: os.path.join(root, "pages", i + ".html") for i in ids}
    records = evalcore.fingerprint_files(args.neardup, list(files.values()), args.config)
    sig = Signatures({i: evalcore.fingerprint_of(records[files[i]]) for i in ids},
                     {i: sketch_of(records[files[i]]) for i in ids}, args)
    cluster = {row["id"]: row["cluster"] for row in truth}
    op = {row["id"]: row["op"] for row in truth}
    positives = [(a, b) for n, a in enumerate(ids) for b in ids[n + 1:] if cluster[a] == cluster[b]]
    # Only pairs within k bits or sharing a band can match: score those, count the rest.
    near = {(a, b) for n, a in enumerate(ids) for b in ids[n + 1:]
            if (d := sig.distance(a, b)) is not None and d <= args.k}
    candidates = sig.band_candidates(ids) | near | set(positives)
    v = verdicts(sig, candidates, args.k, thresholds, "synthetic", args.threshold)
    result = {}
    for t in thresholds:
        by_rule = {}
        for name, rule in rule_names(t).items():
            tp = sum(1 for pair in positives if rule(*v[pair]))
            fp = sum(1 for pair, verdict in v.items()
                     if cluster[pair[0]] != cluster[pair[1]] and rule(*verdict))
            entry = scores(tp, fp, len(positives))
            per_op = defaultdict(lambda: [0, 0])
            for a, b in positives:
                if op[a] == "original" or op[b] == "original":
                    variant = b if op[a] == "original" else a
                    per_op[op[variant]][1] += 1
                    per_op[op[variant]][0] += rule(*v[(a, b)])
            entry["recall_by_op"] = {o: round(f / n, 3) for o, (f, n) in sorted(per_op.items())}
            by_rule[name] = entry
        result[t] = by_rule
    return result


def bodies(args, thresholds):
    root = evalcore.dataset_dir(args.shared_dir, "synthetic-dev")
    with gzip.open(os.path.join(root, "source-bodies.jsonl.gz"), "rt", encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    with tempfile.TemporaryDirectory() as work:
        files = {}
        for n, row in enumerate(rows):
            path = os.path.join(work, f"{n:04d}.txt")
            with open(path, "w", encoding="utf-8") as out:
                out.write("\n".join([row.get("title") or ""] + row["paras"]))
            files[n] = path
        records = evalcore.fingerprint_files(args.neardup, list(files.values()), args.config,
                                             content_type="text/plain")
    ids = list(files)
    sig = Signatures({n: evalcore.fingerprint_of(records[files[n]]) for n in ids},
                     {n: sketch_of(records[files[n]]) for n in ids}, args)
    lang = {n: rows[n]["lang"] for n in ids}
    same_language = sum(1 for i, a in enumerate(ids) for b in ids[i + 1:] if lang[a] == lang[b])
    near = {(a, b) for i, a in enumerate(ids) for b in ids[i + 1:]
            if lang[a] == lang[b] and (d := sig.distance(a, b)) is not None and d <= args.k}
    candidates = {p for p in sig.band_candidates(ids) if lang[p[0]] == lang[p[1]]} | near
    v = verdicts(sig, candidates, args.k, thresholds, "bodies", args.threshold)
    top = sorted(((sig.similarity(a, b) or 0, a, b) for a, b in candidates), reverse=True)[:3]
    result = {"same_language_pairs": same_language, "band_candidates": len(candidates - near),
              "highest_candidate_similarity": [round(j, 3) for j, _, _ in top]}
    for t in thresholds:
        result[t] = {name: sum(1 for verdict in v.values() if rule(*verdict))
                     for name, rule in rule_names(t).items()}
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("shared_dir")
    parser.add_argument("--neardup", default=evalcore.default_neardup())
    parser.add_argument("--config", help="YAML config passed to neardup fingerprint")
    parser.add_argument("--k", type=int, default=3, help="dedup.max_distance")
    parser.add_argument("--threshold", type=float, default=0.45, help="dedup.min_similarity")
    parser.add_argument("--bands", type=int, default=21,
                        help="minhash.bands (default: a new store's design)")
    parser.add_argument("--rows", type=int, default=2, help="minhash.rows")
    parser.add_argument("--sketch-bits", type=int, default=8, choices=range(1, 17),
                        metavar="1..16", help="bits of each value the estimate compares (the "
                        "index stores 8)")
    parser.add_argument("--pairs-out", help="write every scored pair as a JSON line here")
    parser.add_argument("--sweep", help="comma-separated thresholds to report besides --threshold")
    parser.add_argument("--sets", default="natural,synthetic,bodies")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    args = parser.parse_args()
    thresholds = sorted({args.threshold} | {float(t) for t in (args.sweep or "").split(",") if t})
    sets = {"natural": natural, "synthetic": synthetic, "bodies": bodies}
    results = {}
    for name in args.sets.split(","):
        results[name] = sets[name](args, thresholds)
        print(f"[{name} done]", file=sys.stderr)
    if args.pairs_out:
        with open(args.pairs_out, "w", encoding="utf-8") as out:
            for row in PAIRS_OUT:
                out.write(json.dumps(row, default=str) + "\n")
    if args.json:
        print(json.dumps(results, indent=1, default=str))
        return
    share = lambda x: "-" if x is None else f"{x:.4f}"
    for t in thresholds:
        print(f"== k <= {args.k}, MinHash {args.bands} x {args.rows} at estimated J >= {t}"
              f" ({args.sketch_bits}-bit values)")
        if "natural" in results:
            print("natural-pairs (found/pairs):")
            for rule, groups in results["natural"][t].items():
                print(f"  {rule:9s} " + "  ".join(f"{g} {c}" for g, c in groups.items()))
        if "synthetic" in results:
            print("synthetic-dev (all pairs):")
            for rule, s in results["synthetic"][t].items():
                print(f"  {rule:9s} precision {share(s['precision'])} recall {share(s['recall'])}"
                      f" F1 {share(s['f1'])} (tp {s['tp']}, fp {s['fp']})")
                print(f"            recall by op: {s['recall_by_op']}")
        if "bodies" in results:
            b = results["bodies"]
            print(f"bodies: {b['same_language_pairs']} same-language pairs, "
                  f"{b['band_candidates']} LSH candidates (highest J {b['highest_candidate_similarity']}); "
                  "matched: " + ", ".join(f"{r} {n}" for r, n in b[t].items()))


if __name__ == "__main__":
    main()

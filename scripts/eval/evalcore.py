"""Shared pieces of the fingerprint evaluations: running `neardup fingerprint`, reading the
data sets under DATA_DIR, and the distance statistics. Python standard library only."""

import json
import os
import subprocess
import sys

KS = (2, 3, 4, 5)


def dataset_dir(data_dir, name):
    """DATA_DIR may be the data root (holding natural-pairs/) or a directory above it."""
    for candidate in (os.path.join(data_dir, name),
                      os.path.join(data_dir, "data", "neardup", name)):
        if os.path.isdir(candidate):
            return candidate
    sys.exit(f"{name}/ not found under {data_dir}")


def default_neardup():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return os.path.join(root, "build", "cli", "neardup")


def fingerprint_files(neardup, files, config=None, chunk=200, content_type=None):
    """Runs `neardup fingerprint` over files (many per call). Returns {file: record}, where
    record is the JSON line: status, fingerprint and minhash (when fingerprinted), features,
    reason."""
    records = {}
    for start in range(0, len(files), chunk):
        command = [neardup, "fingerprint"]
        if config:
            command += ["--config", config]
        if content_type:
            command += ["--content-type", content_type]
        command += files[start:start + chunk]
        run = subprocess.run(command, capture_output=True, text=True)
        if run.returncode not in (0, 1):
            sys.exit(f"{' '.join(command[:4])} ...: exit {run.returncode}\n{run.stderr}")
        for line in run.stdout.splitlines():
            record = json.loads(line)
            records[record["file"]] = record
    missing = [f for f in files if f not in records]
    if missing:
        sys.exit(f"neardup fingerprint printed no line for {missing[0]} (and {len(missing) - 1} more)")
    return records


def fingerprint_of(record):
    """The fingerprint as an int, or None when the page was skipped or failed."""
    hex_digits = record.get("fingerprint")
    return int(hex_digits, 16) if record.get("status") == "fingerprinted" and hex_digits else None


def distance(a, b):
    """Hamming distance, or None when either side has no fingerprint."""
    return None if a is None or b is None else bin(a ^ b).count("1")


def percentile(sorted_values, p):
    if not sorted_values:
        return None
    index = min(len(sorted_values) - 1, max(0, round(p / 100 * (len(sorted_values) - 1))))
    return sorted_values[index]


def summarize(distances):
    """Distances of one group of pairs (None: a side was skipped) -> statistics dict. A skipped
    pair is never counted as within k."""
    measured = sorted(d for d in distances if d is not None)
    n = len(distances)
    summary = {"n": n, "skipped": n - len(measured),
               "median": percentile(measured, 50), "p90": percentile(measured, 90)}
    for k in KS:
        within = sum(1 for d in measured if d <= k)
        summary[f"within_{k}"] = within / n if n else None
    return summary


def format_table(rows):
    """rows: [(group name, summary)] -> aligned text table."""
    header = ["group", "n", "skipped", "median", "p90"] + [f"<={k}" for k in KS]
    lines = [header]
    for name, s in rows:
        lines.append([name, str(s["n"]), str(s["skipped"]), str(s["median"]), str(s["p90"])] +
                     [f"{s[f'within_{k}']:.3f}" if s[f"within_{k}"] is not None else "-"
                      for k in KS])
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(line, widths)) for line in lines)


def read_jsonl(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def natural_pair_distances(pairs, fingerprints):
    """pairs: rows of pairs.jsonl; fingerprints: {page path as in pairs: int or None}.
    Returns {label: [distance or None]} and {label/lang: [...]}."""
    by_label, by_lang = {}, {}
    for pair in pairs:
        d = distance(fingerprints[pair["a"]], fingerprints[pair["b"]])
        by_label.setdefault(pair["label"], []).append(d)
        by_lang.setdefault(f"{pair['label']}/{pair['lang']}", []).append(d)
    return by_label, by_lang


def synthetic_scores(truth, fingerprints):
    """truth: rows of truth.jsonl; fingerprints: {page id: int or None}. Every pair of pages
    is scored: same cluster = positive. Returns (groups, pr) where groups maps a pair group
    to its distances and pr maps k to precision/recall of "distance <= k"."""
    ids = [row["id"] for row in truth]
    cluster = {row["id"]: row["cluster"] for row in truth}
    neg_of = {row["id"]: row["neg_of"] for row in truth}
    op = {row["id"]: row["op"] for row in truth}
    positives, hard, histogram_negative = [], [], [0] * 66  # index 65: skipped
    per_op = {}
    for i, a in enumerate(ids):
        fa = fingerprints[a]
        for b in ids[i + 1:]:
            d = distance(fa, fingerprints[b])
            if cluster[a] == cluster[b]:
                positives.append(d)
                # op describes a page's difference from its cluster's original page.
                if op[a] == "original" or op[b] == "original":
                    variant = b if op[a] == "original" else a
                    per_op.setdefault(op[variant], []).append(d)
            else:
                histogram_negative[65 if d is None else d] += 1
                if neg_of[a] == cluster[b] or neg_of[b] == cluster[a]:
                    hard.append(d)
    negatives = [d for d in range(65) for _ in range(histogram_negative[d])]
    negatives += [None] * histogram_negative[65]
    pr = {}
    for k in KS:
        true_positive = sum(1 for d in positives if d is not None and d <= k)
        false_positive = sum(histogram_negative[:k + 1])
        predicted = true_positive + false_positive
        pr[k] = {"precision": true_positive / predicted if predicted else None,
                 "recall": true_positive / len(positives) if positives else None,
                 "false_positives": false_positive}
    groups = {"in_cluster": positives, "hard_negative": hard, "all_negative": negatives}
    groups.update({f"op:{name}": ds for name, ds in sorted(per_op.items())})
    return groups, pr


def parse_args(description, json_help):
    """The command line data_root by the fingerprint evaluations: DATA_DIR [--neardup]
    [--config] [--json]."""
    import argparse
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("data_dir")
    parser.add_argument("--neardup", default=default_neardup())
    parser.add_argument("--config", help="YAML config passed to neardup fingerprint")
    parser.add_argument("--json", action="store_true", help=json_help)
    return parser.parse_args()

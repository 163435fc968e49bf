#!/usr/bin/env python3
"""Fingerprint precision and recall on the synthetic-dev set, over all pairs of pages.

  scripts/eval/synthetic.py DATA_DIR [--neardup PATH] [--config F] [--json]

DATA_DIR holds synthetic-dev/ (or data/neardup/synthetic-dev/). Runs
`neardup fingerprint [--config F] FILE...` on the 1,000 pages; every pair of pages is scored
(about 500k): pairs in one planted cluster are positive, all others negative. A pair with a
skipped page is never predicted a duplicate. Prints precision/recall of "distance <= k" for
k = 2, 3, 4, 5, and distance distributions for in-cluster pairs, the designed hard negatives,
all negatives, and in-cluster pairs by edit (a variant against its cluster's original page).
"""

import json
import os

import evalcore


def main():
    args = evalcore.parse_args(__doc__.splitlines()[0], "print the results as JSON")

    root = evalcore.dataset_dir(args.data_dir, "synthetic-dev")
    truth = evalcore.read_jsonl(os.path.join(root, "truth.jsonl"))
    files = {row["id"]: os.path.join(root, "pages", row["id"] + ".html") for row in truth}
    records = evalcore.fingerprint_files(args.neardup, list(files.values()), args.config)
    fingerprints = {page: evalcore.fingerprint_of(records[f]) for page, f in files.items()}
    groups, pr = evalcore.synthetic_scores(truth, fingerprints)
    rows = [(name, evalcore.summarize(ds)) for name, ds in groups.items()]
    if args.json:
        print(json.dumps({"precision_recall": pr, "groups": dict(rows)}, indent=1))
        return
    skipped = sum(1 for f in fingerprints.values() if f is None)
    print(f"synthetic-dev: {len(truth)} pages ({skipped} skipped), "
          f"{len(groups['in_cluster'])} positive and {len(groups['all_negative'])} negative pairs")
    share = lambda x: "-" if x is None else f"{x:.4f}"
    for k, score in pr.items():
        print(f"distance <= {k}: precision {share(score['precision'])}  "
              f"recall {share(score['recall'])}  false positives {score['false_positives']}")
    print(evalcore.format_table(rows))


if __name__ == "__main__":
    main()

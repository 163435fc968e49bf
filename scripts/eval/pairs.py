#!/usr/bin/env python3
"""Fingerprint distances on the natural-pairs set: how often near_duplicate pairs fall within
k bits, against different_same_site pairs (the same template, different articles).

  scripts/eval/pairs.py DATA_DIR [--neardup PATH] [--config F] [--json]

DATA_DIR holds natural-pairs/ (or data/neardup/natural-pairs/). Runs
`neardup fingerprint [--config F] FILE...` on every page once; a pair with a skipped page
counts as not within k. Prints, per label and per label/language: pairs, skipped pairs,
median and p90 distance, and the share of pairs within k = 2, 3, 4, 5.
"""

import json
import os

import evalcore


def main():
    args = evalcore.parse_args(__doc__.splitlines()[0], "print the summaries as JSON")

    root = evalcore.dataset_dir(args.data_dir, "natural-pairs")
    pairs = evalcore.read_jsonl(os.path.join(root, "pairs.jsonl"))
    pages = sorted({p for pair in pairs for p in (pair["a"], pair["b"])})
    records = evalcore.fingerprint_files(args.neardup, [os.path.join(root, p) for p in pages],
                                         args.config)
    fingerprints = {p: evalcore.fingerprint_of(records[os.path.join(root, p)]) for p in pages}
    by_label, by_lang = evalcore.natural_pair_distances(pairs, fingerprints)
    rows = [(name, evalcore.summarize(ds))
            for name, ds in sorted(by_label.items()) + sorted(by_lang.items())]
    if args.json:
        print(json.dumps(dict(rows), indent=1))
    else:
        skipped = sum(1 for f in fingerprints.values() if f is None)
        print(f"natural-pairs: {len(pairs)} pairs, {len(pages)} pages, {skipped} pages skipped")
        print(evalcore.format_table(rows))


if __name__ == "__main__":
    main()

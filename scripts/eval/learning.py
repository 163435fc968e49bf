#!/usr/bin/env python3
"""What learning from the crawl changes (features.weighting tfidf, denoise.site_boilerplate):
each configuration's verdicts over crawl-like streams through `neardup dedup`, one fresh index
each, in a fixed order.

  scripts/eval/learning.py SHARED_DIR [--neardup PATH] [--warmup 200] [--json]

SHARED_DIR holds natural-pairs/, synthetic-dev/ and the extraction benchmark (or
data/neardup/... and data/extraction/scrapinghub-aeb). Configurations: weighting tf or tfidf,
times site_boilerplate off, on (site_min_pages 8, the default) or on at site_min_pages 2.
tfidf indexes are first seeded with `neardup learn` (what an earlier crawl taught): the
synthetic stream's with the extraction benchmark's 181 pages, the others' with those and the
synthetic crawl's 1,000; idf weighs from --warmup learned pages on.
Streams and what is scored:
  synthetic   the 1,000 pages in crawl order (truth.jsonl): the duplicate links' pairwise
              precision and recall against the planted clusters (scripts/summarize.py's rule),
              SimHash alone (the pairs whose tagged, finished fingerprints are within 3 bits),
              and the share of the main text that is template text before and after the
              learned boilerplate is dropped (a line is template text when it is in the main
              text of pages of at least 3 clusters of one site template);
  natural     the 183 pages of natural-pairs, a site's pages together (a site: the host in a
              DAnIEL page's name, else the pages joined by different_same_site pairs, else the
              page's source prefix): near-duplicate pairs found, by SimHash alone (tagged
              fingerprints within 3 bits) and by the index's verdict (the later page tagged a
              duplicate of the earlier one's cluster); different_same_site pairs wrongly matched
              (the same two rules); and the margin: for a near-duplicate pair with another page
              of its site in the stream, the distance to the nearest such page minus the pair's
              own (median, and the share above 0);
  bodies      the 737 unrelated article bodies as text/plain: every duplicate is a false match.
"""

import argparse
import base64
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zlib
from collections import defaultdict

import evalcore

K = 3


def dedup(neardup, config, store, pages, out, seed=None):
    if seed:
        run = subprocess.run([neardup, "learn", "--config", config, "--store", store, "--in", seed,
                              "--no-progress"], capture_output=True, text=True)
        if run.returncode != 0:
            sys.exit(f"neardup learn: exit {run.returncode}\n{run.stderr}")
    run = subprocess.run([neardup, "dedup", "--config", config, "--store", store, "--in", pages,
                          "--out", out, "--no-progress"], capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"neardup dedup: exit {run.returncode}\n{run.stderr}")
    return {r["id"]: r for r in map(json.loads, open(out, encoding="utf-8"))}


def write_pages(path, pages):
    with open(path, "w", encoding="utf-8") as f:
        for page in pages:
            f.write(json.dumps(page) + "\n")


def html_page(id_, url, file):
    body = open(file, "rb").read()
    return {"id": id_, "url": url, "body_base64": base64.b64encode(body).decode("ascii")}


def fingerprint(tagged):
    t = tagged["neardup"]
    return int(t["fingerprint"], 16) if t.get("fingerprint") else None


def root_of(tagged):
    t = tagged["neardup"]
    return t["duplicate_of"] if t["status"] == "duplicate" else tagged["id"]


def index_matched(out, a, b, order):
    """The index's verdict on a pair: the later page tagged a duplicate of the earlier one (or
    of its cluster)."""
    first, later = (a, b) if order[a] < order[b] else (b, a)
    t = out[later]["neardup"]
    return t["status"] == "duplicate" and (t["matched"] == first or
                                           t["duplicate_of"] == root_of(out[first]))


def simhash_matched(out, a, b):
    d = evalcore.distance(fingerprint(out[a]), fingerprint(out[b]))
    return d is not None and d <= K


def synthetic_scores(out, truth, template_lines):
    cluster = {t["id"]: t["cluster"] for t in truth}
    dups = [r for r in out.values() if r["neardup"]["status"] == "duplicate"]
    true_links = sum(1 for r in dups if cluster[r["id"]] == cluster.get(r["neardup"]["duplicate_of"]))
    seen, should = set(), 0
    for t in truth:
        should += t["cluster"] in seen
        seen.add(t["cluster"])
    ids = [t["id"] for t in truth]
    tp = fp = positives = 0
    by_cluster = defaultdict(list)
    for i in ids:
        by_cluster[cluster[i]].append(i)
    positives = sum(len(m) * (len(m) - 1) // 2 for m in by_cluster.values())
    prints = {i: fingerprint(out[i]) for i in ids}
    for x in range(len(ids)):
        for y in range(x + 1, len(ids)):
            d = evalcore.distance(prints[ids[x]], prints[ids[y]])
            if d is not None and d <= K:
                if cluster[ids[x]] == cluster[ids[y]]:
                    tp += 1
                else:
                    fp += 1
    before = after = left = total = 0
    for t in truth:
        tag = out[t["id"]]["neardup"]
        dropped = set(tag.get("site_boilerplate", []))
        for n, line in enumerate(tag.get("text", "").split("\n")):
            is_template = (t["template"], line.strip()) in template_lines
            total += len(line)
            before += len(line) if is_template else 0
            if n not in dropped:
                left += len(line)
                after += len(line) if is_template else 0
    return {"precision": true_links / len(dups) if dups else 1.0,
            "recall": true_links / should if should else 1.0,
            "simhash_precision": tp / (tp + fp) if tp + fp else 1.0,
            "simhash_recall": tp / positives if positives else 1.0,
            "template_before": before / total if total else 0.0,
            "template_after": after / left if left else 0.0,
            "pages_with_boilerplate_dropped": sum(
                1 for r in out.values() if r["neardup"].get("site_boilerplate"))}


def natural_scores(out, pairs, host, order):
    scores = {}
    for label in ("near_duplicate", "different_same_site"):
        chosen = [p for p in pairs if p["label"] == label]
        scores[label] = {
            "pairs": len(chosen),
            "simhash": sum(simhash_matched(out, p["a"], p["b"]) for p in chosen),
            "index": sum(index_matched(out, p["a"], p["b"], order) for p in chosen)}
    # Margins: the nearest other page of the pair's site, outside the pair's near-duplicates.
    group = {}
    for p in pairs:
        if p["label"] == "near_duplicate":
            ga, gb = group.setdefault(p["a"], {p["a"]}), group.setdefault(p["b"], {p["b"]})
            if ga is not gb:
                ga |= gb
                for member in gb:
                    group[member] = ga
    margins = []
    for p in pairs:
        if p["label"] != "near_duplicate":
            continue
        own = evalcore.distance(fingerprint(out[p["a"]]), fingerprint(out[p["b"]]))
        others = [q for q in out if host[q] == host[p["a"]] and q not in group[p["a"]]]
        near = [evalcore.distance(fingerprint(out[x]), fingerprint(out[q]))
                for q in others for x in (p["a"], p["b"])]
        near = [d for d in near if d is not None]
        if own is not None and near:
            margins.append(min(near) - own)
    margins.sort()
    scores["margin_pairs"] = len(margins)
    scores["margin_median"] = evalcore.percentile(margins, 50)
    scores["margin_positive"] = sum(1 for m in margins if m > 0) / len(margins) if margins else None
    return scores


def natural_hosts(root, pairs, pages):
    parent = {p: p for p in pages}

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for p in pairs:
        if p["label"] == "different_same_site":
            parent[find(p["a"])] = find(p["b"])
    host = {}
    for p in pages:
        name = os.path.basename(p)
        m = re.match(r"daniel__\d+_(.+)_[0-9a-f]{8}\.html$", name)
        host[p] = m.group(1) if m else None
    # A site joined by different_same_site pairs takes the host of one of its DAnIEL pages.
    by_root = defaultdict(list)
    for p in pages:
        by_root[find(p)].append(p)
    for members in by_root.values():
        known = sorted(host[m] for m in members if host[m])
        for m in members:
            if not host[m]:
                host[m] = known[0] if known else (os.path.basename(find(m)).split("__")[0] + "-" +
                                                  str(zlib.crc32(find(m).encode()) % 10 ** 6) + ".site")
    return host


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("shared_dir")
    ap.add_argument("--neardup", default=evalcore.default_neardup())
    ap.add_argument("--warmup", type=int, default=200)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()

    synthetic = evalcore.dataset_dir(args.shared_dir, "synthetic-dev")
    natural = evalcore.dataset_dir(args.shared_dir, "natural-pairs")
    aeb = None
    for candidate in (os.path.join(args.shared_dir, "extraction", "scrapinghub-aeb"),
                      os.path.join(args.shared_dir, "data", "extraction", "scrapinghub-aeb")):
        if os.path.isdir(candidate):
            aeb = candidate
    if aeb is None:
        sys.exit(f"extraction/scrapinghub-aeb not found under {args.shared_dir}")

    work = tempfile.mkdtemp(prefix="neardup-learning-")
    try:
        truth = evalcore.read_jsonl(os.path.join(synthetic, "truth.jsonl"))
        write_pages(os.path.join(work, "synthetic.jsonl"),
                    [html_page(t["id"], t["url"], os.path.join(synthetic, "pages", t["id"] + ".html"))
                     for t in truth])
        aeb_pages = [html_page("aeb-" + f[:12], "https://aeb" + str(i % 40) + ".example/" + f,
                               os.path.join(aeb, "html", f))
                     for i, f in enumerate(sorted(os.listdir(os.path.join(aeb, "html"))))]
        write_pages(os.path.join(work, "seed-aeb.jsonl"), aeb_pages)
        shutil.copyfile(os.path.join(work, "seed-aeb.jsonl"), os.path.join(work, "seed-all.jsonl"))
        with open(os.path.join(work, "seed-all.jsonl"), "a") as f, \
                open(os.path.join(work, "synthetic.jsonl")) as s:
            shutil.copyfileobj(s, f)

        pairs = evalcore.read_jsonl(os.path.join(natural, "pairs.jsonl"))
        pages = sorted({p for pair in pairs for p in (pair["a"], pair["b"])})
        host = natural_hosts(natural, pairs, pages)
        pages.sort(key=lambda p: (host[p], p))
        order = {p: i for i, p in enumerate(pages)}
        write_pages(os.path.join(work, "natural.jsonl"),
                    [html_page(p, "https://" + host[p] + "/" + os.path.basename(p),
                               os.path.join(natural, p)) for p in pages])
        bodies = []
        with gzip.open(os.path.join(synthetic, "source-bodies.jsonl.gz"), "rt", encoding="utf-8") as f:
            for line in f:
                b = json.loads(line)
                bodies.append({"id": b["id"], "url": "body:" + b["id"],
                               "body": "\n".join([b.get("title", "")] + b["paras"]),
                               "content_type": "text/plain; charset=utf-8"})
        write_pages(os.path.join(work, "bodies.jsonl"), bodies)

        configs = [("tf", "off", None), ("tf", "on", 8), ("tf", "on", 2),
                   ("tfidf", "off", None), ("tfidf", "on", 8), ("tfidf", "on", 2)]
        results = []
        template_lines = None
        for weighting, site, min_pages in configs:
            name = f"{weighting}, site {site}" + (f" (min {min_pages})" if min_pages else "")
            config = os.path.join(work, "config.yaml")
            with open(config, "w") as f:
                f.write("output:\n  main_text: all\n")
                f.write(f"features:\n  weighting: {weighting}\n  idf_warmup_pages: {args.warmup}\n")
                if site == "on":
                    f.write(f"denoise:\n  site_boilerplate: true\n  site_min_pages: {min_pages}\n")
            row = {"config": name}
            tfidf = weighting == "tfidf"
            for stream, seed in (("synthetic", "seed-aeb.jsonl"), ("natural", "seed-all.jsonl"),
                                 ("bodies", "seed-all.jsonl")):
                store = os.path.join(work, "store-" + stream)
                shutil.rmtree(store, ignore_errors=True)
                out = dedup(args.neardup, config, store, os.path.join(work, stream + ".jsonl"),
                            os.path.join(work, stream + "-out.jsonl"),
                            os.path.join(work, seed) if tfidf else None)
                shutil.rmtree(store, ignore_errors=True)
                if stream == "synthetic":
                    if template_lines is None:
                        template_lines = set()
                        clusters = defaultdict(set)
                        for t in truth:
                            for line in out[t["id"]]["neardup"].get("text", "").split("\n"):
                                if line.strip():
                                    clusters[(t["template"].replace("-amp", ""), line.strip())].add(t["cluster"])
                        template_lines = {k for k, v in clusters.items() if len(v) >= 3}
                        template_lines = {(tpl + suffix, line) for tpl, line in template_lines
                                          for suffix in ("", "-amp")}
                    row["synthetic"] = synthetic_scores(out, truth, template_lines)
                elif stream == "natural":
                    row["natural"] = natural_scores(out, pairs, host, order)
                else:
                    row["bodies"] = {"pages": len(out), "duplicates": sum(
                        1 for r in out.values() if r["neardup"]["status"] == "duplicate")}
            results.append(row)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    if args.json:
        print(json.dumps(results, indent=1))
        return
    print("| config | natural SimHash | natural combined | diff-same-site SimHash / combined | "
          "margin median (>0) | synthetic P / R | synthetic SimHash P / R | template text before → "
          "after | bodies matched |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in results:
        n, s, b = r["natural"], r["synthetic"], r["bodies"]
        nd, ds = n["near_duplicate"], n["different_same_site"]
        print(f"| {r['config']} | {nd['simhash']}/{nd['pairs']} | {nd['index']}/{nd['pairs']} | "
              f"{ds['simhash']} / {ds['index']} of {ds['pairs']} | {n['margin_median']} "
              f"({n['margin_positive']:.2f} of {n['margin_pairs']}) | {s['precision']:.3f} / "
              f"{s['recall']:.3f} | {s['simhash_precision']:.3f} / {s['simhash_recall']:.3f} | "
              f"{100 * s['template_before']:.3f} % → {100 * s['template_after']:.3f} % "
              f"({s['pages_with_boilerplate_dropped']} pages) | {b['duplicates']}/{b['pages']} |")


if __name__ == "__main__":
    main()

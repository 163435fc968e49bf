#!/usr/bin/env python3
"""Writes N synthetic crawled pages as JSONL (docs/records.md) with planted near-duplicates.

Each page is an HTML article with boilerplate (nav, footer) around a few paragraphs drawn from a
seeded vocabulary (about 1.5 KB a page: the development broker keeps only about 5 MB per
partition). About --dup-rate of the pages copy an earlier page's article with a few words
changed (a near-duplicate) or unchanged under a new URL (an exact duplicate); with
--truncate-rate, that share of those copies keeps only the article's first paragraphs and the
first sentences of the next (a truncated copy, which the MinHash signature finds). With
--site-notices, every article ends with its site's own notice (the same on every page of the
site: what denoise.site_boilerplate learns). The field
"cluster" names the original article: producing with it as the Kafka key keeps near-duplicates in
one partition, so the verdicts do not depend on how partitions interleave. Deterministic for a
given --seed.
"""
import argparse
import json
import random
import sys

SYLLABLES = ["ka", "lo", "mi", "ne", "ru", "ta", "vo", "shi", "den", "par", "qua", "zel", "ost",
             "ber", "fin", "gal", "hum", "jor", "lek", "mun", "pri", "sol", "tur", "wex"]


def vocabulary(rng, size):
    words = set()
    while len(words) < size:
        words.add("".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4))))
    return sorted(words)


def article(rng, words):
    paragraphs = []
    for _ in range(rng.randint(2, 3)):
        sentences = []
        for _ in range(rng.randint(3, 4)):
            sentence = " ".join(rng.choice(words) for _ in range(rng.randint(8, 14)))
            sentences.append(sentence.capitalize() + ".")
        paragraphs.append(" ".join(sentences))
    return paragraphs


def mutate(rng, paragraphs, words, changes):
    tokens = [p.split(" ") for p in paragraphs]
    for _ in range(changes):
        p = rng.randrange(len(tokens))
        i = rng.randrange(len(tokens[p]))
        tokens[p][i] = rng.choice(words)
    return [" ".join(t) for t in tokens]


def truncate(paragraphs):
    """The first paragraphs and the first half of the next one's sentences (about 2/3)."""
    keep = max(1, len(paragraphs) - 1)
    last = paragraphs[keep - 1].split(". ")
    return paragraphs[:keep - 1] + [". ".join(last[:max(1, len(last) * 2 // 3)]).rstrip(".") + "."]


def html(title, paragraphs, site, notice=False):
    if notice:
        paragraphs = paragraphs + [f"Published by {site} under licence. Found a mistake? Select "
                                   f"it and press Ctrl+Enter to tell the {site} editors."]
    body = "".join(f"<p>{p}</p>\n" for p in paragraphs)
    return (f"<!doctype html><html><head><meta charset=\"utf-8\"><title>{title}</title></head>"
            f"<body><nav><a href=\"/\">{site} home</a> <a href=\"/news\">news</a></nav>\n"
            f"<article><h1>{title}</h1>\n{body}</article>\n"
            f"<footer>Copyright {site}. All rights reserved.</footer></body></html>")


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--count", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--dup-rate", type=float, default=0.3)
    parser.add_argument("--truncate-rate", type=float, default=0.0)
    parser.add_argument("--site-notices", action="store_true")
    parser.add_argument("--out", default="-")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    words = vocabulary(rng, 3000)
    articles = []
    out = sys.stdout if args.out == "-" else open(args.out, "w", encoding="utf-8")
    for n in range(args.count):
        site = f"site{rng.randrange(20)}.example"
        if articles and rng.random() < args.dup_rate:
            cluster = rng.randrange(len(articles))
            paragraphs = mutate(rng, articles[cluster], words, rng.choice([0, 1]))
            if args.truncate_rate and rng.random() < args.truncate_rate:
                paragraphs = truncate(paragraphs)
        else:
            cluster = len(articles)
            paragraphs = article(rng, words)
            articles.append(paragraphs)
        title = " ".join(paragraphs[0].split(" ")[:5])
        page = {"url": f"https://{site}/page/{args.seed}/{n}", "body": html(title, paragraphs, site, args.site_notices),
                "content_type": "text/html; charset=utf-8", "fetched_at": 1700000000000 + n,
                "cluster": f"c{args.seed}-{cluster}"}
        out.write(json.dumps(page) + "\n")
    if out is not sys.stdout:
        out.close()


if __name__ == "__main__":
    main()

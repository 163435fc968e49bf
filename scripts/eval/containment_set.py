#!/usr/bin/env python3
"""Generates the containment development set: pages whose main text is a part of an earlier
page's (excerpts, teasers), pages that hold an earlier page inside a longer text (quotes),
light edits of each, and unrelated pages of the same sites as negatives.

    scripts/eval/containment_set.py DATA_DIR OUT_DIR [--seed 1] [--per-kind 12]

DATA_DIR holds synthetic-dev/ (the data root or a directory above it): its article bodies
(source-bodies.jsonl.gz) are the texts, and its pages of the original articles are the frames
(site templates: nav, feeds, ads, footer), the article's paragraphs replaced by the case's.
Every page is written in UTF-8 (legacy-charset frames are decoded and declared anew).

OUT_DIR gets:
  pages/<id>.html   the pages
  pages.jsonl       the stream in the order a crawler sees it (neardup dedup's input: url, id,
                    body_base64)
  truth.jsonl       one row per page: id, kind, role (source, derived, negative), source (the id
                    of the page it was made from, or null), relation (what the later page of the
                    two should say: "contained_in" the earlier, or "contains" the earlier; null
                    for sources and negatives), share (the share of the smaller text's words
                    that the larger one holds, by construction), edited, lang, template

Kinds (each plain and with light edits, "+edit": about one word in twenty changed by a typo, a
dropped word or a word of the same text, one character in forty in Chinese and Japanese):
  excerpt10 .. excerpt70  consecutive paragraphs making about 10/30/50/70 % of the article's
                          words, in another site's frame
  teaser                  the first sentences of the article (about 25 words) and "Read more"
  quote                   the whole of a short article inside a longer, unrelated one
Half of the plain excerpts and teasers come before their article in the stream (the article
then "contains" them); every other derived page comes after (it is "contained_in" it, or for
quotes "contains" it).
Negatives: an unrelated article in the frame of each derived page (the same site and day, so
the same boilerplate), and pages quoting one long paragraph of a source (they share that
paragraph and nothing else: not contained, as the synthetic set's hn_shared_quote).

Deterministic for a seed. Python standard library only."""

import argparse
import base64
import gzip
import html
import json
import os
import random
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from evalcore import dataset_dir  # noqa: E402

PYTHON_CODECS = {"iso-8859-1": "cp1252", "gbk": "gb18030", "gb2312": "gb18030",
                 "gb18030": "gb18030", "shift_jis": "cp932", "euc-jp": "euc_jp",
                 "windows-1251": "cp1251", "koi8-r": "koi8_r", "utf-8": "utf-8"}
READ_MORE = {"en": "Read more", "ru": "Читать далее", "zh": "阅读全文", "ja": "続きを読む"}
CJK = ("zh", "ja")
# The languages of the cases in turn, about as the body pool has them (en 350, zh 199, ru 170,
# ja 18).
LANG_CYCLE = ("en", "zh", "ru", "en", "zh", "ru", "en", "ja")
EXCERPTS = (10, 30, 50, 70)
PARAGRAPH = re.compile(r"<p(?:\s[^>]*)?>(.*?)</p>", re.S)
CHARSET = re.compile(r'(<meta[^>]*charset=)["\']?[A-Za-z0-9_-]+["\']?', re.I)


def words(text, lang):
    """Words for the shares: characters in Chinese and Japanese, else whitespace words."""
    if lang in CJK:
        return [c for c in text if not c.isspace()]
    return text.split()


def load_frames(root, bodies_by_paragraph):
    """The original pages whose article paragraphs can be found: (template, lang, html, span,
    title) with span the [start, end) of the article's paragraphs in the html."""
    frames = []
    for line in open(os.path.join(root, "truth.jsonl"), encoding="utf-8"):
        t = json.loads(line)
        if t["op"] != "original":
            continue
        raw = open(os.path.join(root, "pages", t["id"] + ".html"), "rb").read()
        page = raw.decode(PYTHON_CODECS.get(t["charset"], "utf-8"), errors="replace")
        found = []
        for m in PARAGRAPH.finditer(page):
            text = html.unescape(re.sub(r"<[^>]+>", "", m.group(1))).strip()
            body = bodies_by_paragraph.get(text)
            if body is not None:
                found.append((m.start(), m.end(), body))
        if not found:
            continue
        body = max({b for _, _, b in found}, key=lambda b: sum(x == b for _, _, x in found))
        spans = [(s, e) for s, e, b in found if b == body]
        if len(spans) < 3:
            continue
        title = re.search(r"<title>(.*?)</title>", page, re.S)
        frames.append({"template": t["template"], "lang": t["lang"], "html": page,
                       "span": (spans[0][0], spans[-1][1]),
                       "title": title.group(1) if title else "", "body": body})
    return frames


def render(frame, title, paragraphs, blockquote=None):
    """The frame with its article replaced: title and paragraphs (blockquote: (at, paragraphs)
    inserted as a quotation before paragraph `at`)."""
    page = frame["html"]
    start, end = frame["span"]
    items = [f"<p>{html.escape(p, quote=False)}</p>" for p in paragraphs]
    if blockquote is not None:
        at, quoted = blockquote
        block = "<blockquote>" + "".join(
            f"<p>{html.escape(p, quote=False)}</p>" for p in quoted) + "</blockquote>"
        items.insert(at, block)
    page = page[:start] + "\n".join(items) + page[end:]
    page = CHARSET.sub(r'\1"utf-8"', page)
    page = re.sub(r'(<meta name="description" content=")[^"]*', lambda m: m.group(1) +
                  html.escape(paragraphs[0][:120]), page)
    old = frame["title"]
    new = html.escape(title, quote=False)
    if old:
        page = page.replace(old, new)
    page = re.sub(r"(<h1[^>]*>).*?(</h1>)", lambda m: m.group(1) + new + m.group(2), page,
                  count=1, flags=re.S)
    return page


def light_edit(text, lang, rng):
    """About one word in twenty (one character in forty in Chinese and Japanese) changed."""
    if lang in CJK:
        chars = list(text)
        for i in range(len(chars)):
            if rng.random() < 1 / 40 and not chars[i].isspace():
                j = min(len(chars) - 1, i + 1)
                chars[i], chars[j] = chars[j], chars[i]
        return "".join(chars)
    tokens = text.split(" ")
    out = []
    for w in tokens:
        if rng.random() >= 1 / 20 or len(w) < 2:
            out.append(w)
            continue
        choice = rng.randrange(3)
        if choice == 0 and len(w) >= 4:  # a typo: two letters swapped
            i = rng.randrange(1, len(w) - 2)
            out.append(w[:i] + w[i + 1] + w[i] + w[i + 2:])
        elif choice == 1:  # a word dropped
            continue
        else:  # a word of the same text instead
            out.append(rng.choice(tokens))
    return " ".join(out)


def sentences(paragraph, lang):
    if lang in CJK:
        return [s for s in re.split(r"(?<=[。！？])", paragraph) if s]
    return [s for s in re.split(r"(?<=[.!?])\s+", paragraph) if s]


def teaser(body, rng):
    """The first sentences, about 25 words (60 characters), cut inside the first paragraph."""
    lang = body["lang"]
    want = 60 if lang in CJK else 25
    out = []
    for s in sentences(body["paras"][0], lang):
        out.append(s)
        if len(words(" ".join(out), lang)) >= want:
            break
    text = ("" if lang in CJK else " ").join(out)
    if text.strip() == body["paras"][0].strip():  # the whole paragraph: cut inside it
        ws = text.split(" ") if lang not in CJK else list(text)
        cut = max(1, int(len(ws) * 0.6))
        text = (" " if lang not in CJK else "").join(ws[:cut])
    return text.rstrip() + " … " + READ_MORE[lang]


def excerpt(body, percent, rng):
    """Consecutive paragraphs holding about `percent` % of the words, never all of them."""
    paras, lang = body["paras"], body["lang"]
    sizes = [len(words(p, lang)) for p in paras]
    total, want = sum(sizes), sum(sizes) * percent / 100
    best = None
    for i in range(len(paras)):
        got = 0
        for j in range(i, len(paras)):
            got += sizes[j]
            if j - i + 1 == len(paras):
                break
            score = abs(got - want)
            if best is None or score < best[0] or (score == best[0] and rng.random() < 0.5):
                best = (score, i, j + 1)
            if got > want:
                break
    _, i, j = best
    return paras[i:j], sum(sizes[i:j]) / total


def generate(data_dir, out_dir, seed=1, per_kind=12):
    root = dataset_dir(data_dir, "synthetic-dev")
    with gzip.open(os.path.join(root, "source-bodies.jsonl.gz"), "rt", encoding="utf-8") as f:
        bodies = [json.loads(line) for line in f]
    by_paragraph = {}
    for i, b in enumerate(bodies):
        for p in b["paras"]:
            by_paragraph.setdefault(p.strip(), i)
    frames = load_frames(root, by_paragraph)
    # A frame's own article is replaced in every page made from it, so its text is free to be a
    # case's like any other body's.
    rng = random.Random(seed)
    langs = sorted({f["lang"] for f in frames})
    frames_of = {lang: [f for f in frames if f["lang"] == lang] for lang in langs}
    free = {lang: [i for i, b in enumerate(bodies) if b["lang"] == lang] for lang in langs}
    for lang in langs:
        rng.shuffle(free[lang])

    def take(lang, test):
        for n, i in enumerate(free[lang]):
            if test(bodies[i]):
                return bodies[free[lang].pop(n)]
        return None

    def long_enough(b, n_words):
        return len(b["paras"]) >= 4 and len(words(" ".join(b["paras"]), b["lang"])) >= n_words

    pages, truth = [], []  # stream order

    def add(page_id, frame, title, paras, role, kind, source, relation, share, edited,
            blockquote=None):
        pages.append((page_id, frame, title, paras, blockquote))
        truth.append({"id": page_id, "kind": kind, "role": role, "source": source,
                      "relation": relation, "share": share, "edited": edited,
                      "lang": frame["lang"], "template": frame["template"]})

    def two_frames(lang):
        a = rng.choice(frames_of[lang])
        others = [f for f in frames_of[lang] if f["template"] != a["template"]] or \
            [f for f in frames_of[lang] if f is not a]
        return a, rng.choice(others)

    kinds = [f"excerpt{p}" for p in EXCERPTS] + ["teaser", "quote"]
    n = 0
    for kind in kinds:
        for edited in (False, True):
            for case in range(per_kind):
                lang = LANG_CYCLE[(case + n) % len(LANG_CYCLE)]
                if not frames_of.get(lang):
                    continue
                n += 1
                minimum = 400 if lang in CJK else 150
                body = take(lang, lambda b: long_enough(b, minimum if kind != "quote" else 0)
                            and (kind != "quote" or len(b["paras"]) <= 8))
                if body is None:
                    continue
                src_frame, frame = two_frames(lang)
                cid = f"c{n:03d}"
                src_id, der_id, neg_id = f"{cid}-source", f"{cid}-{kind}", f"{cid}-negative"
                edit = (lambda t: light_edit(t, lang, rng)) if edited else (lambda t: t)
                source_words = len(words(" ".join(body["paras"]), lang))
                if kind == "quote":
                    host = take(lang, lambda b: len(words(" ".join(b["paras"]), lang))
                                >= 2 * source_words and len(b["paras"]) >= 4)
                    if host is None:
                        continue
                    at = len(host["paras"]) // 2
                    paras = host["paras"]
                    quoted = [edit(p) for p in body["paras"]]
                    host_words = len(words(" ".join(paras), lang))
                    share = 1.0  # all of the source is in the later page
                    add(src_id, src_frame, body["title"], body["paras"], "source", kind, None,
                        None, None, False)
                    add(der_id, frame, host["title"], paras, "derived", kind, src_id,
                        "contains", round(share, 3), edited, blockquote=(at, quoted))
                    truth[-1]["host_share"] = round(source_words / (source_words + host_words), 3)
                else:
                    if kind == "teaser":
                        paras = [edit(teaser(body, rng))]
                        share = round(len(words(paras[0], lang)) / source_words, 3)
                    else:
                        cut, share = excerpt(body, int(kind[len("excerpt"):]), rng)
                        paras = [edit(p) for p in cut]
                        share = round(share, 3)
                    title = body["title"] if kind == "teaser" else edit(body["title"])
                    derived_first = not edited and case % 2 == 1
                    if derived_first:
                        add(der_id, frame, title, paras, "derived", kind, src_id, None, share,
                            edited)
                        add(src_id, src_frame, body["title"], body["paras"], "source", kind,
                            None, None, None, False)
                        truth[-1].update(relation="contains", source=der_id, share=share)
                        truth[-2].update(role="derived_first")
                    else:
                        add(src_id, src_frame, body["title"], body["paras"], "source", kind,
                            None, None, None, False)
                        add(der_id, frame, title, paras, "derived", kind, src_id,
                            "contained_in", share, edited)
                other = take(lang, lambda b: len(b["paras"]) >= 2)
                if other is not None:
                    add(neg_id, frame, other["title"], other["paras"], "negative",
                        "same_site", None, None, None, False)
    # Pages that quote one long paragraph of a source and are otherwise their own.
    sources = [t for t in truth if t["role"] == "source"]
    for k, t in enumerate(sources[::4]):
        lang = t["lang"]
        body = next(p for p in pages if p[0] == t["id"])
        long_paragraph = max(body[3], key=lambda p: len(words(p, lang)))
        host = take(lang, lambda b: len(b["paras"]) >= 3)
        if host is None:
            continue
        _, frame = two_frames(lang)
        add(f"q{k:03d}-quotes-one-paragraph", frame, host["title"], host["paras"], "negative",
            "quote_one_paragraph", t["id"], None, None, False,
            blockquote=(1, [long_paragraph]))
        truth[-1]["shares_paragraph_with"] = t["id"]

    os.makedirs(os.path.join(out_dir, "pages"), exist_ok=True)
    with open(os.path.join(out_dir, "pages.jsonl"), "w", encoding="utf-8") as stream:
        for page_id, frame, title, paras, blockquote in pages:
            page = render(frame, title, paras, blockquote)
            data = page.encode("utf-8")
            with open(os.path.join(out_dir, "pages", page_id + ".html"), "wb") as f:
                f.write(data)
            url = f"https://{frame['template']}.example/c/{page_id}.html"
            stream.write(json.dumps({"url": url, "id": page_id,
                                     "body_base64": base64.b64encode(data).decode("ascii")})
                         + "\n")
    with open(os.path.join(out_dir, "truth.jsonl"), "w", encoding="utf-8") as f:
        for t in truth:
            f.write(json.dumps(t, ensure_ascii=False) + "\n")
    return truth


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data_dir")
    parser.add_argument("out_dir")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--per-kind", type=int, default=12,
                        help="cases per kind and edit (default 12)")
    args = parser.parse_args()
    truth = generate(args.data_dir, args.out_dir, args.seed, args.per_kind)
    counts = {}
    for t in truth:
        key = (t["role"], t["kind"] + ("+edit" if t["edited"] else ""))
        counts[key] = counts.get(key, 0) + 1
    print(f"{len(truth)} pages in {args.out_dir}")
    for (role, kind), count in sorted(counts.items()):
        print(f"  {role:14} {kind:22} {count}")


if __name__ == "__main__":
    main()

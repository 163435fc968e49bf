"""The neardup package: fingerprints, extraction, comparison, configuration and index lookups,
checked against the `neardup` command where it answers the same question."""
import base64
import concurrent.futures
import gzip
import inspect
import json
import os
import re

import pytest

import neardup


def test_fingerprint_is_a_64_bit_simhash_with_sketch_and_charset(page):
    fp = neardup.fingerprint(page("a"))
    assert not fp.skipped and fp.skip_reason is None
    assert fp.hex == f"{fp.fingerprint:016x}"
    assert 0 <= fp.fingerprint < 2**64
    assert fp.scheme == neardup.Config.default().scheme
    assert len(fp.sketch) == 128 and all(0 <= v < 2**16 for v in fp.sketch)
    assert (fp.charset, fp.charset_source) == ("windows-1252", "meta")  # <meta> iso-8859-1
    assert fp.feature_count >= 16


def test_fingerprint_agrees_with_the_command(page, pages, cli):
    out, _ = cli("fingerprint", pages / "a.html", pages / "c.html")
    for name, line in zip("ac", out):
        fp = neardup.fingerprint(page(name))
        assert fp.hex == line["fingerprint"]
        assert "".join(f"{v:04x}" for v in fp.sketch) == line["minhash"]
        assert "".join(f"{v:04x}" for v in fp.sketch_upper) == line["minhash_upper"]
        assert fp.scheme == line["scheme"]
        assert fp.charset == line["charset"]
        assert fp.feature_count == line["features"]


def test_str_is_decoded_as_utf8_whatever_the_page_declares(page):
    assert neardup.fingerprint(page("a").decode("utf-8")).hex == neardup.fingerprint(page("a")).hex
    text = "<meta charset=windows-1252><p>" + " ".join(f"Größe{i} Maß{i}" for i in range(40)) + "</p>"
    as_text, as_bytes = neardup.fingerprint(text), neardup.fingerprint(text.encode("cp1252"))
    assert (as_text.charset, as_text.charset_source) == ("utf-8", "http")
    assert (as_bytes.charset, as_bytes.charset_source) == ("windows-1252", "meta")
    assert as_text.hex == as_bytes.hex


def test_bytes_like_bodies_give_the_same_fingerprint(page):
    expected = neardup.fingerprint(page("b")).hex
    assert neardup.fingerprint(bytearray(page("b"))).hex == expected
    assert neardup.fingerprint(memoryview(page("b"))).hex == expected


def test_skipped_pages_say_why_and_have_no_fingerprint():
    empty = neardup.fingerprint(b"")
    assert empty.skipped and empty.skip_reason == "empty_body"
    assert empty.fingerprint is None and empty.hex is None and empty.sketch == []
    assert empty.sketch_upper == []
    short = neardup.fingerprint(b"<html><body><p>Too short.</p></body></html>")
    assert short.skip_reason == "low_content" and short.skip_detail
    binary = neardup.fingerprint(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4, "image/png")
    assert binary.skip_reason == "not_text"


def test_wrong_body_type_is_a_type_error():
    with pytest.raises(TypeError, match="html must be bytes or str"):
        neardup.fingerprint(12)


def test_extract_gives_title_and_main_text_as_the_command(page, pages, cli):
    title, text = neardup.extract(page("a"))
    assert title and len(text) > 500
    out, _ = cli("extract", pages / "a.html")
    assert (title, text) == (out[0]["title"], out[0]["text"])
    assert neardup.extract(b"") == ("", "")


def test_extract_skips_a_body_over_max_body_bytes_as_fingerprint_does(page):
    small = neardup.Config.from_yaml("input:\n  max_body_bytes: 1KiB\n")
    body = page("a")
    assert len(body) > 1024
    assert neardup.fingerprint(body, config=small).skip_reason == "too_large"
    for html in (body, body.decode("utf-8"), bytearray(body), memoryview(body)):
        assert neardup.extract(html, config=small) == ("", "")
    assert neardup.extract(body[:1024], config=small) != ("", "")
    # The default limit, 10 MiB: a body one byte over it is not decoded at all.
    big = b"<p>" + b"x" * (10 * 1024 * 1024 - 2)
    assert neardup.fingerprint(big).skip_reason == "too_large"
    assert neardup.extract(big) == ("", "")


def test_compare_finds_the_near_duplicate_pair_only(page):
    same = neardup.compare(page("a"), page("b"))
    assert same.comparable and same.is_duplicate
    assert same.method in ("simhash", "minhash", "both")
    different = neardup.compare(page("a"), page("c"))
    assert different.comparable and not different.is_duplicate and different.method is None
    assert different.distance > same.distance


def test_compare_agrees_with_the_command(page, pages, cli):
    for other in ("b", "c"):
        out, code = cli("compare", pages / "a.html", pages / f"{other}.html")
        result = neardup.compare(page("a"), page(other))
        assert result.is_duplicate == (code == 0) == (out[0]["verdict"] == "near_duplicate")
        assert result.distance == out[0]["distance"]
        assert result.similarity == pytest.approx(out[0]["similarity"])
        assert result.shares_band == out[0]["shares_band"]
        assert result.method == out[0].get("method")
        assert result.a_in_b is None and "containment" not in out[0]  # off by default


def test_compare_says_which_text_holds_the_other_as_the_command_does(page, pages, cli, tmp_path):
    config_file = tmp_path / "containment.yaml"
    config_file.write_text("containment:\n  enabled: true\n")
    config = neardup.Config.load(str(config_file))
    assert config.scheme == neardup.Config.default().scheme  # not a scheme setting
    for other in ("b", "c"):
        out, _ = cli("compare", "--config", config_file, pages / "a.html", pages / f"{other}.html")
        result = neardup.compare(page("a"), page(other), config=config)
        assert result.a_in_b == pytest.approx(out[0]["containment"]["a_in_b"])
        assert result.b_in_a == pytest.approx(out[0]["containment"]["b_in_a"])
        assert result.paragraphs_shared == out[0]["containment"]["paragraphs_shared"]
        assert result.contained == out[0].get("contained")
    same = neardup.compare(page("a"), page("b"), config=config)
    assert same.a_in_b > 0.9 and same.contained in ("a_in_b", "b_in_a")
    assert neardup.compare(page("a"), page("c"), config=config).contained is None


def test_compare_takes_fingerprints_and_a_skipped_page_is_not_comparable(page):
    a, b = neardup.fingerprint(page("a")), neardup.fingerprint(page("b"))
    assert neardup.compare(a, b).distance == neardup.compare(page("a"), page("b")).distance
    skipped = neardup.compare(a, b"")
    assert not skipped.comparable and not skipped.is_duplicate and skipped.distance is None


# Page a with one word changed: 2 bits from a, estimated similarity 0.96.
def edited(page):
    return page("a").replace(b"He was arrested in April", b"He was detained in April", 1)


STRICT = "dedup:\n  max_distance: 1\n  min_similarity: 0.99\n"


def test_compare_uses_the_configs_thresholds(page):
    loose = neardup.compare(page("a"), edited(page))
    assert loose.is_duplicate and loose.method == "both" and loose.distance == 2
    strict = neardup.Config.from_yaml(STRICT)
    assert strict.scheme == neardup.Config.default().scheme  # thresholds are not the scheme
    assert not neardup.compare(page("a"), edited(page), config=strict).is_duplicate


def test_config_from_yaml_load_and_errors(page, tmp_path):
    no_minhash = neardup.Config.from_yaml("minhash:\n  enabled: false\n")
    assert not no_minhash.minhash_enabled and no_minhash.scheme != neardup.Config.default().scheme
    assert neardup.fingerprint(page("a"), config=no_minhash).sketch == []
    path = tmp_path / "neardup.yaml"
    path.write_text("dedup:\n  max_distance: 2\n")
    loaded = neardup.Config.load(path)
    assert loaded.max_distance == 2 and loaded.settings()["dedup.max_distance"] == "2"
    assert neardup.Config.from_yaml(loaded.to_yaml()) == loaded
    with pytest.raises(ValueError, match=r"features\.ngrams: unknown key"):
        neardup.Config.from_yaml("features:\n  ngrams: 2\n")
    with pytest.raises(ValueError, match="missing.yaml"):
        neardup.Config.load(tmp_path / "missing.yaml")


def test_fingerprints_of_another_scheme_are_refused(page):
    no_minhash = neardup.Config.from_yaml("minhash:\n  enabled: false\n")
    a = neardup.fingerprint(page("a"), config=no_minhash)
    with pytest.raises(ValueError, match="scheme"):
        neardup.compare(a, page("b"))


def test_threads_give_the_same_fingerprints_as_one(page):
    bodies = [page(name) for name in "abc"] * 8
    serial = [neardup.fingerprint(body).hex for body in bodies]
    with concurrent.futures.ThreadPoolExecutor(4) as pool:
        assert list(pool.map(lambda body: neardup.fingerprint(body).hex, bodies)) == serial


def test_index_lookup_finds_the_stored_near_duplicate_without_inserting(page, index_dir):
    with neardup.Index(index_dir, read_only=True) as index:
        assert len(index) == 2
        verdict = index.lookup(page("b"))
        assert verdict.status == "duplicate" and verdict.is_duplicate
        assert verdict.matched == "a" and verdict.duplicate_of == "a"
        assert verdict.method in ("simhash", "minhash", "both")
        assert verdict.distance == neardup.compare(page("a"), page("b")).distance
        # The page's own stored copy is a match like any other.
        assert index.lookup(neardup.fingerprint(page("c"))).matched == "c"
        unique = index.lookup("<p>" + " ".join(f"token{i} word{i * 7}" for i in range(300)) + "</p>")
        assert unique.status == "unique" and unique.matched is None and unique.distance is None
        skipped = index.lookup(b"")
        assert skipped.status == "skipped" and skipped.reason == "empty_body"
        assert len(index) == 2


def test_index_find_returns_the_stored_page(page, index_dir):
    index = neardup.Index(str(index_dir), read_only=True)
    stored = index.find("a")
    assert stored.id == "a" and stored.cluster == "a"
    assert stored.hex == neardup.fingerprint(page("a")).hex
    # The index keeps the low 8 bits of each value (b-bit minwise hashing).
    assert stored.sketch == [v & 0xff for v in neardup.fingerprint(page("a")).sketch]
    assert stored.verdict.status == "unique" and stored.first_seen_ms > 0
    assert index.find("nothing") is None
    index.close()
    with pytest.raises(ValueError, match="closed"):
        index.find("a")


def test_index_explain_gives_the_show_explain_object(page, index_dir, cli):
    with neardup.Index(index_dir, read_only=True) as index:
        explained = index.explain("a", with_id="c")
        shown, _ = cli("show", "--json", "--explain", "--store", index_dir, "a", "--with", "c")
        assert explained == shown[0]
        assert explained["a"]["id"] == "a" and explained["b"]["id"] == "c"
        differ = int(index.find("a").hex, 16) ^ int(index.find("c").hex, 16)
        assert explained["simhash"]["distance"] == bin(differ).count("1")
        assert explained["stored"] == {"matched": False}
        with pytest.raises(KeyError, match="name the page to compare it with"):
            index.explain("a")  # the first page of its cluster, and nothing named
        with pytest.raises(KeyError, match="nothing: no live page"):
            index.explain("a", with_id="nothing")


def test_index_lookup_with_thresholds_of_a_config(page, index_dir):
    with neardup.Index(index_dir, read_only=True) as index:
        assert index.lookup(edited(page)).duplicate_of == "a"
        strict = neardup.Config.from_yaml(STRICT)
        assert index.lookup(edited(page), config=strict).status == "unique"
        assert index.lookup(neardup.fingerprint(edited(page)), config=strict).status == "unique"
        with pytest.raises(ValueError, match="max_distance"):
            index.lookup(page("b"), config=neardup.Config.from_yaml(
                "dedup:\n  max_distance: 6\nstore:\n  design_k: 6\n"))


def test_index_that_does_not_exist_is_file_not_found_when_read_only(tmp_path):
    with pytest.raises(FileNotFoundError, match="no index"):
        neardup.Index(tmp_path / "none", read_only=True)
    assert not os.path.exists(tmp_path / "none")


def test_an_index_refuses_pages_of_a_scheme_that_learns_from_the_crawl(page):
    index = neardup.Index()
    for yaml in ("features:\n  weighting: tfidf\n", "denoise:\n  site_boilerplate: true\n"):
        learning = neardup.Config.from_yaml(yaml)
        for call in (lambda: index.insert("a", page("a"), config=learning),
                     lambda: index.query(page("a"), config=learning),
                     lambda: index.insert("a", neardup.fingerprint(page("a"), config=learning),
                                          config=learning)):
            with pytest.raises(ValueError, match="learns from the crawl"):
                call()
    assert len(index) == 0


def test_an_index_in_memory_takes_inserts_and_answers_queries(page):
    index = neardup.Index()
    assert index.in_memory and not index.read_only and len(index) == 0
    first = index.insert("a", page("a"))
    assert first.status == "unique" and not first.is_duplicate
    assert not index.is_duplicate(page("c"))
    copy = index.insert("b", page("b"))
    assert copy.is_duplicate and copy.duplicate_of == "a" and copy.matched == "a"
    assert copy.method in ("simhash", "minhash", "both")
    assert index.insert("c", neardup.fingerprint(page("c"))).status == "unique"
    assert index.insert("empty", b"").status == "skipped"  # skipped pages are not stored
    assert len(index) == 3 and "b" in index and "empty" not in index and 7 not in index
    assert index.query(edited(page)).duplicate_of == "a"
    assert index.is_duplicate(edited(page))
    assert index.find("b").cluster == "a"
    # The same id and page again: its first verdict; nothing new is stored.
    assert index.insert("b", page("b")).duplicate_of == "a" and len(index) == 3
    assert index.remove("a") and not index.remove("a") and "a" not in index
    assert index.query(page("a")).matched == "b"  # a's copy is still there
    directory = index.path
    assert os.path.isdir(directory)
    index.close()
    assert not os.path.exists(directory)
    with pytest.raises(ValueError, match="closed"):
        index.query(page("a"))


def test_an_index_with_containment_says_what_holds_a_page(page):
    config = neardup.Config.from_yaml("containment:\n  enabled: true\n")
    index = neardup.Index(config=config)
    first = index.insert("a", page("a"))
    assert first.contained_in is None and first.paragraphs["seen"] == 0
    assert first.paragraphs["total"] > 5
    # The article's first paragraphs alone, under another frame: contained in it.
    paragraphs = re.findall(r"<p>.*?</p>", page("a").decode(), re.S)[:4]
    excerpt = ("<html><head><title>Quoted</title></head><body><article>" +
               "".join(paragraphs) + "</article></body></html>")
    quoted = index.insert("q", excerpt.encode())
    assert quoted.contained_in is not None and quoted.contained_in[0] == "a", quoted
    assert quoted.paragraphs["first"] == ["a"]
    assert index.query(excerpt.encode()).contained_in[0] == "a"
    assert neardup.Index().insert("a", page("a")).paragraphs is None  # off by default


def test_an_index_on_disk_keeps_its_pages_and_reads_beside_no_other_writer(page, tmp_path):
    with neardup.Index(tmp_path / "store") as index:
        index.insert("a", page("a"))
    with neardup.Index(tmp_path / "store") as index:
        assert index.insert("b", page("b")).duplicate_of == "a"
    with neardup.Index(tmp_path / "store", read_only=True) as reader:
        assert len(reader) == 2 and reader.query(page("b")).matched in ("a", "b")
        with pytest.raises(neardup.StoreError, match="read-only"):
            reader.insert("c", page("c"))
    with pytest.raises(ValueError, match="read_only needs the path"):
        neardup.Index(read_only=True)


def test_a_read_only_index_sees_newer_pages_after_refresh(page, cli, tmp_path):
    store = tmp_path / "store"

    def dedup(name):
        cli("dedup", "--store", store, "--in", "-", "--out", "-",
            stdin=(json.dumps({"url": name, "id": name, "body": page(name).decode()}) + "\n").encode())

    dedup("a")
    with neardup.Index(store, read_only=True) as index:
        assert not index.is_duplicate(page("c"))
        dedup("c")  # another process writes meanwhile
        assert len(index) == 2  # the newest count
        assert not index.is_duplicate(page("c"))  # the snapshot of opening
        index.refresh()
        assert index.query(page("c")).matched == "c"


def test_the_index_gives_the_verdicts_of_neardup_dedup_over_the_sample_crawl(cli, pages, tmp_path):
    crawl = pages.parent / "crawl.jsonl.gz"
    tagged, _ = cli("dedup", "--store", tmp_path / "store", "--in", crawl, "--out", "-")
    index = neardup.Index()
    for line in gzip.open(crawl, "rt", encoding="utf-8"):
        record = json.loads(line)
        verdict = index.insert(record["id"], base64.b64decode(record["body_base64"]),
                               record.get("content_type", ""))
        expected = tagged.pop(0)["neardup"]
        assert (verdict.status, verdict.duplicate_of, verdict.matched, verdict.method) == (
            expected["status"], expected.get("duplicate_of"), expected.get("matched"),
            expected.get("method")), record["id"]
    assert not tagged


def test_wrong_arguments_raise_short_errors_that_never_quote_the_page(page):
    body = page("a")
    index = neardup.Index()
    for call, message in [
        (lambda: neardup.fingerprint(body, 5), "content_type must be str, not int"),
        (lambda: neardup.fingerprint(body, config="x.yaml"),
         "config must be a neardup.Config or None, not str"),
        (lambda: neardup.compare(body, body, b"text/html"), "content_type must be str, not bytes"),
        (lambda: neardup.extract(body, contenttype="text/html"),
         "extract() takes (html, content_type='', config=None), not (bytes, contenttype=str)"),
        (lambda: index.insert(body),
         "Index.insert() takes (id, page, content_type='', config=None), not (bytes)"),
        (lambda: index.insert(7, body), "id must be str, not int"),
        (lambda: index.query(body, body), "content_type must be str, not bytes"),
    ]:
        with pytest.raises(TypeError) as raised:
            call()
        assert str(raised.value) == message
    with pytest.raises(ValueError, match="id must not be empty"):
        index.insert("", body)


def test_the_documentation_is_in_the_module():
    assert "insert()" in neardup.Index.__doc__
    assert str(inspect.signature(neardup.fingerprint)) == "(html, content_type='', config=None)"
    assert str(inspect.signature(neardup.Index.insert)) == "(id, page, content_type='', config=None)"
    for name in ("insert", "query", "is_duplicate", "find", "remove", "refresh", "close"):
        assert len(getattr(neardup.Index, name).__doc__) > 40, name
    assert "first-seen page" in neardup.Verdict.duplicate_of.__doc__

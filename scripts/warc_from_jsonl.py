#!/usr/bin/env python3
"""Writes JSONL pages (docs/records.md) as a WARC file with warcio, one request and one response
record per page after a warcinfo record, so that `neardup dedup --warc` can be checked against
`neardup dedup --in` on the same pages.

    python3 scripts/warc_from_jsonl.py samples/crawl.jsonl.gz crawl.warc.gz
    python3 scripts/warc_from_jsonl.py --no-gzip samples/crawl.jsonl.gz crawl.warc

Each response carries the page's bytes (body_base64, or body as UTF-8) after an HTTP/1.1 200
header block whose Content-Type is the page's content_type, or text/html when it has none;
WARC-Target-URI is the url and WARC-Date the fetched_at (whole seconds, WARC 1.0; milliseconds,
WARC 1.1). Records are gzipped one member each (as crawlers write them) unless --no-gzip.
Needs warcio (PyPI): scripts/install-deps.sh installs it into the virtual environment .venv, so
run it with .venv/bin/python3.
"""
import argparse
import base64
import datetime
import gzip
import io
import json
import os
import sys
import urllib.parse

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter


def warc_date(ms):
    when = datetime.datetime.fromtimestamp(ms / 1000, tz=datetime.timezone.utc)
    if ms % 1000:
        return when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z", "1.1"
    return when.strftime("%Y-%m-%dT%H:%M:%SZ"), "1.0"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("jsonl", help="JSONL pages, plain or gzip")
    parser.add_argument("warc", help="the WARC file to write")
    parser.add_argument("--no-gzip", action="store_true", help="write an uncompressed WARC")
    args = parser.parse_args()

    with open(args.jsonl, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    pages = [json.loads(line) for line in data.decode("utf-8").splitlines() if line.strip()]

    with open(args.warc, "wb") as out:
        writer = WARCWriter(out, gzip=not args.no_gzip)
        writer.write_record(writer.create_warcinfo_record(
            os.path.basename(args.warc), {"software": "scripts/warc_from_jsonl.py (warcio)", "format": "WARC 1.0"}))
        for page in pages:
            if "body_base64" in page:
                body = base64.b64decode(page["body_base64"])
            else:
                body = page.get("body", "").encode("utf-8")
            warc_headers = {}
            version = "1.0"
            if isinstance(page.get("fetched_at"), int):
                warc_headers["WARC-Date"], version = warc_date(page["fetched_at"])
            writer.warc_version = "WARC/" + version
            request = writer.create_warc_record(
                page["url"], "request", payload=io.BytesIO(b""),
                http_headers=StatusAndHeaders(f"GET {urllib.parse.urlsplit(page['url']).path or '/'} HTTP/1.1",
                                              [("User-Agent", "neardup-test")],
                                              is_http_request=True),
                warc_headers_dict=dict(warc_headers))
            http_headers = StatusAndHeaders(
                "200 OK", [("Content-Type", page.get("content_type") or "text/html"),
                           ("Content-Length", str(len(body)))], protocol="HTTP/1.1")
            response = writer.create_warc_record(
                page["url"], "response", payload=io.BytesIO(body), http_headers=http_headers,
                warc_headers_dict=dict(warc_headers))
            writer.write_record(request)
            writer.write_record(response)
    print(f"{args.warc}: {len(pages)} pages", file=sys.stderr)


if __name__ == "__main__":
    main()

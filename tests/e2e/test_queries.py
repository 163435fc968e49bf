#!/usr/bin/env python3
"""Questions over HTTP (metrics.queries, docs/operations.md): while neardupd applies pages,
POST /v1/lookup answers what each page would be tagged without inserting it, and
GET /v1/pages/{id} shows a stored page and its cluster, and GET /v1/explain?id= says why a
duplicate matched the page it names — agreeing with the tagged output topic. A record that is
not a page is a 400 naming the error; an unknown id a 404.

  test_queries.py [COUNT]"""
import json
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

import harness as h

COUNT = int(sys.argv[1]) if len(sys.argv) > 1 else 600


def request(url, data=None, content_type="application/json"):
    """(status, parsed JSON body)."""
    req = urllib.request.Request(url, data=data, method="POST" if data is not None else "GET",
                                 headers={"Content-Type": content_type} if data else {})
    try:
        with urllib.request.urlopen(req, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test(workdir):
    broker = h.Broker(workdir, ["pages:2", "tagged:2", "dead:1"])
    pages, urls = h.generate_pages(workdir, COUNT, seed=3, truncate_rate=0.2)
    port = h.free_port()
    config = h.write_config(workdir, broker.bootstrap, metrics_listen=f"127.0.0.1:{port}",
                            queries=True)
    daemon = h.Daemon(workdir, config)
    url = f"http://127.0.0.1:{port}"
    daemon.metrics_url()
    with open(pages) as f:
        records = [json.loads(line) for line in f]
    for record in records:
        record.setdefault("id", record["url"])  # the id the daemon gives a page without one

    # While the daemon applies the pages: lookups answer (and insert nothing: checked below).
    h.produce(broker.bootstrap, "pages", pages)
    during = 0
    start = time.monotonic()
    for record in records[:200]:
        status, answer = request(url + "/v1/lookup", json.dumps(record).encode())
        h.check(status == 200 and answer["neardup"]["status"] in ("unique", "duplicate"),
                f"/v1/lookup during the run: {status} {answer}")
        during += 1
    h.log(f"{during} lookups while the daemon applied pages, "
          f"{during / (time.monotonic() - start):.0f}/s")

    outputs = h.wait_for_outputs(broker.bootstrap, "tagged", set(urls), timeout=120)
    tags = {}
    for record in outputs:
        value = record["value"]
        tags[value.get("id", value["url"])] = value["neardup"]
    h.check(len(tags) == COUNT, f"{len(tags)} tagged pages, want {COUNT}")

    # Every stored page: a lookup of it finds its cluster; GET shows it in that cluster.
    duplicates = skipped = 0
    for record in records:
        tag = tags[record["id"]]
        root = tag.get("duplicate_of", record["id"])
        status, answer = request(url + "/v1/lookup", json.dumps(record).encode())
        h.check(status == 200 and answer["id"] == record["id"], f"lookup {status} {answer}")
        got = answer["neardup"]
        if tag["status"] == "skipped":  # not stored: skipped alike, and not found
            h.check(got == tag, f"lookup of skipped page {record['id']}: {got}, tagged {tag}")
            status, _ = request(url + "/v1/pages/" + urllib.parse.quote(record["id"], safe=""))
            h.check(status == 404, f"GET of a skipped page: {status}")
            skipped += 1
            continue
        h.check(got["status"] == "duplicate" and got["duplicate_of"] == root
                and got["fingerprint"] == tag["fingerprint"],
                f"lookup of stored page {record['id']}: {got}, tagged {tag}")
        status, shown = request(url + "/v1/pages/" + urllib.parse.quote(record["id"], safe=""))
        h.check(status == 200 and shown["page"]["cluster"] == root
                and shown["page"]["status"] == tag["status"]
                and record["id"] in [m["id"] for m in shown["cluster"]["members"]],
                f"GET /v1/pages/{record['id']}: {status} {shown}, tagged {tag}")
        if tag["status"] == "duplicate":
            status, explained = request(url + "/v1/explain?" + urllib.parse.urlencode(
                {"id": record["id"]}))
            h.check(status == 200 and explained["b"]["id"] == tag["matched"]
                    and explained["stored"]["matched"]
                    and explained["stored"]["method"] == tag["method"]
                    and explained["simhash"]["distance"] == tag["distance"],
                    f"GET /v1/explain?id={record['id']}: {status} {explained}, tagged {tag}")
        duplicates += tag["status"] == "duplicate"
    h.log(f"{COUNT} pages ({duplicates} duplicates, {skipped} skipped): every lookup names the "
          "page's cluster, every GET shows the page in it, every duplicate's explanation names "
          "the page it matched with its method and distance")

    # Bare HTML with its own Content-Type.
    html = next(r for r in records if "body" in r and tags[r["id"]]["status"] != "skipped")
    status, answer = request(url + "/v1/lookup", html["body"].encode(),
                             html.get("content_type", "text/html; charset=utf-8"))
    h.check(status == 200 and answer["neardup"]["status"] == "duplicate"
            and answer["neardup"]["duplicate_of"] == tags[html["id"]].get("duplicate_of", html["id"]),
            f"HTML lookup: {status} {answer}")

    status, answer = request(url + "/v1/lookup", b"{not json")
    h.check(status == 400 and answer["error"] == "not_json", f"bad record: {status} {answer}")
    status, answer = request(url + "/v1/pages/no-such-page")
    h.check(status == 404 and answer["error"] == "not_found", f"unknown id: {status} {answer}")
    status, answer = request(url + "/v1/explain?id=no-such-page")
    h.check(status == 404 and answer["error"] == "not_found", f"explain unknown id: {status} {answer}")
    status, answer = request(url + "/v1/explain")
    h.check(status == 400 and answer["error"] == "bad_request", f"explain without id: {status}")
    h.log("HTML lookup ok; a bad record is 400 not_json; an unknown id 404 (also to explain)")

    # Nothing was inserted by the lookups: documents == pages tagged unique or duplicate.
    stored = sum(1 for t in tags.values() if t["status"] in ("unique", "duplicate"))
    documents = h.metric(h.scrape(url), "neardup_index_documents")
    h.check(documents == stored, f"index documents {documents}, want {stored}")
    h.log(f"index holds {documents:.0f} documents = the pages tagged: lookups inserted nothing")
    daemon.stop()


if __name__ == "__main__":
    h.run(test, "queries")

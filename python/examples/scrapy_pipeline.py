"""A Scrapy item pipeline that drops near-duplicate pages, by neardup's rule.

Each item carries the page's raw body (and, best, its Content-Type); the pipeline fingerprints
it on Twisted's thread pool (neardup releases the GIL, so pages are fingerprinted in parallel
while the reactor goes on), then, back on the reactor thread, drops it when it is a
near-duplicate of a page kept earlier in this crawl or of a page in an existing neardup index
(read-only: e.g. the index of a `neardup dedup` run or of neardupd).

    # settings.py
    ITEM_PIPELINES = {"scrapy_pipeline.NearDuplicatePipeline": 300}
    NEARDUP_CONFIG = "/etc/neardup/neardup.yaml"   # optional: the defaults otherwise
    NEARDUP_INDEX = "/var/lib/neardup"             # optional: also match an existing index
    NEARDUP_BODY_FIELD = "body"                    # the item field holding the raw bytes

    # the spider
    def parse(self, response):
        yield {"url": response.url, "body": response.body,
               "content_type": response.headers.get("Content-Type", b"").decode("latin-1")}

Kept items get a "neardup" field: {"fingerprint": hex, "scheme": ...}, or {"skipped": reason}
for pages without enough text to compare (they are kept). Dropped items are logged by Scrapy
with the page they duplicate.
"""
from collections import defaultdict

from itemadapter import ItemAdapter
from scrapy.exceptions import DropItem, NotConfigured
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet.threads import deferToThread

import neardup


class NearDuplicatePipeline:
    def __init__(self, config, index_path=None, body_field="body"):
        self.config = config
        self.index_path = index_path
        self.body_field = body_field
        self.index = None
        settings = config.settings()
        # Candidates are found as the index finds them, then confirmed by neardup.compare():
        # pages within max_distance bits agree on at least one of max_distance + 1 blocks of
        # their fingerprints (pigeonhole), and MinHash matches share an LSH band.
        self.blocks = config.max_distance + 1
        self.bands = int(settings["minhash.bands"]) if config.minhash_enabled else 0
        self.rows = int(settings["minhash.rows"])
        self.by_key = defaultdict(list)  # block or band key -> [(url, Fingerprint)]

    @classmethod
    def from_crawler(cls, crawler):
        settings = crawler.settings
        if not settings.getbool("NEARDUP_ENABLED", True):
            raise NotConfigured("NEARDUP_ENABLED is false")
        path = settings.get("NEARDUP_CONFIG")
        config = neardup.Config.load(path) if path else neardup.Config.default()
        return cls(config, settings.get("NEARDUP_INDEX"), settings.get("NEARDUP_BODY_FIELD", "body"))

    def open_spider(self, spider=None):
        if self.index_path:
            self.index = neardup.Index(self.index_path)

    def close_spider(self, spider=None):
        if self.index is not None:
            self.index.close()

    async def process_item(self, item, spider=None):
        adapter = ItemAdapter(item)
        body = adapter.get(self.body_field)
        if body is None:
            raise DropItem(f"no {self.body_field!r} field to compare")
        content_type = adapter.get("content_type") or ""
        fp = await maybe_deferred_to_future(
            deferToThread(neardup.fingerprint, body, content_type, self.config))
        return self._keep_or_drop(fp, adapter)

    def _keep_or_drop(self, fp, adapter):
        """Back on the reactor thread, the only one that reads or changes by_key."""
        item = adapter.item
        url = adapter.get("url", "")
        if fp.skipped:
            adapter["neardup"] = {"skipped": fp.skip_reason}
            return item
        if self.index is not None:
            verdict = self.index.lookup(fp)
            if verdict.is_duplicate:
                raise DropItem(f"near-duplicate of {verdict.duplicate_of} in the index "
                               f"({verdict.method}, distance {verdict.distance})")
        keys = self._keys(fp)
        for first_url, first in {id(c[1]): c for key in keys for c in self.by_key[key]}.values():
            comparison = neardup.compare(fp, first, config=self.config)
            if comparison.is_duplicate:
                raise DropItem(f"near-duplicate of {first_url} ({comparison.method}, "
                               f"distance {comparison.distance})")
        for key in keys:
            self.by_key[key].append((url, fp))
        adapter["neardup"] = {"fingerprint": fp.hex, "scheme": fp.scheme}
        return item

    def _keys(self, fp):
        width = 64 // self.blocks
        keys = [("block", b, (fp.fingerprint >> (b * width)) & ((1 << width) - 1))
                for b in range(self.blocks - 1)]
        keys.append(("block", self.blocks - 1, fp.fingerprint >> ((self.blocks - 1) * width)))
        sketch = fp.sketch
        keys += [("band", b, tuple(sketch[b * self.rows:(b + 1) * self.rows]))
                 for b in range(self.bands if sketch else 0)]
        return keys

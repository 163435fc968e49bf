"""A Scrapy item pipeline that drops near-duplicate pages, by neardup's rule.

Each item carries the page's raw body (and, best, its Content-Type); the pipeline fingerprints
it on Twisted's thread pool (neardup releases the GIL, so pages are fingerprinted in parallel
while the reactor goes on), then, back on the reactor thread, inserts it into a neardup.Index
and drops it when the index says it is a near-duplicate of a page seen earlier in the crawl —
or, optionally, of a page in another index opened read-only (e.g. neardupd's).

    # settings.py
    ITEM_PIPELINES = {"scrapy_pipeline.NearDuplicatePipeline": 300}
    NEARDUP_CONFIG = "/etc/neardup/neardup.yaml"   # optional: the defaults otherwise
    NEARDUP_INDEX = "crawl-index"                  # optional: keep the crawl's pages there
                                                   # (across crawls); in memory otherwise
    NEARDUP_REFERENCE_INDEX = "/var/lib/neardup"   # optional: also match this index, read-only
    NEARDUP_BODY_FIELD = "body"                    # the item field holding the raw bytes

    # the spider
    def parse(self, response):
        yield {"url": response.url, "body": response.body,
               "content_type": response.headers.get("Content-Type", b"").decode("latin-1")}

Kept items get a "neardup" field: {"fingerprint": hex, "scheme": ...}, or {"skipped": reason}
for pages without enough text to compare (they are kept). Dropped items are logged by Scrapy
with the page they duplicate.
"""
from itemadapter import ItemAdapter
from scrapy.exceptions import DropItem, NotConfigured
from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet.threads import deferToThread

import neardup


class NearDuplicatePipeline:
    def __init__(self, config, index_path=None, reference_path=None, body_field="body"):
        self.config = config
        self.index_path = index_path
        self.reference_path = reference_path
        self.body_field = body_field
        self.index = self.reference = None

    @classmethod
    def from_crawler(cls, crawler):
        settings = crawler.settings
        if not settings.getbool("NEARDUP_ENABLED", True):
            raise NotConfigured("NEARDUP_ENABLED is false")
        path = settings.get("NEARDUP_CONFIG")
        config = neardup.Config.load(path) if path else neardup.Config.default()
        return cls(config, settings.get("NEARDUP_INDEX"), settings.get("NEARDUP_REFERENCE_INDEX"),
                   settings.get("NEARDUP_BODY_FIELD", "body"))

    def open_spider(self, spider=None):
        self.index = neardup.Index(self.index_path, config=self.config)
        if self.reference_path:
            self.reference = neardup.Index(self.reference_path, read_only=True, config=self.config)

    def close_spider(self, spider=None):
        for index in (self.index, self.reference):
            if index is not None:
                index.close()

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
        """Back on the reactor thread: pages go into the index in the order they arrive."""
        item = adapter.item
        if fp.skipped:
            adapter["neardup"] = {"skipped": fp.skip_reason}
            return item
        if self.reference is not None:
            verdict = self.reference.query(fp)
            if verdict.is_duplicate:
                raise DropItem(f"near-duplicate of {verdict.duplicate_of} in the reference index "
                               f"({verdict.method}, distance {verdict.distance})")
        verdict = self.index.insert(adapter.get("url") or fp.hex, fp)
        if verdict.is_duplicate:
            raise DropItem(f"near-duplicate of {verdict.duplicate_of} ({verdict.method}, "
                           f"distance {verdict.distance})")
        adapter["neardup"] = {"fingerprint": fp.hex, "scheme": fp.scheme}
        return item

"""examples/scrapy_pipeline.py in a real Scrapy crawl of the sample pages (file:// URLs, no
network). Skipped where Scrapy is not installed: it is not a dependency of the package."""
import json
import pathlib
import subprocess
import sys

import pytest

EXAMPLES = pathlib.Path(__file__).resolve().parents[1] / "examples"

CRAWL = """
import json, sys
sys.path.insert(0, sys.argv[1])
import scrapy
from scrapy import signals
from scrapy.crawler import CrawlerProcess

class Pages(scrapy.Spider):
    name = "pages"
    start_urls = sys.argv[2:]

    def parse(self, response):
        yield {"url": response.url, "body": response.body}

process = CrawlerProcess({"ITEM_PIPELINES": {"scrapy_pipeline.NearDuplicatePipeline": 300},
                          "LOG_LEVEL": "ERROR"})
crawler = process.create_crawler(Pages)
kept = []

def scraped(item, response, spider):
    kept.append(item["url"])

crawler.signals.connect(scraped, signal=signals.item_scraped)
process.crawl(crawler)
process.start()
print(json.dumps({"kept": kept, "dropped": crawler.stats.get_value("item_dropped_count", 0)}))
"""


def test_the_pipeline_drops_one_of_the_near_duplicate_pair(pages):
    pytest.importorskip("scrapy")
    urls = [(pages / f"{name}.html").as_uri() for name in "abc"]
    proc = subprocess.run([sys.executable, "-c", CRAWL, str(EXAMPLES), *urls],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.splitlines()[-1])
    assert result["dropped"] == 1
    assert len(result["kept"]) == 2 and urls[2] in result["kept"]

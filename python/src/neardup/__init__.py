"""neardup: near-duplicate web page detection.

The pipeline of the `neardup` command and daemon (charset decoding, main-text extraction,
weighted word features, a 64-bit SimHash and a MinHash sketch) and read-only lookups in a
neardup index, from Python. Calls that run the pipeline or read the index release the GIL.

    >>> import neardup
    >>> fp = neardup.fingerprint(open("page.html", "rb").read())
    >>> fp.hex, fp.scheme, fp.skip_reason
    >>> neardup.compare(a_html, b_html).is_duplicate
    >>> with neardup.Index("/var/lib/neardup") as index:
    ...     index.lookup(html).status
"""
from ._neardup import (
    Comparison,
    Config,
    Fingerprint,
    Index,
    StoredPage,
    StoreError,
    Verdict,
    __version__,
    compare,
    extract,
    fingerprint,
)

__all__ = [
    "Comparison",
    "Config",
    "Fingerprint",
    "Index",
    "StoredPage",
    "StoreError",
    "Verdict",
    "__version__",
    "compare",
    "extract",
    "fingerprint",
]

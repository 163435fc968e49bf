"""neardup: near-duplicate web page detection.

The pipeline of the `neardup` command and daemon (charset decoding, main-text extraction,
weighted word features, a 64-bit SimHash and a MinHash sketch), the comparison rule, and the
index: insert pages and ask about them, in memory or in a store on disk. Calls that run the
pipeline or use the index release the GIL.

    >>> import neardup
    >>> index = neardup.Index()                    # in memory
    >>> index.insert("a", open("a.html", "rb").read()).status
    'unique'
    >>> index.insert("b", open("b.html", "rb").read()).duplicate_of
    'a'
    >>> index.is_duplicate(open("b.html", "rb").read())
    True
    >>> neardup.compare(a_html, b_html).distance
    >>> neardup.fingerprint(a_html).hex

help(neardup.Index), help(neardup.fingerprint), ... have the rest.
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

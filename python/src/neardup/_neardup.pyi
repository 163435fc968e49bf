"""Typed interface of neardup's extension module (python/src/module.cc)."""
import os
from types import TracebackType
from typing import Dict, List, Optional, Tuple, Type, Union

__version__: str

# A page body: bytes are decoded as the page declares (BOM, Content-Type, <meta>, detection);
# a str is already text and is decoded as UTF-8 whatever the page declares.
_Html = Union[bytes, bytearray, memoryview, str]
_PathLike = Union[str, "os.PathLike[str]"]

class StoreError(RuntimeError):
    """An index that cannot be opened or read (not a neardup index, another format, ...)."""

class Config:
    """A validated, immutable neardup configuration (examples/neardup.yaml documents every key)."""

    @staticmethod
    def default() -> Config: ...
    @staticmethod
    def load(path: _PathLike) -> Config:
        """Reads a YAML file. Raises ValueError naming the file, line and key of every error."""
    @staticmethod
    def from_yaml(text: str) -> Config:
        """Parses YAML text. Raises ValueError naming the line and key of every error."""
    @property
    def scheme(self) -> str:
        """The fingerprint scheme id ("s-" and 8 hex digits): equal ids, comparable signatures."""
    @property
    def max_distance(self) -> int: ...
    @property
    def min_similarity(self) -> float: ...
    @property
    def minhash_enabled(self) -> bool: ...
    def settings(self) -> Dict[str, str]:
        """Every key path and its value as canonical text."""
    def to_yaml(self) -> str: ...
    def __eq__(self, other: object) -> bool: ...

class Fingerprint:
    """One page's signatures, or why it was skipped."""

    @property
    def skipped(self) -> bool: ...
    @property
    def fingerprint(self) -> Optional[int]:
        """The 64-bit SimHash; None when skipped."""
    @property
    def hex(self) -> Optional[str]:
        """The SimHash as 16 lower-case hex digits; None when skipped."""
    @property
    def scheme(self) -> str: ...
    @property
    def sketch(self) -> List[int]:
        """The MinHash values (16-bit each); empty when skipped or minhash.enabled is false."""
    @property
    def skip_reason(self) -> Optional[str]:
        """low_content, too_large, empty_body, not_text, ...; None when fingerprinted."""
    @property
    def skip_detail(self) -> Optional[str]: ...
    @property
    def charset(self) -> Optional[str]:
        """The charset the body was decoded from; None when decoding did not happen."""
    @property
    def charset_source(self) -> Optional[str]:
        """bom, http, meta, xml, detected or default."""
    @property
    def feature_count(self) -> int: ...
    @property
    def config(self) -> Config:
        """The configuration the page was fingerprinted under."""

class Comparison:
    """Two pages compared by the index's rule (as `neardup compare`)."""

    @property
    def comparable(self) -> bool:
        """False when either page was skipped (then is_duplicate is False)."""
    @property
    def is_duplicate(self) -> bool: ...
    @property
    def distance(self) -> Optional[int]:
        """The SimHash Hamming distance; None when not comparable."""
    @property
    def similarity(self) -> Optional[float]:
        """The estimated Jaccard similarity of the sketches; None without MinHash."""
    @property
    def shares_band(self) -> bool: ...
    @property
    def method(self) -> Optional[str]:
        """simhash, minhash or both when is_duplicate; else None."""

class Verdict:
    """What the index would answer for a page, without inserting it."""

    @property
    def status(self) -> str:
        """unique, duplicate or skipped."""
    @property
    def is_duplicate(self) -> bool: ...
    @property
    def matched(self) -> Optional[str]:
        """duplicate: the id of the matched stored page."""
    @property
    def duplicate_of(self) -> Optional[str]:
        """duplicate: the id of the first-seen page of matched's cluster."""
    @property
    def distance(self) -> Optional[int]:
        """duplicate: the Hamming distance to matched."""
    @property
    def similarity(self) -> Optional[float]:
        """duplicate: the estimated Jaccard similarity to matched, when both have sketches."""
    @property
    def method(self) -> Optional[str]:
        """duplicate: simhash, minhash or both."""
    @property
    def reason(self) -> Optional[str]:
        """skipped: the pipeline's reason code."""
    @property
    def candidates(self) -> int: ...

class StoredPage:
    """A live page of the index."""

    @property
    def id(self) -> str: ...
    @property
    def doc(self) -> int: ...
    @property
    def scheme(self) -> str: ...
    @property
    def fingerprint(self) -> int: ...
    @property
    def hex(self) -> str: ...
    @property
    def sketch(self) -> List[int]: ...
    @property
    def first_seen_ms(self) -> int: ...
    @property
    def stored_at_ms(self) -> int: ...
    @property
    def verdict(self) -> Verdict:
        """The verdict the page got when it was stored (unique or duplicate)."""
    @property
    def cluster(self) -> str:
        """The id of the first-seen page of its cluster (its own id when unique)."""

class Index:
    """A neardup index opened read-only, beside any process writing to it.

    Queries answer from the snapshot taken when it was opened. Raises FileNotFoundError when
    there is no index at path, StoreError when it cannot be read.
    """

    def __init__(self, path: _PathLike) -> None: ...
    @property
    def path(self) -> str: ...
    def lookup(
        self, page: Union[_Html, Fingerprint], content_type: str = "", config: Optional[Config] = None
    ) -> Verdict:
        """The verdict the index would give the page now; nothing is inserted.

        A body is fingerprinted under config (the default config when None); a Fingerprint
        is used as it is, under its own config unless one of the same scheme is given.
        dedup.max_distance and dedup.min_similarity of that config decide the verdict.
        """
    def find(self, id: str) -> Optional[StoredPage]:
        """The live page stored under id, if any."""
    def __len__(self) -> int:
        """Documents stored (the newest state, not the snapshot)."""
    def close(self) -> None: ...
    def __enter__(self) -> Index: ...
    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        traceback: Optional[TracebackType],
    ) -> None: ...

def fingerprint(html: _Html, content_type: str = "", config: Optional[Config] = None) -> Fingerprint:
    """Runs the pipeline on one page: decode, main text, features, SimHash and MinHash."""

def extract(html: _Html, content_type: str = "", config: Optional[Config] = None) -> Tuple[str, str]:
    """The page's title and main text (paragraphs joined by newlines), as `neardup extract`.

    ("", "") when the body cannot be decoded as text (empty, binary), or is larger than the
    config's input.max_body_bytes (10 MiB by default; fingerprint() skips it as too_large).
    """

def compare(
    a: Union[_Html, Fingerprint],
    b: Union[_Html, Fingerprint],
    content_type: str = "",
    config: Optional[Config] = None,
) -> Comparison:
    """Whether two pages are near-duplicates by the rule of `neardup compare`.

    Bodies are fingerprinted under config (the default when None); both pages must be of one
    scheme. dedup.max_distance and dedup.min_similarity of config (else of a's) decide.
    """

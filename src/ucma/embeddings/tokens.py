"""Offline token counting with the WordPiece tokenizer shipped in ``ucma/embeddings/data``.

The tokenizer is all-MiniLM-L6-v2's (the bert-base-uncased vocabulary, Apache-2.0, see the NOTICE
beside it). Its counts are within about 3% of OpenAI's cl100k on chat text, close enough for
working-memory budgets, and need no download: plain ``tiktoken`` fetches its BPE files at run
time, which UCMA must never do.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from importlib.resources import files
from importlib.resources.abc import Traversable

from tokenizers import Tokenizer

from ucma.embeddings.base import read_verified
from ucma.errors import EmbeddingError, ValidationError
from ucma.lru import LruMap

__all__ = ["TOKENIZER_SHA256", "TokenCounter", "load_tokenizer"]

logger = logging.getLogger(__name__)

#: sha256 of ``data/tokenizer.json``; checked every time the file is loaded.
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"


def _tokenizer_file() -> Traversable:
    """Location of the packaged ``tokenizer.json`` (a function so tests can redirect it)."""
    return files("ucma.embeddings") / "data" / "tokenizer.json"


def load_tokenizer() -> Tokenizer:
    """Load a fresh, verified copy of the packaged tokenizer with padding and truncation off.

    Each call returns a new instance, so callers may configure truncation or padding without
    affecting others. Raises :class:`EmbeddingError` if the file is missing, altered or invalid.
    """
    data = read_verified(_tokenizer_file(), TOKENIZER_SHA256, what="tokenizer.json")
    try:
        tokenizer = Tokenizer.from_str(data.decode("utf-8"))
    except Exception as exc:  # the Rust binding raises plain Exception subclasses
        raise EmbeddingError(f"tokenizer.json could not be parsed: {exc}") from exc
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return tokenizer


class TokenCounter:
    """Counts WordPiece tokens of a text: no special tokens, no truncation, no network.

    ``count("hello world") == 2``; the empty string counts 0. The tokenizer is loaded on first
    use (about 0.1 s) and shared by all threads; counting is thread-safe. The counts of the
    last ``cached`` texts are kept: working memory counts every memory a recall returns,
    and the same memories come back request after request. Raises
    :class:`ValidationError` for a non-``str`` or non-encodable input and
    :class:`EmbeddingError` if the packaged tokenizer is missing or altered.
    """

    def __init__(self, cached: int = 8192) -> None:
        self._tokenizer: Tokenizer | None = None
        self._lock = threading.Lock()
        self._counts: LruMap[str, int] = LruMap(max(cached, 1))

    def count(self, text: str) -> int:
        """Number of tokens in ``text``."""
        _check_text(text, 0)
        if not text:
            return 0
        known = self._counts.get(text)
        if known is None:
            known = len(self._loaded().encode(text, add_special_tokens=False).ids)
            self._counts[text] = known
        return known

    def count_many(self, texts: Sequence[str]) -> list[int]:
        """Number of tokens in each of ``texts``, in order; faster than :meth:`count` in a loop."""
        if isinstance(texts, str | bytes | bytearray):
            raise ValidationError("count_many() takes a sequence of texts; use count() for one")
        batch = list(texts)
        for position, text in enumerate(batch):
            _check_text(text, position)
        if not batch:
            return []
        encodings = self._loaded().encode_batch(batch, add_special_tokens=False)
        return [len(encoding.ids) for encoding in encodings]

    def _loaded(self) -> Tokenizer:
        tokenizer = self._tokenizer
        if tokenizer is None:
            with self._lock:
                if self._tokenizer is None:
                    self._tokenizer = load_tokenizer()
                    logger.debug("token counter loaded the packaged tokenizer")
                tokenizer = self._tokenizer
        return tokenizer


def _check_text(text: object, position: int) -> None:
    if not isinstance(text, str):
        raise ValidationError(
            f"text {position} is {type(text).__name__}, expected str; pass strings only"
        )
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValidationError(
            f"text {position} is not valid Unicode (lone surrogate at {exc.start}); "
            "decode the source with errors='replace' first"
        ) from exc

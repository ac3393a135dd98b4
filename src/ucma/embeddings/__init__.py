"""Text embedders: the :class:`Embedder` contract, the offline default and its wrappers.

Any object with ``model_id``, ``dimension`` and an async ``embed(texts)`` is accepted where an
embedder is (:class:`EmbedderLike`); :func:`as_embedder` wraps it with the same checks.

``LocalEmbedder`` (all-MiniLM-L6-v2 int8 ONNX, 384 dimensions, ``model_id``
``"minilm-l6-v2-int8"``) is the default and needs no network. ``CachedEmbedder`` wraps any
embedder with an LRU and an optional persistent store; ``BatchingEmbedder`` lets concurrent
callers share model calls. ``OpenAIEmbedder`` talks to any
OpenAI-compatible endpoint and is imported on first access, so importing this package never
imports the optional ``openai`` SDK. ``TokenCounter`` counts tokens offline for budgets.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ucma.embeddings.base import Embedder, EmbedderLike, ProtocolEmbedder, as_embedder
from ucma.embeddings.batching import BatchingEmbedder
from ucma.embeddings.cache import CachedEmbedder, CacheStats, EmbeddingCacheStore, text_hash
from ucma.embeddings.local import LocalEmbedder
from ucma.embeddings.tokens import TokenCounter

if TYPE_CHECKING:
    from ucma.embeddings.openai import OpenAIEmbedder

__all__ = [
    "BatchingEmbedder",
    "CacheStats",
    "CachedEmbedder",
    "Embedder",
    "EmbedderLike",
    "EmbeddingCacheStore",
    "LocalEmbedder",
    "OpenAIEmbedder",
    "ProtocolEmbedder",
    "TokenCounter",
    "as_embedder",
    "text_hash",
]


def __getattr__(name: str) -> Any:
    if name == "OpenAIEmbedder":
        from ucma.embeddings.openai import OpenAIEmbedder

        return OpenAIEmbedder
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

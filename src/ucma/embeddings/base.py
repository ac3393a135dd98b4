"""The embedder contract shared by every embedding backend.

An :class:`Embedder` turns texts into float32 rows of unit L2 norm, one row per text, in input
order. Subclasses implement only :meth:`Embedder._embed_texts`; the public :meth:`Embedder.embed`
validates the input before it and checks the output after it, so no backend can hand a zero,
NaN or wrongly shaped vector to the rest of UCMA. A failed check raises
:class:`~ucma.errors.EmbeddingError`; UCMA never substitutes a zero vector.

Subclassing is not required: :class:`EmbedderLike` is the structural protocol (``model_id``,
``dimension`` and an ``embed(texts)`` coroutine), and :func:`as_embedder` wraps any object that
satisfies it in :class:`ProtocolEmbedder`, which applies exactly the same checks.
"""

from __future__ import annotations

import hashlib
import inspect
import logging
import numbers
from abc import ABC, abstractmethod
from collections.abc import Sequence
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ucma.errors import ConfigError, EmbeddingError, UCMAError, ValidationError

__all__ = [
    "Embedder",
    "EmbedderLike",
    "ProtocolEmbedder",
    "as_embedder",
    "check_embeddings",
    "preload",
    "read_verified",
    "validate_texts",
]

logger = logging.getLogger(__name__)

# Rows whose float64 norm is at or below this are treated as zero vectors.
_MIN_NORM = 1e-12


def validate_texts(texts: Sequence[str]) -> list[str]:
    """Return ``texts`` as a list after checking that each is a non-blank, encodable ``str``.

    Raises :class:`ValidationError` for a bare ``str``/``bytes`` (a sequence of characters, almost
    always a caller mistake), a non-``str`` item, an empty or whitespace-only text, or a text that
    cannot be encoded as UTF-8 (lone surrogates).
    """
    if isinstance(texts, str | bytes | bytearray):
        raise ValidationError("embed() takes a sequence of texts; wrap a single text in a list")
    batch = list(texts)
    for position, text in enumerate(batch):
        if not isinstance(text, str):
            raise ValidationError(
                f"text {position} is {type(text).__name__}, expected str; pass strings only"
            )
        if not text.strip():
            raise ValidationError(f"text {position} is empty or whitespace; nothing to embed")
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise ValidationError(
                f"text {position} is not valid Unicode (lone surrogate at {exc.start}); "
                "decode the source with errors='replace' first"
            ) from exc
    return batch


def check_embeddings(vectors: object, *, rows: int, dimension: int, source: str) -> np.ndarray:
    """Return ``vectors`` as a C-contiguous float32 array of unit-norm rows.

    ``vectors`` must convert to a 2-D numeric array of shape ``(rows, dimension)`` with only finite
    values and no zero-norm row; otherwise :class:`EmbeddingError` names ``source`` and the
    defect. Rows are L2-normalised here, so backends that return unnormalised vectors comply.
    """
    try:
        array = np.asarray(vectors, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise EmbeddingError(f"{source} returned vectors that are not numeric arrays") from exc
    if array.shape != (rows, dimension):
        raise EmbeddingError(
            f"{source} returned shape {array.shape}, expected ({rows}, {dimension})"
        )
    if not np.isfinite(array).all():
        bad = sorted({int(i) for i in np.nonzero(~np.isfinite(array))[0]})
        raise EmbeddingError(f"{source} returned non-finite values in rows {bad[:10]}")
    norms = np.linalg.norm(array, axis=1)
    if rows and not (norms > _MIN_NORM).all():
        bad = [int(i) for i in np.nonzero(norms <= _MIN_NORM)[0]]
        raise EmbeddingError(f"{source} returned zero vectors in rows {bad[:10]}")
    normalised = (array / norms[:, None]) if rows else array
    return np.ascontiguousarray(normalised, dtype=np.float32)


def read_verified(resource: Traversable | Path, sha256: str, *, what: str) -> bytes:
    """Return the bytes of a packaged weight or tokenizer file whose sha256 equals ``sha256``.

    The bytes that were hashed are the bytes returned, so the caller loads exactly what was
    verified. A missing, unreadable or altered file raises :class:`EmbeddingError`.
    """
    try:
        data = resource.read_bytes()
    except (OSError, ValueError) as exc:
        raise EmbeddingError(f"{what} is missing or unreadable at {resource}: {exc}") from exc
    digest = hashlib.sha256(data).hexdigest()
    if digest != sha256:
        raise EmbeddingError(
            f"{what} at {resource} has sha256 {digest}, expected {sha256}; "
            "reinstall the package that ships it"
        )
    logger.debug("verified %s (%d bytes, sha256 %s)", what, len(data), digest[:12])
    return data


class Embedder(ABC):
    """Turns texts into unit-length float32 vectors.

    ``model_id`` is a stable identifier of the vector space; caches and stored vectors are keyed
    by it, so two embedders with the same ``model_id`` must produce interchangeable vectors.
    ``dimension`` is the width of every row. Instances are safe to share between tasks and
    threads. ``parallel_calls`` is how many :meth:`embed` calls at once make the most of
    the backend (:class:`~ucma.embeddings.batching.BatchingEmbedder` runs that many).
    """

    model_id: str
    dimension: int
    parallel_calls: int = 1

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts`` into an array of shape ``(len(texts), dimension)``.

        Rows are float32, L2-normalised and in input order; an empty input gives shape
        ``(0, dimension)``. Raises :class:`ValidationError` for bad input (see
        :func:`validate_texts`) and :class:`EmbeddingError` when the backend fails or returns a
        malformed, non-finite or zero vector.
        """
        batch = validate_texts(texts)
        if not batch:
            return np.empty((0, self.dimension), dtype=np.float32)
        vectors = await self._embed_texts(batch)
        return self._checked(vectors, len(batch))

    @abstractmethod
    async def _embed_texts(self, texts: list[str]) -> np.ndarray:
        """Return one vector per text, in order, for a non-empty list of validated texts.

        Backend failures must be raised as :class:`EmbeddingError` (chained with ``from``). The
        result is checked and normalised by :meth:`embed`.
        """

    async def warm_up(self) -> None:  # noqa: B027 - optional hook with a no-op default
        """Load now what the first :meth:`embed` would load (a model, a client), so the
        first call a user makes does not pay for it; idempotent. Services call it in the
        background at start-up."""

    async def aclose(self) -> None:  # noqa: B027 - optional hook with a no-op default
        """Release network clients or other resources; the embedder is unusable afterwards."""

    def _checked(self, vectors: object, rows: int) -> np.ndarray:
        """Apply :func:`check_embeddings` with this embedder's dimension and id."""
        return check_embeddings(
            vectors, rows=rows, dimension=self.dimension, source=f"embedder {self.model_id!r}"
        )


async def preload(embedder: Embedder) -> None:
    """:meth:`Embedder.warm_up` for a background task at start-up: a failure is logged, not
    raised; the first call that needs the model raises it again, with its cause."""
    try:
        await embedder.warm_up()
    except Exception:
        logger.warning("loading the embedding model %r failed", embedder.model_id, exc_info=True)


@runtime_checkable
class EmbedderLike(Protocol):
    """What the engine needs of an embedder; any object with these members plugs in.

    ``embed`` may return any 2-D numeric array-like (a numpy array, a list of lists); it is
    checked and normalised as :meth:`Embedder.embed` checks its backends. ``aclose`` is optional.
    """

    model_id: str
    dimension: int

    async def embed(self, texts: Sequence[str]) -> Any: ...


class ProtocolEmbedder(Embedder):
    """Adapts a duck-typed embedder (:class:`EmbedderLike`) to :class:`Embedder`.

    Input goes through :func:`validate_texts` before the wrapped ``embed`` sees it, the output
    through :func:`check_embeddings` after: a wrong shape, a NaN or a zero vector raises
    :class:`EmbeddingError` naming the embedder. An exception that is not a ``UCMAError`` is
    raised as ``EmbeddingError`` (chained), so callers see one error type whatever the backend.
    """

    def __init__(self, inner: object) -> None:
        self.inner = inner
        self.model_id = _checked_model_id(inner)
        self.dimension = _checked_dimension(inner)

    async def _embed_texts(self, texts: list[str]) -> Any:
        name = f"embedder {type(self.inner).__name__} ({self.model_id!r})"
        try:
            result = self.inner.embed(texts)  # type: ignore[attr-defined]
            if inspect.isawaitable(result):
                result = await result
        except UCMAError:
            raise
        except Exception as exc:
            raise EmbeddingError(f"{name} failed: {type(exc).__name__}: {exc}") from exc
        return result

    async def aclose(self) -> None:
        """Close the wrapped embedder when it has an ``aclose`` (or ``close``) method."""
        for method_name in ("aclose", "close"):
            method = getattr(self.inner, method_name, None)
            if callable(method):
                result = method()
                if inspect.isawaitable(result):
                    await result
                return


def as_embedder(embedder: object) -> Embedder:
    """``embedder`` itself when it is an :class:`Embedder`, else wrapped in
    :class:`ProtocolEmbedder`. Raises :class:`ConfigError` when it lacks a member of
    :class:`EmbedderLike`, saying which."""
    if isinstance(embedder, Embedder):
        return embedder
    if not callable(getattr(embedder, "embed", None)):
        raise ConfigError(
            f"embedder {type(embedder).__name__} has no embed(texts) method; pass an "
            "ucma.embeddings.Embedder or an object with model_id, dimension and "
            "async embed(texts) returning one row per text"
        )
    return ProtocolEmbedder(embedder)


def _checked_model_id(embedder: object) -> str:
    model_id = getattr(embedder, "model_id", None)
    if not isinstance(model_id, str) or not model_id.strip():
        raise ConfigError(
            f"embedder {type(embedder).__name__} needs a model_id: a non-empty string naming "
            f"its vector space (stored vectors and caches are keyed by it), got {model_id!r}"
        )
    return model_id


def _checked_dimension(embedder: object) -> int:
    dimension = getattr(embedder, "dimension", None)
    if isinstance(dimension, bool) or not isinstance(dimension, numbers.Integral) or dimension < 1:
        raise ConfigError(
            f"embedder {type(embedder).__name__} needs a dimension: the positive int width of "
            f"every vector it returns, got {dimension!r}"
        )
    return int(dimension)

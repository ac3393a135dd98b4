"""Embeddings from any OpenAI-compatible ``/v1/embeddings`` endpoint.

One class serves OpenAI, Ollama, vLLM and the llama.cpp server: only ``base_url`` and ``api_key``
differ. The official ``openai`` SDK is an optional dependency (``pip install 'ucma[openai]'``),
imported when an :class:`OpenAIEmbedder` is constructed, never when this module is imported.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import numpy as np

from ucma.embeddings.base import Embedder
from ucma.errors import ConfigError, EmbeddingError
from ucma.openai_client import async_openai_client

if TYPE_CHECKING:
    import httpx

__all__ = ["MAX_BATCH_SIZE", "OpenAIEmbedder"]

logger = logging.getLogger(__name__)

#: Inputs per request the OpenAI API accepts.
MAX_BATCH_SIZE = 2048


class OpenAIEmbedder(Embedder):
    """Embeds through the ``/embeddings`` endpoint of an OpenAI-compatible server.

    ``model_id`` is ``"openai:<model>"``. ``dimension`` must be the width the server returns; a
    response with another width, a missing or duplicated ``index``, a wrong number of vectors,
    an HTTP error, a timeout or an unparseable body raises :class:`EmbeddingError`; no partial
    or zero vectors are ever returned. Texts are sent in requests of at most ``batch_size``
    inputs (2,048 at most, OpenAI's limit; large texts can also hit a per-request token limit,
    so lower it for long documents) and reassembled by ``index``. ``api_key=None`` falls back to
    the ``OPENAI_API_KEY`` environment variable (the SDK's documented behaviour); local servers
    such as Ollama accept any placeholder key. ``http_client`` is used as given and left open by
    :meth:`aclose`; tests pass one built on ``ucma.providers.testing.FakeOpenAIServer``.
    ``max_retries`` is the SDK's own retry count for connection errors, 429 and 5xx responses.
    A service sends up to ``parallel_calls`` requests at once (its calls wait on the network,
    not on this machine's cores), each carrying the texts of all the callers that queued.
    """

    parallel_calls = 4

    def __init__(
        self,
        model: str,
        dimension: int,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        http_client: httpx.AsyncClient | None = None,
        batch_size: int = MAX_BATCH_SIZE,
        timeout: float = 60.0,
        max_retries: int = 2,
    ) -> None:
        if not model or not model.strip():
            raise ConfigError("model must name the embedding model, e.g. 'text-embedding-3-small'")
        if dimension < 1:
            raise ConfigError(f"dimension must be at least 1, got {dimension}")
        if not 1 <= batch_size <= MAX_BATCH_SIZE:
            raise ConfigError(
                f"batch_size must be between 1 and {MAX_BATCH_SIZE}, got {batch_size}"
            )
        if timeout <= 0:
            raise ConfigError(f"timeout must be positive, got {timeout}")
        if max_retries < 0:
            raise ConfigError(f"max_retries must be 0 or more, got {max_retries}")
        self._client = async_openai_client(
            "OpenAIEmbedder",
            key_holder="OpenAIEmbedder",
            api_key=api_key,
            base_url=base_url,
            http_client=http_client,
            timeout=timeout,
            max_retries=max_retries,
        )
        self._owns_http_client = http_client is None
        self.model = model
        self.model_id = f"openai:{model}"
        self.dimension = dimension
        self.batch_size = batch_size
        self.base_url = str(self._client.base_url)

    async def aclose(self) -> None:
        """Close the SDK client's connections unless the HTTP client was passed in."""
        if self._owns_http_client:
            await self._client.close()

    async def _embed_texts(self, texts: list[str]) -> np.ndarray:
        vectors = np.empty((len(texts), self.dimension), dtype=np.float64)
        for start in range(0, len(texts), self.batch_size):
            chunk = texts[start : start + self.batch_size]
            vectors[start : start + len(chunk)] = await self._request(chunk)
        return vectors

    async def _request(self, chunk: list[str]) -> np.ndarray:
        try:
            response = await self._client.embeddings.create(
                model=self.model, input=chunk, encoding_format="float"
            )
        except Exception as exc:  # SDK, httpx and JSON errors alike: the remote boundary
            raise EmbeddingError(
                f"embedding request to {self.base_url} for {self.model!r} failed: {exc}"
            ) from exc
        logger.debug("embedded %d texts with %s", len(chunk), self.model_id)
        return _vectors_from(response, len(chunk), self.dimension, self.model_id)


def _vectors_from(response: Any, count: int, dimension: int, source: str) -> np.ndarray:
    """Rows of a ``CreateEmbeddingResponse`` placed by ``index``; EmbeddingError if malformed."""
    data = getattr(response, "data", None)
    if not isinstance(data, list):
        raise EmbeddingError(f"{source} returned a response without a data list")
    if len(data) != count:
        raise EmbeddingError(f"{source} returned {len(data)} embeddings for {count} inputs")
    vectors = np.empty((count, dimension), dtype=np.float64)
    seen: set[int] = set()
    for item in data:
        index = _field(item, "index")
        if type(index) is not int or not 0 <= index < count or index in seen:
            raise EmbeddingError(f"{source} returned an invalid or repeated index {index!r}")
        seen.add(index)
        try:
            row = np.asarray(_field(item, "embedding"), dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise EmbeddingError(f"{source} returned a non-numeric embedding") from exc
        if row.shape != (dimension,):
            raise EmbeddingError(
                f"{source} returned an embedding of shape {row.shape}, expected ({dimension},); "
                "set dimension to the model's width"
            )
        vectors[index] = row
    return vectors


def _field(item: Any, name: str) -> Any:
    """An attribute of an SDK model, or a key of the raw dict a lenient parse leaves behind."""
    if isinstance(item, dict):
        return item.get(name)
    return getattr(item, name, None)

"""Micro-batching across concurrent callers: the texts of many requests in one model call.

A service answers many requests at once, and each embeds a text or two. Run one model call
per request and the calls contend for the same cores, each paying the model's fixed cost per
call; :class:`BatchingEmbedder` instead queues the texts of every caller and runs at most
``Embedder.parallel_calls`` model calls at once over what has queued (the packaged model:
one per core, each on one thread), so the model's cost is paid once per batch.

There is no waiting window: while a model call slot is free, a caller's texts go to the
model at once. The window is the model calls in progress: the texts of every caller that
arrives while all slots are busy wait, then go together in the next call (up to
``max_batch`` texts). Under light load nothing is delayed; under heavy load batches grow by
themselves.

A call of more than ``max_batch`` texts is spread over several batches. Each batch first
gives every waiting call an equal share of its room, then fills what is left in arrival
order (:func:`plan_batch`), so a large import holds back a query by one batch at most, not
by the whole import; its texts go shortest first, so each of its batches pads little. When
a batch that served several callers fails, each caller's part is embedded again alone, so
one caller's text that the backend refuses fails that caller only.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ucma.embeddings.base import Embedder, validate_texts
from ucma.errors import ConfigError

__all__ = ["BatchingEmbedder", "plan_batch"]

logger = logging.getLogger(__name__)


def plan_batch(remaining: Sequence[int], capacity: int) -> list[int]:
    """How many texts each waiting call gives the next batch of ``capacity`` texts.

    ``remaining`` counts each waiting call's texts not yet sent, in arrival order. Each call
    first gets an equal share of the capacity (at least one text, while room lasts), then
    the room left goes to the calls in arrival order. The shares never exceed a call's
    remaining texts and sum to at most ``capacity``:

    >>> plan_batch([200, 1, 1], 64)
    [62, 1, 1]
    >>> plan_batch([3, 100], 64)
    [3, 61]
    """
    if capacity < 1:
        raise ConfigError(f"a batch holds at least one text, got capacity {capacity}")
    shares = [0] * len(remaining)
    room = capacity
    fair = max(1, capacity // max(1, len(remaining)))
    for index, count in enumerate(remaining):
        take = min(count, fair, room)
        shares[index] = take
        room -= take
    for index, count in enumerate(remaining):
        if room == 0:
            break
        take = min(count - shares[index], room)
        shares[index] += take
        room -= take
    return shares


@dataclass(eq=False, slots=True)
class _Call:
    """One caller's texts, the rows embedded so far and the future its caller awaits.
    Texts go to batches shortest first (``order``), so the batches a large call is spread
    over each hold texts of about one length: the model pads a batch to its longest text."""

    texts: list[str]
    rows: np.ndarray
    future: asyncio.Future[np.ndarray]
    order: np.ndarray
    sent: int = 0
    received: int = 0


@dataclass(slots=True)
class _Part:
    """The texts at ``call.order[start:end]`` in a batch."""

    call: _Call
    start: int
    end: int

    def texts(self) -> list[str]:
        return [self.call.texts[i] for i in self.call.order[self.start : self.end]]


@dataclass(slots=True)
class _Queue:
    """The calls of one event loop waiting for a batch, and the tasks running batches."""

    waiting: list[_Call] = field(default_factory=list)
    drivers: set[asyncio.Task[None]] = field(default_factory=set)


class BatchingEmbedder(Embedder):
    """Wraps ``inner`` so concurrent :meth:`embed` calls share model calls of at most
    ``max_batch`` texts, ``inner.parallel_calls`` model calls at a time (see the module's
    description).

    Same ``model_id`` and ``dimension`` as ``inner``; rows come back to each caller in its
    own input order, exactly as ``inner`` embeds them. A caller that is cancelled leaves
    the queue; texts of it already in a batch are embedded and dropped. Callers on
    different event loops (threads) are batched separately, each loop's with its own.
    ``batches`` and ``texts`` count the model calls made and the texts sent to them.
    """

    def __init__(self, inner: Embedder, *, max_batch: int = 64) -> None:
        if max_batch < 1:
            raise ConfigError(f"max_batch must be at least 1, got {max_batch}")
        self.inner = inner
        self.model_id = inner.model_id
        self.dimension = inner.dimension
        self.max_batch = max_batch
        self.parallel_calls = max(1, int(getattr(inner, "parallel_calls", 1)))
        self.batches = 0
        self.texts = 0
        self._queues: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Queue] = (
            weakref.WeakKeyDictionary()
        )

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        """:meth:`Embedder.embed`, without checking the rows a second time: each batch's
        rows come from ``inner.embed``, which checked and normalised them."""
        batch = validate_texts(texts)
        if not batch:
            return np.empty((0, self.dimension), dtype=np.float32)
        return await self._embed_texts(batch)

    async def warm_up(self) -> None:
        await self.inner.warm_up()

    async def aclose(self) -> None:
        await self.inner.aclose()

    async def _embed_texts(self, texts: list[str]) -> np.ndarray:
        loop = asyncio.get_running_loop()
        queue = self._queues.get(loop)
        if queue is None:
            queue = self._queues[loop] = _Queue()
        rows = np.empty((len(texts), self.dimension), dtype=np.float32)
        lengths = np.fromiter((len(text) for text in texts), dtype=np.int64, count=len(texts))
        call = _Call(texts, rows, loop.create_future(), np.argsort(lengths, kind="stable"))
        queue.waiting.append(call)
        self._more_drivers(loop, queue)
        return await call.future

    def _more_drivers(self, loop: asyncio.AbstractEventLoop, queue: _Queue) -> None:
        """Start a driver when texts wait and a model call slot is free."""
        if queue.waiting and len(queue.drivers) < self.parallel_calls:
            driver = loop.create_task(self._drive(loop, queue), name="ucma-embedding-batches")
            queue.drivers.add(driver)

    async def _drive(self, loop: asyncio.AbstractEventLoop, queue: _Queue) -> None:
        """Run batches while calls wait; then leave (the next call starts a new driver)."""
        parts: list[_Part] = []
        try:
            while True:
                queue.waiting = [c for c in queue.waiting if not c.future.done()]
                if not queue.waiting:
                    return
                parts = self._next_batch(queue)
                self._more_drivers(loop, queue)  # the rest of a large call, on a free slot
                await self._run(parts)
                parts = []
        except BaseException:
            # Only a cancelled driver (the loop shutting down) gets here: no caller may
            # wait for an answer that will not come.
            for call in [*(part.call for part in parts), *queue.waiting]:
                call.future.cancel()
            queue.waiting.clear()
            raise
        finally:
            queue.drivers.discard(asyncio.current_task())

    def _next_batch(self, queue: _Queue) -> list[_Part]:
        """Take the next batch's texts from the waiting calls (:func:`plan_batch`)."""
        shares = plan_batch([len(c.texts) - c.sent for c in queue.waiting], self.max_batch)
        parts = []
        for call, share in zip(queue.waiting, shares, strict=True):
            if share:
                parts.append(_Part(call, call.sent, call.sent + share))
                call.sent += share
        queue.waiting = [c for c in queue.waiting if c.sent < len(c.texts)]
        return parts

    async def _run(self, parts: list[_Part]) -> None:
        """Embed the parts in one model call and hand each caller its rows; when the call
        fails and served several callers, each part again alone."""
        texts = [text for part in parts for text in part.texts()]
        self.batches += 1
        self.texts += len(texts)
        try:
            vectors = await self.inner.embed(texts)
        except Exception as exc:
            if len({id(part.call) for part in parts}) == 1:
                for part in parts:
                    _fail(part.call, exc)
                return
            logger.info(
                "a shared batch of %d texts failed; embedding each caller's alone", len(texts)
            )
            for part in parts:
                if not part.call.future.done():
                    await self._run([part])
            return
        offset = 0
        for part in parts:
            count = part.end - part.start
            _deliver(part, vectors[offset : offset + count])
            offset += count


def _deliver(part: _Part, vectors: np.ndarray) -> None:
    call = part.call
    if call.future.done():
        return  # the caller was cancelled, or another part of its call failed
    call.rows[call.order[part.start : part.end]] = vectors
    call.received += part.end - part.start
    if call.received == len(call.texts):
        call.future.set_result(call.rows)


def _fail(call: _Call, exc: BaseException) -> None:
    if not call.future.done():
        call.future.set_exception(exc)

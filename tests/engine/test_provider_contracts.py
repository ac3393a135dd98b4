"""Duck-typed providers and embedders plug in; a broken one fails with a typed error.

Issue 12 ("Cost and contracts"): an extractor written to the published protocol
crashed ``sleep()`` with a bare TypeError, and an embedder had to subclass
``Embedder``. These tests use a tiny hashing embedder that subclasses nothing.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Sequence
from pathlib import Path

import pytest

from ucma.embeddings import Embedder, ProtocolEmbedder
from ucma.engine import AsyncMemory
from ucma.errors import ConfigError, EmbeddingError, ProviderError
from ucma.lifecycle.clock import SimulatedClock
from ucma.providers.base import ExtractedFact, Providers
from ucma.providers.heuristics import ExtractiveSummarizer, RuleFactExtractor

pytestmark = pytest.mark.anyio

T0 = 1_700_000_000.0
DIMENSION = 64
# Observe reads claims with the rules at once; from this one they read none, so
# any fact about Omar comes from the configured extractor, run by sleep.
POSTCARD = "A postcard came from Omar, postmarked Cairo."


class HashingEmbedder:
    """Bag of hashed words: a structural embedder, not an ``Embedder`` subclass."""

    model_id = "test-hashing-64"
    dimension = DIMENSION

    def __init__(self) -> None:
        self.closed = False

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        rows = []
        for text in texts:
            row = [0.0] * DIMENSION
            for word in re.findall(r"\w+", text.lower()):
                row[int(hashlib.sha256(word.encode()).hexdigest(), 16) % DIMENSION] += 1.0
            rows.append(row)
        return rows

    async def aclose(self) -> None:
        self.closed = True


class BrokenEmbedder(HashingEmbedder):
    """Returns the defect it is built with instead of good vectors."""

    def __init__(self, defect: str) -> None:
        super().__init__()
        self.defect = defect

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        rows = await super().embed(texts)
        if self.defect == "nan":
            rows[0][0] = math.nan
        elif self.defect == "zero":
            rows[0] = [0.0] * DIMENSION
        elif self.defect == "shape":
            rows = [row[:-1] for row in rows]
        else:
            raise RuntimeError("backend down")
        return rows


class OldExtractor:
    """Written before ``reference_time`` existed: ``speaker`` is its only keyword."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []

    async def extract_facts(self, content: str, *, speaker: str = "user") -> list[ExtractedFact]:
        self.calls.append((content, speaker))
        return [ExtractedFact("Omar", "lives_in", "Cairo", "Omar lives in Cairo")]


class BadExtractor:
    def __init__(self, result: object) -> None:
        self.result = result

    async def extract_facts(self, content: str, **_: object) -> object:
        if isinstance(self.result, Exception):
            raise self.result
        return self.result


class BadSummarizer:
    async def summarize(self, content: str, max_tokens: int = 150) -> object:
        return 42


class BadImportance:
    async def classify_importance(self, content: str, source: str) -> float:
        return 1.5


def _memory(path: Path, **kwargs: object) -> AsyncMemory:
    kwargs.setdefault("embedder", HashingEmbedder())
    kwargs.setdefault("clock", SimulatedClock(T0))
    return AsyncMemory(path, user_id="alice", **kwargs)  # type: ignore[arg-type]


async def test_a_duck_typed_embedder_stores_and_recalls(tmp_path: Path) -> None:
    embedder = HashingEmbedder()
    async with _memory(tmp_path / "m.db", embedder=embedder) as memory:
        assert isinstance(memory.embedder, Embedder)
        assert memory.embedder.model_id == "test-hashing-64"
        await memory.observe("Remember that the staging database is rebuilt on Sundays.")
        await memory.observe("Remember that Priya prefers tea over coffee in the morning.")
        hits = await memory.remember("when is the staging database rebuilt", limit=1)
        assert hits and "staging database" in hits[0].content
    assert not embedder.closed  # the caller's embedder stays the caller's to close


@pytest.mark.parametrize("defect", ["nan", "zero", "shape", "raises"])
async def test_a_duck_typed_embedder_with_bad_vectors_stores_nothing(
    tmp_path: Path, defect: str
) -> None:
    async with _memory(tmp_path / "m.db", embedder=BrokenEmbedder(defect)) as memory:
        with pytest.raises(EmbeddingError, match="BrokenEmbedder|test-hashing-64"):
            await memory.observe("Remember that the staging database is rebuilt on Sundays.")
        assert await memory.list() == []


@pytest.mark.parametrize(
    ("attributes", "missing"),
    [
        ({"model_id": "x", "dimension": 8}, "embed"),
        ({"model_id": "", "dimension": 8, "embed": HashingEmbedder.embed}, "model_id"),
        ({"model_id": "x", "dimension": 0, "embed": HashingEmbedder.embed}, "dimension"),
    ],
)
async def test_an_object_that_is_not_an_embedder_is_refused_at_once(
    tmp_path: Path, attributes: dict[str, object], missing: str
) -> None:
    incomplete = type("Incomplete", (), attributes)()
    with pytest.raises(ConfigError, match=missing):
        AsyncMemory(tmp_path / "m.db", user_id="alice", embedder=incomplete)


async def test_the_adapter_checks_like_the_base_class() -> None:
    adapted = ProtocolEmbedder(HashingEmbedder())
    vectors = await adapted.embed(["dark mode", "split keyboard"])
    assert vectors.shape == (2, DIMENSION)
    assert [round(float((row**2).sum()), 5) for row in vectors] == [1.0, 1.0]


async def test_an_extractor_without_reference_time_works(tmp_path: Path) -> None:
    extractor = OldExtractor()
    providers = Providers(ExtractiveSummarizer(), extractor)
    async with _memory(tmp_path / "m.db", providers=providers) as memory:
        await memory.observe(POSTCARD, source="user")
        assert await memory.facts_about("Omar") == []
        report = await memory.sleep()
        assert report.abstract["facts_new"] == 1
        [fact] = await memory.facts_about("Omar")
        assert (fact.predicate, fact.object) == ("lives_in", "Cairo")
        assert fact.metadata["extracted_by"] == "OldExtractor"
    assert extractor.calls == [(POSTCARD, "user")]


async def test_an_extractor_may_return_json_like_mappings(tmp_path: Path) -> None:
    extractor = BadExtractor([{"subject": "Omar", "predicate": "lives_in", "object": "Cairo"}])
    providers = Providers(ExtractiveSummarizer(), extractor)
    async with _memory(tmp_path / "m.db", providers=providers) as memory:
        await memory.observe(POSTCARD)
        assert await memory.facts_about("Omar") == []
        await memory.sleep()
        [fact] = await memory.facts_about("Omar")
        assert fact.content == "Omar lives in Cairo"
        assert fact.metadata["extracted_by"] == "BadExtractor"


@pytest.mark.parametrize(
    ("result", "expected"),
    [
        ("Omar lives in Cairo", "expected a list of ExtractedFact"),
        (None, "expected a list of ExtractedFact"),
        ([("Omar", "lives_in", "Cairo")], "expected ExtractedFact records"),
        ([ExtractedFact("Omar", "lives_in", "Cairo", "Omar lives in Cairo", 2.0)], "confidence"),
        ([ExtractedFact("", "lives_in", "Cairo", "lives in Cairo")], "subject"),
        (KeyError("speaker"), "KeyError"),
    ],
)
async def test_an_extractor_outside_its_contract_raises_provider_error(
    tmp_path: Path, result: object, expected: str
) -> None:
    providers = Providers(ExtractiveSummarizer(), BadExtractor(result))
    async with _memory(tmp_path / "m.db", providers=providers) as memory:
        await memory.observe(POSTCARD)
        with pytest.raises(ProviderError, match="BadExtractor") as raised:
            await memory.sleep()
        assert expected in str(raised.value)
        assert await memory.facts_about("Omar") == []


async def test_a_summarizer_or_classifier_outside_its_contract_raises_provider_error(
    tmp_path: Path,
) -> None:
    cases = [
        (Providers(BadSummarizer(), RuleFactExtractor()), "BadSummarizer.summarize"),
        (
            Providers(ExtractiveSummarizer(), RuleFactExtractor(), BadImportance()),
            "BadImportance.classify_importance",
        ),
    ]
    for number, (providers, name) in enumerate(cases):
        clock = SimulatedClock(T0)
        async with _memory(tmp_path / f"{number}.db", providers=providers, clock=clock) as memory:
            await memory.observe("Remember that the release freeze starts on Friday at noon.")
            clock.advance(hours=72)  # past the 48-hour short-term TTL: compression runs
            with pytest.raises(ProviderError, match=name):
                await memory.sleep(phases=["compress"])


def test_providers_without_their_methods_are_refused() -> None:
    with pytest.raises(ConfigError, match="fact_extractor.*extract_facts"):
        Providers(ExtractiveSummarizer(), object())  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="importance.*classify_importance"):
        Providers(ExtractiveSummarizer(), RuleFactExtractor(), object())  # type: ignore[arg-type]

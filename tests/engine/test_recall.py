"""recall(): hybrid channels, cascade, confidence, time expressions, hostile queries."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ucma.config import RetrievalConfig, UCMAConfig
from ucma.engine import AsyncMemory
from ucma.errors import ConfigError, ValidationError

pytestmark = [pytest.mark.anyio, pytest.mark.integration]

REFERENCE = datetime(2023, 6, 14, 15, 0, tzinfo=UTC).timestamp()  # a Wednesday
DAY = 86_400.0
FACTORS = {
    "semantic_relevance",
    "source_quality",
    "recency",
    "consistency",
    "completeness",
    "overall",
    "level",
}


async def _diary(memory: AsyncMemory) -> dict[str, str]:
    """A small history with dates, speakers and sessions."""
    entries = [
        ("Caroline", "I went to an LGBTQ support group and it was so powerful.", 40, "s1"),
        ("Melanie", "That sounds amazing! What did they talk about?", 40, "s1"),
        ("Caroline", "Transgender stories, and how they found acceptance.", 40, "s1"),
        ("Melanie", "I painted a sunrise over the lake last weekend.", 20, "s2"),
        ("Caroline", "We packed the car for the camping trip to the mountains.", 10, "s3"),
        ("Melanie", "The kids loved roasting marshmallows by the fire.", 9, "s3"),
        ("Caroline", "Back home, I started researching adoption agencies.", 3, "s4"),
        ("Melanie", "I fixed the leaking kitchen tap yesterday.", 1, "s5"),
    ]
    ids = {}
    for offset, (speaker, text, days_ago, session) in enumerate(entries):
        obs = await memory.observe(
            text, source=speaker, session_id=session, timestamp=REFERENCE - days_ago * DAY + offset
        )
        ids[text] = obs.id
    return ids


async def test_recall_returns_five_factors_and_the_cascade_path(memory: AsyncMemory):
    ids = await _diary(memory)
    result = await memory.recall("What did Caroline research?", reference_time=REFERENCE)
    assert result.hits[0].id == ids["Back home, I started researching adoption agencies."]
    for hit in result.hits:
        assert set(hit.confidence.to_dict()) == FACTORS
        assert hit.layer
    path = result.cascade_path.to_dict()
    assert path["primary_layer"] == "semantic" and result.query_class == "factual"
    assert 0.0 <= result.confidence <= 1.0


async def test_cascade_triggers_only_below_the_threshold(memory: AsyncMemory):
    await _diary(memory)
    low = await memory.recall(
        "quantum chromodynamics lattice gauge", confidence_threshold=0.99, reference_time=REFERENCE
    )
    assert low.cascade_path.cascaded_to == ["episodic", "graph"]
    assert low.low_confidence
    capped = await memory.recall(
        "quantum chromodynamics",
        confidence_threshold=0.99,
        max_cascade_depth=1,
        reference_time=REFERENCE,
    )
    assert capped.cascade_path.cascaded_to == ["episodic"]
    confident = await memory.recall(
        "support group", confidence_threshold=0.05, reference_time=REFERENCE
    )
    assert confident.cascade_path.cascaded_to == [] and not confident.low_confidence
    off = await memory.recall(
        "quantum", cascade=False, confidence_threshold=0.99, reference_time=REFERENCE
    )
    assert off.cascade_path.cascaded_to == []


async def test_layer_precedence_follows_the_query_class(memory: AsyncMemory):
    await _diary(memory)
    await memory.add_procedure(
        "Fix a leaking tap", "Close the valve, replace the washer", trigger_tags=["tap", "plumbing"]
    )
    procedural = await memory.recall(
        "How do I fix a leaking tap?", confidence_threshold=0.99, reference_time=REFERENCE
    )
    assert procedural.query_class == "procedural"
    assert procedural.cascade_path.primary_layer == "procedural"
    assert procedural.cascade_path.cascaded_to == ["episodic", "semantic"]
    temporal = await memory.recall(
        "When did Melanie paint the sunrise?", confidence_threshold=0.99, reference_time=REFERENCE
    )
    assert temporal.cascade_path.primary_layer == "episodic"
    assert temporal.cascade_path.cascaded_to == ["semantic", "graph"]


async def test_explain_reports_every_channel_score(memory: AsyncMemory):
    await _diary(memory)
    result = await memory.recall(
        "What did Caroline say about the support group?", explain=True, reference_time=REFERENCE
    )
    explanation = result.explanation
    assert explanation["entities"] == ["Caroline"]
    assert explanation["query_class"] == "factual"
    top = explanation["hits"][0]
    assert {"dense", "keyword", "entity"} <= set(top["channels"])
    assert set(top["confidence"]) == FACTORS


async def test_time_expressions_rank_relative_to_the_reference(memory: AsyncMemory):
    ids = await _diary(memory)
    yesterday = await memory.recall("What happened yesterday?", reference_time=REFERENCE)
    assert yesterday.query_class == "temporal"
    assert yesterday.hits[0].id == ids["I fixed the leaking kitchen tap yesterday."]
    assert "temporal" in yesterday.hits[0].channels
    explicit = await memory.recall(
        "support group",
        time_range=(REFERENCE - 50 * DAY, REFERENCE - 30 * DAY),
        reference_time=REFERENCE,
    )
    assert {h.memory.timestamp < REFERENCE - 30 * DAY for h in explicit.hits} == {True}


async def test_a_parsed_time_range_is_a_hint_not_a_filter(memory: AsyncMemory):
    """ "recently" in a question may be relative to the event asked about: what
    matches the question best is still found outside the parsed range."""
    ids = await _diary(memory)
    result = await memory.recall(
        "What did Caroline recently go to, a support group?", explain=True, reference_time=REFERENCE
    )
    start, end = result.explanation["time_range"]
    support = ids["I went to an LGBTQ support group and it was so powerful."]
    assert support in [h.id for h in result.hits[:3]]
    assert not start <= (await memory.get(support)).timestamp <= end


async def test_names_are_left_out_of_the_query_embedding(memory: AsyncMemory):
    ids = await _diary(memory)
    result = await memory.recall("What did Melanie fix?", explain=True, reference_time=REFERENCE)
    assert result.explanation["entities"] == ["Melanie"]
    assert result.hits[0].id == ids["I fixed the leaking kitchen tap yesterday."]
    query, tap = await memory.embedder.embed(
        ["What did fix?", "I fixed the leaking kitchen tap yesterday."]
    )
    assert result.hits[0].channels["cosine"] == pytest.approx(float(query @ tap), abs=1e-4)


async def test_before_an_event_is_anchored_on_that_event(memory: AsyncMemory):
    ids = await _diary(memory)
    result = await memory.recall(
        "What did Melanie paint before the camping trip?", explain=True, reference_time=REFERENCE
    )
    window = result.explanation["time_range"]
    trip = await memory.get(ids["We packed the car for the camping trip to the mountains."])
    assert window[1] == pytest.approx(trip.timestamp)
    assert result.hits[0].id == ids["I painted a sunrise over the lake last weekend."]


async def test_neighbouring_turns_come_with_a_hit(memory: AsyncMemory):
    ids = await _diary(memory)
    result = await memory.recall(
        "what did they talk about at the LGBTQ support group", limit=5, reference_time=REFERENCE
    )
    found = [h.id for h in result.hits]
    answer = ids["Transgender stories, and how they found acceptance."]
    assert answer in found


async def test_named_speakers_are_preferred(memory: AsyncMemory):
    ids = await _diary(memory)
    result = await memory.recall("What did Melanie do with the kids?", reference_time=REFERENCE)
    assert result.hits[0].id == ids["The kids loved roasting marshmallows by the fire."]
    assert result.hits[0].channels.get("entity") == 1.0


async def test_remember_is_recall_without_cascade_over_every_kind(memory: AsyncMemory):
    await _diary(memory)
    fact = await memory.assert_fact("Caroline", "researches", "adoption agencies")
    hits = await memory.remember("Caroline adoption research")
    assert fact.id in {h.id for h in hits}
    assert all(h.layer == "semantic" for h in hits)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.text(max_size=300)
    | st.sampled_from(
        ['"NEAR(" AND *', "\x00\x00", "🙂" * 50, "col:x OR -y", "'; DROP TABLE memories; --"]
    )
)
async def test_no_query_text_raises(memory: AsyncMemory, query: str):
    if not memory.sensory.total_ingested:
        await _diary(memory)
    result = await memory.recall(query, reference_time=REFERENCE)
    assert isinstance(result.hits, list)


async def test_oversized_query_is_a_validation_error(memory: AsyncMemory):
    with pytest.raises(ValidationError):
        await memory.recall("x" * 100_000)


async def test_a_failed_recall_record_is_logged_not_raised(
    memory: AsyncMemory, monkeypatch, caplog
):
    import ucma.engine.retrieval
    from ucma.errors import StorageError

    ids = await _diary(memory)

    def broken(*args, **kwargs):
        raise StorageError("disk full")

    monkeypatch.setattr(ucma.engine.retrieval, "record_recall", broken)
    result = await memory.recall("What did Melanie fix?", reference_time=REFERENCE)
    assert result.hits[0].id == ids["I fixed the leaking kitchen tap yesterday."]
    await memory.stats()  # the storage thread has run the queued write by now
    assert "queued storage write failed" in caplog.text
    assert (await memory.get(result.hits[0].id)).access_count == 0  # nothing half-written


async def test_prepare_search_builds_the_approximate_index_of_a_large_scope(
    db_path, local_embedder
):
    config = UCMAConfig(retrieval=RetrievalConfig(ann_threshold=60))
    async with AsyncMemory(
        db_path, user_id="alice", embedder=local_embedder, config=config
    ) as memory:
        small = await memory.prepare_search(wait=True)
        assert small == {"live_rows": 0, "graph_rows": 0, "building": False}
        await memory.observe_many(
            [f"Routine log line number {i} from the night shift." for i in range(80)]
        )
        fence = await memory.observe("Melanie painted the garden fence blue on Sunday.")
        status = await memory.prepare_search(wait=True)
        assert status == {"live_rows": 81, "graph_rows": 81, "building": False}
        result = await memory.recall("What colour did Melanie paint the fence?")
        assert result.hits[0].id == fence.id


@pytest.mark.parametrize("field", ["ann_connectivity", "ann_expansion_search"])
def test_ann_settings_are_checked_with_the_config(field):
    with pytest.raises(ConfigError, match="ann"):
        RetrievalConfig(**{field: 0})


async def test_the_router_knows_names_written_after_a_recall(memory, db_path, local_embedder):
    await memory.observe("I adopted a grey cat.", source="Caroline")
    first = await memory.recall("What did Caroline adopt?", explain=True)
    assert first.explanation["entities"] == ["Caroline"]
    await memory.observe("I fixed the boat engine.", source="Zed")
    second = await memory.recall("What did Zed fix?", explain=True)
    assert second.explanation["entities"] == ["Zed"]
    # Another engine's write is seen once a read queued after it has run.
    async with AsyncMemory(db_path, user_id="alice", embedder=local_embedder) as other:
        await other.observe("I sold the old piano.", source="Yusuf")
    await memory.recall("What happened?")
    await memory.stats()  # the storage thread runs calls in order: the queue has drained
    third = await memory.recall("What did Yusuf sell?", explain=True)
    assert third.explanation["entities"] == ["Yusuf"]

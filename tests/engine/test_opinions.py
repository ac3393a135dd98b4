"""Banks and opinions through the public API (seed 000; issue 15): bank filtering, the
store-step overrides of seed 003 R1/R2, opinions formed, reinforced, weakened and
replaced by the evolution rule, from typed calls and from plain observe."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from ucma.embeddings import LocalEmbedder
from ucma.engine import AsyncMemory
from ucma.errors import NotFoundError, SecretRefusedError, ValidationError
from ucma.types import Bank, OpinionStatus

pytestmark = [pytest.mark.anyio, pytest.mark.integration]


async def test_observed_preference_change_ends_with_one_current_opinion(
    memory: AsyncMemory,
) -> None:
    await memory.observe("Alice prefers dark mode in every editor.")
    [dark] = await memory.opinions()
    assert (dark.holder, dark.stance, dark.confidence) == (
        "Alice",
        "dark mode in every editor",
        pytest.approx(0.6),
    )
    switched = await memory.observe("Alice switched to light mode.")

    [current] = await memory.opinions()
    assert current.stance == "light mode" and current.is_current
    assert current.memory_id == switched.id and current.replaces == dark.id
    found = await memory.find_opinion("Alice's editor theme")
    assert found is not None and found.id == current.id
    history = await memory.opinion_history(current.id)
    assert [(o.stance, o.status) for o in history] == [
        ("dark mode in every editor", OpinionStatus.REPLACED),
        ("light mode", OpinionStatus.CURRENT),
    ]
    assert history[0].replaced_by == current.id
    assert history[0].confidence == pytest.approx(0.3)  # halved by a stated change
    assert history[0].evidence[-1].memory_id == switched.id
    assert not history[0].evidence[-1].supports
    # One event per change, and the log rebuilds the opinions.
    kinds = [e.type for e in await memory.events() if e.type.startswith("opinion.")]
    assert kinds == ["opinion.formed", "opinion.weakened", "opinion.replaced", "opinion.formed"]
    replayed = await memory.replay()
    assert replayed.mismatches == {} and replayed.opinions == 2
    # A change written without its event is what replay reports.
    storage = await memory._ready()
    with storage.transaction():
        storage.opinions.put([replace(current, confidence=0.9)])
    mismatch = (await memory.replay()).mismatches[current.id]
    assert (mismatch.field, mismatch.replayed, mismatch.live) == ("confidence", 0.6, 0.9)
    with storage.transaction():
        storage.opinions.put([current])
    # The statement of the current opinion is in the opinion bank.
    hits = await memory.remember("which theme does Alice use?", banks=["opinion"])
    assert [h.id for h in hits] == [switched.id]


async def test_the_same_preference_again_reinforces_it(memory: AsyncMemory) -> None:
    await memory.observe("Alice prefers green tea.")
    await memory.observe("Alice prefers green tea.")  # a near-duplicate, merged
    # Said again in a longer message: the same holder and stance, read from its claim.
    await memory.observe("Alice prefers green tea. She also asked about the Lisbon budget.")
    [opinion] = await memory.opinions(include_replaced=True)
    assert opinion.stance == "green tea"
    assert opinion.confidence == pytest.approx(0.775)  # 0.6 -> 0.7 -> 0.775
    assert [e.supports for e in opinion.evidence] == [True, True, True]


async def test_retained_opinions_evolve_gradually_by_topic(memory: AsyncMemory) -> None:
    topic = "Alice's editor theme"
    first = await memory.retain("Alice prefers dark mode.", bank="opinion", topic=topic)
    assert first.stored
    [held] = await memory.opinions()
    assert (held.topic, held.confidence) == (topic, pytest.approx(0.6))
    await memory.retain("Alice prefers dark mode.", bank="opinion", topic=topic)
    assert (await memory.get_opinion(held.id)).confidence == pytest.approx(0.7)
    # Plain contrary evidence weakens it a little: no sudden reversal.
    await memory.retain("Alice used the light theme today.", bank="opinion", topic=topic)
    still = await memory.find_opinion(topic)
    assert still is not None and still.id == held.id
    assert still.confidence == pytest.approx(0.525)
    # A stated change halves it, below the threshold: replaced, history kept.
    await memory.retain("Alice switched to the light theme.", bank="opinion", topic=topic)
    now = await memory.find_opinion(topic)
    assert now is not None and now.id != held.id
    assert (now.stance, now.topic, now.replaces) == ("the light theme", topic, held.id)
    assert now.confidence == pytest.approx(0.6)
    old = await memory.get_opinion(held.id)
    assert old.status is OpinionStatus.REPLACED and old.confidence == pytest.approx(0.2625)
    assert await memory.opinions_below(0.5) == []
    assert {o.id for o in await memory.opinions(include_replaced=True)} == {held.id, now.id}
    assert [o.id for o in await memory.opinions()] == [now.id]


async def test_reinforce_and_weaken_at_the_rules_boundaries(memory: AsyncMemory) -> None:
    await memory.retain("Bob trusts the nightly build.", bank="opinion", topic="nightly build")
    opinion = await memory.find_opinion("nightly build")
    assert opinion is not None
    up = await memory.reinforce_opinion(opinion.id, evidence="It passed again.", weight=1.0)
    assert up.confidence == pytest.approx(0.8)
    # 0.8 * (1 - 0.5 * 0.5) = 0.6, then 0.45, then 0.3375: below 0.35 only the third time.
    for expected in (0.6, 0.45):
        down = await memory.weaken_opinion(opinion.id, stance="the nightly build is flaky")
        assert down.id == opinion.id and down.confidence == pytest.approx(expected)
    replaced = await memory.weaken_opinion(opinion.id, stance="the nightly build is flaky")
    assert replaced.id != opinion.id and replaced.replaces == opinion.id
    assert replaced.stance == "the nightly build is flaky"
    assert replaced.confidence == pytest.approx(0.6)
    with pytest.raises(ValidationError, match="replaced by"):
        await memory.reinforce_opinion(opinion.id)
    # Without a stance to replace it, a weak opinion stays, for opinions_below to show.
    for _ in range(2):
        weak = await memory.weaken_opinion(replaced.id)
    assert weak.id == replaced.id and weak.confidence == pytest.approx(0.3375)
    assert [o.id for o in await memory.opinions_below(0.35)] == [replaced.id]
    assert await memory.opinions_below(0.3) == []
    with pytest.raises(NotFoundError):
        await memory.weaken_opinion("op_missing")
    with pytest.raises(ValidationError, match="weight"):
        await memory.reinforce_opinion(replaced.id, weight=0.0)
    assert (await memory.replay()).mismatches == {}


async def test_recall_and_remember_filter_by_bank(memory: AsyncMemory) -> None:
    world = await memory.retain("The office Wi-Fi password rotates every Monday.", bank="world")
    done = await memory.retain("I rotated the office Wi-Fi password on Monday.", bank="experience")
    note = await memory.retain(
        "The network team handles the office Wi-Fi.", bank="observation", entities=["network team"]
    )
    liked = await memory.observe("Alice likes the office Wi-Fi setup.")
    query = "office Wi-Fi"
    everything = {h.id for h in await memory.remember(query, limit=10)}
    assert {world.id, done.id, note.id, liked.id} <= everything
    for bank, expected in (
        ("world", world.id),
        ("experience", done.id),
        ("observation", note.id),
        ("opinion", liked.id),
    ):
        hits = await memory.remember(query, banks=[bank], limit=10)
        assert expected in {h.id for h in hits}
        assert {h.memory.bank for h in hits} == {Bank(bank)}
    recalled = await memory.recall(query, banks=["world", "experience"])
    assert {h.memory.bank for h in recalled.hits} <= {Bank.WORLD, Bank.EXPERIENCE}
    assert {world.id, done.id} <= {h.id for h in recalled.hits}
    got = await memory.get(note.id)
    assert got is not None and got.bank is Bank.OBSERVATION
    with pytest.raises(ValidationError, match="banks must be one of"):
        await memory.remember(query, banks=["beliefs"])


async def test_store_step_overrides_win_over_the_heuristics(memory: AsyncMemory) -> None:
    text = "We are debugging the flaky login test right now."
    plain = await memory.observe(text)
    assert plain.temporal_level == 1  # "right now": R1's immediate level
    steered = await memory.observe(
        "Alice values honest code reviews.", temporal_level=2, salience=0.4, bank="world"
    )
    assert steered.temporal_level == 2
    record = await memory.get(steered.id)
    assert record is not None
    assert (record.temporal_level, record.base_salience, record.bank) == (2, 0.4, Bank.WORLD)
    # A content type is read for the level: a preference is identity-level (R1).
    typed = await memory.observe("Dark roast coffee, black.", content_type="preference")
    assert typed.temporal_level == 4
    # An explicit salience is also the importance the storage threshold sees (R2).
    kept = await memory.observe("ok", salience=0.9)
    dropped = await memory.observe("ok then", salience=0.1)
    assert kept.stored and not dropped.stored
    added = await memory.add("Remember the launch is on 3 May.", temporal_level=3, bank="world")
    got = await memory.get(added[0].id)
    assert got is not None and (got.temporal_level, got.bank) == (3, Bank.WORLD)
    with pytest.raises(ValidationError, match="temporal_level"):
        await memory.observe(text, temporal_level=5)
    with pytest.raises(ValidationError, match="content_type"):
        await memory.observe(text, content_type="rumour")
    with pytest.raises(ValidationError, match="salience"):
        await memory.observe(text, salience=1.5)
    with pytest.raises(ValidationError, match="topic is for the opinion bank"):
        await memory.retain(text, bank="world", topic="tests")


async def test_opinions_are_scoped(memory: AsyncMemory) -> None:
    await memory.observe("Alice prefers dark mode.")
    await memory.observe("Bob prefers light mode.", user_id="bob")
    [alice] = await memory.opinions()
    [bob] = await memory.opinions(user_id="bob")
    assert alice.stance == "dark mode" and bob.stance == "light mode"
    with pytest.raises(NotFoundError):
        await memory.get_opinion(alice.id, user_id="bob")
    with pytest.raises(NotFoundError):
        await memory.weaken_opinion(alice.id, user_id="bob", stance="light")
    assert (await memory.get_opinion(alice.id)).confidence == pytest.approx(0.6)
    found = await memory.find_opinion("Alice prefers dark mode", user_id="bob")
    assert found is None or found.id == bob.id


async def test_export_import_carries_opinions_and_banks(memory: AsyncMemory, tmp_path) -> None:
    await memory.observe("Alice prefers dark mode in every editor.")
    await memory.observe("Alice switched to light mode.")
    await memory.retain("Deploys are frozen on Fridays.", bank="world")
    path = tmp_path / "alice.jsonl"
    await memory.export_jsonl(path)
    before = {
        (o.stance, o.status, round(o.confidence, 9), o.topic)
        for o in await memory.opinions(include_replaced=True)
    }
    banks = {r.content: r.bank for r in (await memory.get_all(limit=100)).items}
    async with AsyncMemory(
        tmp_path / "copy.db", user_id="alice", embedder=memory._inner_embedder
    ) as copy:
        await copy.import_jsonl(path)
        after = await copy.opinions(include_replaced=True)
        assert {(o.stance, o.status, round(o.confidence, 9), o.topic) for o in after} == before
        assert {r.content: r.bank for r in (await copy.get_all(limit=100)).items} == banks
        current = await copy.find_opinion("Alice's editor theme")
        assert current is not None and current.stance == "light mode"
        history = await copy.opinion_history(current.id)
        assert [o.stance for o in history] == ["dark mode in every editor", "light mode"]
        memories = {r.id for r in (await copy.get_all(limit=100)).items}
        assert {o.memory_id for o in after} <= memories
        assert (await copy.replay()).mismatches == {}
        await copy.import_jsonl(path)  # again: nothing doubles
        assert len(await copy.opinions(include_replaced=True)) == 2
    # Into another user: ids of their own, the chain intact.
    async with AsyncMemory(
        tmp_path / "copy.db", user_id="bob", embedder=memory._inner_embedder
    ) as other:
        await other.import_jsonl(path)
        moved = await other.opinions(include_replaced=True)
        assert not {o.id for o in moved} & {
            o.id for o in await memory.opinions(include_replaced=True)
        }
        [now] = [o for o in moved if o.is_current]
        assert [o.stance for o in await other.opinion_history(now.id)] == [
            "dark mode in every editor",
            "light mode",
        ]


async def test_forgetting_a_person_erases_their_opinions(memory: AsyncMemory) -> None:
    await memory.observe("Greta prefers window seats.")
    await memory.observe("Alice prefers aisle seats.")
    await memory.forget_person(["Greta"])
    assert [o.holder for o in await memory.opinions(include_replaced=True)] == ["Alice"]


async def test_opinion_texts_pass_the_content_guard(memory: AsyncMemory) -> None:
    secret = "sk-proj-Qz7Lm2Vx9Kp4Rt8Wn3Ys6Bd1Hf5Jc0Ga"
    email = "greta.lindqvist@example.org"
    await memory.retain("Greta likes the shared inbox.", bank="opinion", topic=f"inbox {email}")
    [held] = await memory.opinions()
    assert email not in held.topic and "[email_" in held.topic
    with pytest.raises(SecretRefusedError):
        await memory.weaken_opinion(held.id, evidence=f"She pasted {secret} there.")
    with pytest.raises(SecretRefusedError):
        await memory.retain("Greta likes it.", bank="opinion", topic=f"key {secret}")
    weak = await memory.weaken_opinion(held.id, stance=f"write to {email} directly", weight=1.0)
    assert email not in weak.evidence[-1].text + weak.stance
    assert (await memory.get_opinion(held.id)).confidence == pytest.approx(0.3)


class _CountingEmbedder:
    """The packaged model, recording every text it is asked to embed."""

    def __init__(self, inner: LocalEmbedder) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        self.dimension = inner.dimension
        self.texts: list[str] = []

    async def embed(self, texts: list[str]) -> np.ndarray:
        self.texts += texts
        return await self.inner.embed(texts)


async def test_find_opinion_embeds_only_the_topic_however_many_opinions(
    tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    counting = _CountingEmbedder(local_embedder)
    async with AsyncMemory(tmp_path / "m.db", user_id="alice", embedder=counting) as memory:
        await memory.observe_many(
            [
                {"content": f"Bob likes the {colour} mug number {n}.", "bank": "opinion"}
                for n, colour in enumerate(["red", "blue", "green", "white"] * 15)
            ]
        )
        held = await memory.retain(
            "Alice prefers dark mode in every editor.", bank="opinion", topic="editor theme"
        )
        [opinion] = [o for o in await memory.opinions(limit=1000) if o.memory_id == held.id]
        # Replaced through the API, the successor has no statement of its own: found
        # through its predecessor's.
        await memory.weaken_opinion(opinion.id, stance="light mode")  # 0.6 -> 0.45
        latest = await memory.weaken_opinion(opinion.id, stance="light mode")  # 0.3375
        assert latest.replaces == opinion.id and latest.memory_id is None
        assert len(await memory.opinions(include_replaced=True, limit=1000)) == 62
        counting.texts.clear()
        found = await memory.find_opinion("Alice's colour scheme in her code editor")
        assert found is not None and found.id == latest.id
        assert counting.texts == ["Alice's colour scheme in her code editor"]
        assert await memory.find_opinion("the quarterly tax filing deadline") is None


async def test_replay_skips_the_events_forgetting_a_person_redacted(memory: AsyncMemory) -> None:
    # Regression: replay raised KeyError on a redacted opinion.formed event.
    await memory.retain("Dana Whitfield prefers oolong tea on Friday calls.", bank="opinion")
    await memory.retain("The team prefers short standups.", bank="opinion", topic="standups")
    kept = next(o for o in await memory.opinions() if o.holder != "Dana Whitfield")
    await memory.reinforce_opinion(kept.id, evidence="Everyone left the long one early.")
    await memory.add_goal("Plan Dana Whitfield's farewell lunch")
    await memory.learn_from_trajectory(
        "book the venue",
        ["call the restaurant"],
        False,
        "Dana Whitfield's favourite place was closed",
        domain="events",
    )
    before = await memory.replay()
    assert before.mismatches == {} and before.opinions == 2
    report = await memory.forget_person("Dana Whitfield")
    assert report.counts["events_redacted"] >= 3  # the opinion, the goal, the pitfall
    after = await memory.replay()
    assert after.mismatches == {}
    assert after.opinions == 1 and await memory.goals() == []
    assert [o.id for o in await memory.opinions()] == [kept.id]

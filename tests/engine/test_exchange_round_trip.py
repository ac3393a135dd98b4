"""An export carries every record kind of a scope (opinions, banks and strategy fields
too, in one file with the vault), and importing it into a fresh store
reproduces them and ranks a fixed set of questions the same (top 5). With a transfer
key the vault's originals go too, sealed, and the tokens resolve in the new store
(whose vault key is another)."""

from __future__ import annotations

import json
import re
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest
from cryptography.fernet import Fernet

from ucma.embeddings import LocalEmbedder
from ucma.engine import AsyncMemory
from ucma.errors import ValidationError
from ucma.lifecycle.clock import SimulatedClock

pytestmark = pytest.mark.anyio

TRANSFER_KEY = Fernet.generate_key().decode()

CONVERSATIONS = [
    [
        "Hi, I'm Maya. I just moved to Lisbon for a job at Copperleaf.",
        "Welcome! How are you finding Lisbon so far?",
        "I love the trams but the hills are brutal on my bike.",
        "My sister Ana is visiting in June; she is allergic to shellfish.",
    ],
    [
        "Can you help me plan a dinner for Ana's visit?",
        "Sure. Since Ana is allergic to shellfish, avoid cataplana and prawns.",
        "Good call. I was thinking of the grilled sardine place in Alfama.",
        "Sardines are fish, not shellfish, so that should be fine for her.",
    ],
    [
        "I started learning Portuguese on Tuesdays and Thursdays with a tutor called Rui.",
        "My laptop is a ThinkPad X1 and I use dark mode everywhere.",
        "Actually I switched my editor to light mode for the summer glare.",
        "The Copperleaf office is in Parque das Nacoes, I commute by metro.",
        "Ana's email is ana.ribeiro@example.org and her phone is +351 912 345 678.",
    ],
]
QUESTIONS = [
    "Where does Maya work?",
    "What is Ana allergic to?",
    "Which restaurant did we pick for dinner?",
    "When are the Portuguese lessons?",
    "Who is the tutor?",
    "What laptop does Maya use?",
    "Which theme does Maya use in her editor?",
    "How does Maya get to the office?",
    "Is sardine safe for Ana?",
    "What does Maya think of the trams?",
    "When is the sister visiting?",
    "What should I check before deploying?",
    "How do I rotate the deploy key?",
    "Where is the staging database?",
    "What city did Maya move to?",
    "What is Ana's email address?",
]
#: The originals the content guard tokenised: they travel only sealed with a transfer key.
ORIGINALS = ["ana.ribeiro@example.org", "+351 912 345 678"]


async def populate(memory: AsyncMemory, clock: SimulatedClock) -> dict[str, str]:
    for conversation in CONVERSATIONS:
        await memory.new_session()
        for i, text in enumerate(conversation):
            await memory.observe(text, source="assistant" if i % 2 and "?" in text else "user")
            clock.advance(seconds=90)
        clock.advance(days=2)
    # Imported history, told out of order: the keyword context of each turn (its
    # session's preceding turn) depends on when it was inserted, not on its time.
    history = [
        "The staging database moved to db-2.internal after the upgrade.",
        "We keep nightly backups of staging for a week.",
        "Staging was slow on Monday because of the index rebuild.",
    ]
    start = clock.now() - 30 * 86_400
    for offset, text in ((2, history[2]), (0, history[0]), (1, history[1])):
        await memory.observe(text, timestamp=start + offset * 600, session_id="ses_history")
    await memory.assert_fact("staging database", "hosted_on", "db-2.internal")
    await memory.assert_fact("Maya", "delivery_pref", "Thursday")
    clock.advance(days=1)
    await memory.assert_fact("Maya", "delivery_pref", "Friday")
    await memory.assert_fact("Nightjar", "launch_day", "Tuesday", metadata={"source": "crm"})
    await memory.assert_fact("Nightjar", "launch_day", "Friday")
    procedure = await memory.add_procedure(
        "Rotate the deploy key",
        "How to rotate the billing deploy key",
        steps=[{"description": "generate a key"}, {"description": "update CI secrets"}],
        trigger_tags=["deploy"],
        status="active",
    )
    await memory.record_procedure_outcome(procedure.id, True)
    # A strategy, a pitfall and two retained memories of one instant (the ranking
    # depends on their order of insertion, which the import repeats).
    site = [{"subject": "billing deploy", "predicate": "freeze", "object": "off"}]
    await memory.learn_from_trajectory(
        "Deploy the billing service", ["run the migrations", "roll out"], True,
        domain="deploy", context=site,
    )  # fmt: skip
    await memory.learn_from_trajectory(
        "Deploy the billing service again", ["skip the canary"], False,
        "'skip the canary' failed: error rate", domain="deploy", context=site,
    )  # fmt: skip
    await memory.retain(
        "Maya prefers window seats on long train rides.", bank="opinion", topic="train seat"
    )
    await memory.retain("The office Wi-Fi moved to the 5 GHz band.", bank="world")
    lesson = await memory.learn(
        "Check the freeze calendar before deploying.", applicability=["deploy"]
    )
    recalled = await memory.recall("What is Ana allergic to?")
    trace = await memory.decide(
        [recalled.hits[0].id, lesson.id],
        summary="Suggested the sardine place",
        retrieval_id=recalled.retrieval_id,
    )
    await memory.outcome(trace.id, 0.9, "user_accepted", feedback="dinner went well")
    await memory.link(recalled.hits[0].id, lesson.id, "supports", weight=0.7)
    await memory.update_graph_importance()
    return {"trace": trace.id, "procedure": procedure.id, "lesson": lesson.id}


def without(data: dict[str, Any], *names: str) -> dict[str, Any]:
    return {k: v for k, v in data.items() if k not in names}


async def top5(memory: AsyncMemory) -> list[list[str]]:
    return [[h.id for h in await memory.remember(q, limit=5)] for q in QUESTIONS]


async def test_a_round_trip_carries_every_kind_and_ranks_the_same(
    tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    clock = SimulatedClock()
    async with AsyncMemory(
        tmp_path / "a.db", user_id="maya", embedder=local_embedder, clock=clock
    ) as source:
        ids = await populate(source, clock)
        await source.export_jsonl(tmp_path / "maya.jsonl", transfer_key=TRANSFER_KEY)
        await source.export_jsonl(tmp_path / "plain.jsonl")
        [tokenised] = [
            r for r in await source.list(kind="episodic", limit=1000) if "[email_" in r.content
        ]
        tokens = sorted(set(re.findall(r"\[(?:email|phone)_[0-9a-f]+\]", tokenised.content)))
        assert len(tokens) == 2
        traces = await source.traces()
        history = await source.fact_history("Maya", "delivery_pref")
        conflicts = await source.conflicts()
        salience = await source.salience_history(ids["lesson"])
        records = await source.list(include_archived=True, limit=1000)
        history_of_lesson = [h.event for h in await source.history(ids["lesson"])]
        before = await top5(source)  # after the export: both stores rank from one state

    lines = (tmp_path / "maya.jsonl").read_text(encoding="utf-8").splitlines()
    kinds = [json.loads(line)["type"] for line in lines]
    assert {"memory", "retention", "edge", "history", "decision", "conflict"} <= set(kinds)
    assert kinds[1:3] == ["vault", "vault"]  # right after the header, before any memory
    for path in (tmp_path / "maya.jsonl", tmp_path / "plain.jsonl"):
        raw = path.read_bytes()
        assert not [o for o in ORIGINALS if o.encode() in raw]  # sealed, or not there
    assert b'"vault"' not in (tmp_path / "plain.jsonl").read_bytes()

    async with AsyncMemory(
        tmp_path / "b.db", user_id="maya", embedder=local_embedder, clock=clock
    ) as copy:
        with pytest.raises(ValidationError, match="transfer_key"):
            await copy.import_jsonl(tmp_path / "maya.jsonl")
        with pytest.raises(ValidationError, match="does not open"):
            await copy.import_jsonl(tmp_path / "maya.jsonl", transfer_key=Fernet.generate_key())
        assert await copy.list(include_archived=True) == []  # refused before any write
        await copy.import_jsonl(tmp_path / "maya.jsonl", transfer_key=TRANSFER_KEY)
        # Decisions and conflicts get ids of the new store; everything else is the same.
        assert [without(t.to_dict(), "id", "retrieval_id") for t in await copy.traces()] == [
            without(t.to_dict(), "id", "retrieval_id") for t in traces
        ]
        assert await copy.fact_history("Maya", "delivery_pref") == history
        assert [without(asdict(c), "id") for c in await copy.conflicts()] == [
            without(asdict(c), "id") for c in conflicts
        ]
        assert conflicts
        copied = await copy.salience_history(ids["lesson"])
        assert [without(u.to_dict(), "trace_id") for u in copied] == [
            without(u.to_dict(), "trace_id") for u in salience
        ]
        assert salience
        assert [h.event for h in await copy.history(ids["lesson"])] == history_of_lesson
        # Every memory of every kind, superseded facts and sessions included, as it was.
        assert await copy.list(include_archived=True, limit=1000) == records
        assert {type(r).__name__ for r in records} == {"Episode", "Fact", "Procedure", "Learning"}
        assert len({r.session_id for r in records if type(r).__name__ == "Episode"}) == 4
        after = await top5(copy)
        # The originals, re-encrypted under this store's own vault key, resolve here.
        assert [await copy.reveal(t) for t in tokens] == sorted(ORIGINALS, reverse=True)
        assert "ana.ribeiro@example.org" in await copy.detokenise(tokenised.content)
        found = await copy.remember("Who writes from ana.ribeiro@example.org?", limit=3)
        assert tokenised.id in [h.id for h in found]
    changed = [(q, b, a) for q, b, a in zip(QUESTIONS, before, after, strict=True) if b != a]
    assert changed == []


async def test_one_export_carries_opinions_banks_strategies_and_the_vault(
    tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    clock = SimulatedClock()
    site = [{"subject": "billing deploy", "predicate": "freeze", "object": "off"}]
    async with AsyncMemory(
        tmp_path / "a.db", user_id="maya", embedder=local_embedder, clock=clock
    ) as source:
        await source.observe("Maya prefers dark mode in every editor.")
        await source.observe("Maya switched to light mode.")
        await source.retain("Maya prefers window seats.", bank="opinion", topic="train seat")
        await source.retain("The office Wi-Fi moved to the 5 GHz band.", bank="world")
        await source.learn("Check the freeze calendar before deploying.")
        await source.observe("Ana's email is ana.ribeiro@example.org.")
        await source.learn_from_trajectory(
            "Deploy billing", ["run the migrations", "roll out"], True, domain="deploy",
            context=site,
        )  # fmt: skip
        await source.learn_from_trajectory(
            "Deploy billing again", ["skip the canary"], False,
            "'skip the canary' failed: error rate", domain="deploy", context=site,
        )  # fmt: skip
        await source.export_jsonl(tmp_path / "maya.jsonl", transfer_key=TRANSFER_KEY)
        records = await source.list(include_archived=True, limit=1000)
        opinions = await source.opinions(include_replaced=True, limit=1000)
        [token] = set(re.findall(r"\[email_[0-9a-f]+\]", " ".join(r.content for r in records)))

    kinds = {
        json.loads(line)["type"] for line in (tmp_path / "maya.jsonl").read_text().splitlines()
    }
    assert {"memory", "opinion", "vault"} <= kinds
    assert {r.bank.value for r in records} == {"world", "experience", "opinion", "observation"}
    procedures = [r for r in records if type(r).__name__ == "Procedure"]
    assert {p.procedure_type.value for p in procedures} == {"strategy", "pitfall"}
    assert all(p.preconditions and p.domain == "deploy" for p in procedures)
    assert {o.status.value for o in opinions} == {"current", "replaced"}

    async with AsyncMemory(
        tmp_path / "b.db", user_id="maya", embedder=local_embedder, clock=clock
    ) as copy:
        await copy.import_jsonl(tmp_path / "maya.jsonl", transfer_key=TRANSFER_KEY)
        assert await copy.list(include_archived=True, limit=1000) == records
        # Opinions get ids of the new store (so do the links between them, and the order
        # of those changed in one instant).
        apart = ("id", "replaces", "replaced_by")
        copied = await copy.opinions(include_replaced=True, limit=1000)
        assert sorted(str(without(asdict(o), *apart)) for o in copied) == sorted(
            str(without(asdict(o), *apart)) for o in opinions
        )
        assert await copy.reveal(token) == "ana.ribeiro@example.org"


async def test_turns_of_one_instant_keep_their_keyword_context_through_a_round_trip(
    tmp_path: Path, local_embedder: LocalEmbedder
) -> None:
    # Eight turns of one session told at the same instant: each turn's keyword context
    # is the turn the store received before it, so an import must write them in that
    # order, whatever order their (random) ids sort in.
    turns = [
        f"Note {word}: the {word} crate is stored on shelf {i}."
        for i, word in enumerate(
            ["amber", "birch", "cobalt", "dune", "ember", "fjord", "garnet", "harbor"]
        )
    ]
    questions = [f"Which shelf holds the {word} crate?" for word in ("birch", "dune", "garnet")]
    questions += ["Where is the cobalt crate?", "What is on shelf 6?"]
    clock = SimulatedClock()

    def ranked(hits: list[Any]) -> list[tuple[str, float, float]]:
        return [(h.id, h.score, h.channels.get("keyword", 0.0)) for h in hits]

    async with AsyncMemory(
        tmp_path / "a.db", user_id="maya", embedder=local_embedder, clock=clock
    ) as source:
        at = clock.now() - 3_600
        for text in turns:
            await source.observe(text, timestamp=at, session_id="ses_inventory")
        await source.export_jsonl(tmp_path / "maya.jsonl")
        before = [ranked(await source.remember(q, limit=5)) for q in questions]
    async with AsyncMemory(
        tmp_path / "b.db", user_id="maya", embedder=local_embedder, clock=clock
    ) as copy:
        await copy.import_jsonl(tmp_path / "maya.jsonl")
        after = [ranked(await copy.remember(q, limit=5)) for q in questions]
    assert all(hits for hits in before)
    assert after == before

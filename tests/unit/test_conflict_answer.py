"""Template answers and conflict sentences (pure)."""

from __future__ import annotations

from ucma.conflicts.answer import compose_answer
from ucma.conflicts.reports import FactList, conflict_sentence, predicate_words
from ucma.types import (
    Conflict,
    ConflictStatus,
    ConflictType,
    Fact,
    Hit,
    Learning,
    LearningType,
    Procedure,
    ResolutionStrategy,
    ReviewFlag,
)


def fact(fid: str, obj: str, confidence: float = 0.9, predicate: str = "status") -> Fact:
    return Fact(
        id=fid,
        user_id="u",
        content=f"so_1 {predicate} {obj}",
        created_at=1.0,
        subject="so_1",
        predicate=predicate,
        object=obj,
        confidence=confidence,
    )


def conflict(status: ConflictStatus, strategy: ResolutionStrategy, chosen: str | None) -> Conflict:
    return Conflict(
        id="c1",
        user_id="u",
        conflict_type=ConflictType.MEMORY_VS_DB,
        subject="so_1",
        predicate="status",
        existing_fact_id="old",
        existing_value="in_fulfillment",
        existing_confidence=0.85,
        new_fact_id="new",
        new_value="shipped",
        new_confidence=1.0,
        resolution_strategy=strategy,
        action="decay_memory",
        chosen_value=chosen,
        explanation="Database is the authoritative source of truth.",
        status=status,
        detected_at=5.0,
        options=["in_fulfillment", "shipped"] if chosen is None else [],
    )


def test_sentences_follow_seed_002():
    trust = conflict(ConflictStatus.RESOLVED, ResolutionStrategy.TRUST_DB, "shipped")
    assert conflict_sentence(trust) == "Status is shipped (previously in_fulfillment)"
    ask = conflict(ConflictStatus.PENDING, ResolutionStrategy.ASK_USER, None)
    assert conflict_sentence(ask).endswith("Which is correct?")
    assert predicate_words("delivery_pref") == "delivery preference"


def test_answer_uses_the_current_value_and_says_what_it_replaced():
    trust = conflict(ConflictStatus.RESOLVED, ResolutionStrategy.TRUST_DB, "shipped")
    answer = compose_answer(
        "status?", [], [fact("new", "shipped", 1.0)], [trust], {}, review_factor=0.5
    )
    assert answer.response == "Status is shipped (previously in_fulfillment)."
    assert answer.confidence == 1.0 and not answer.disambiguation_required
    assert answer.to_dict()["conflicts_detected"][0]["resolution_strategy"] == "trust_db"


def test_pending_conflict_asks_and_halves_confidence():
    ask = conflict(ConflictStatus.PENDING, ResolutionStrategy.ASK_USER, None)
    facts = [fact("old", "in_fulfillment", 0.8), fact("new", "shipped", 0.8)]
    answer = compose_answer("status?", [], facts, [ask], {}, review_factor=0.5)
    assert answer.disambiguation_required and answer.options == ["in_fulfillment", "shipped"]
    assert answer.confidence == 0.4
    assert answer.to_dict()["options"] == ["in_fulfillment", "shipped"]


def test_flagged_conclusions_get_a_caveat_and_procedures_rank_by_competence():
    lesson = Learning(
        id="l1",
        user_id="u",
        content="ship on Thursdays",
        created_at=1.0,
        learning_type=LearningType.USER_PREFERENCE,
        title="Thursday shipping",
    )
    novice = Procedure(
        id="p1",
        user_id="u",
        content="a",
        created_at=1.0,
        name="fast",
        description="a",
        success_rate=1.0,
        execution_count=1,
    )
    veteran = Procedure(
        id="p2",
        user_id="u",
        content="b",
        created_at=1.0,
        name="steady",
        description="b",
        success_rate=0.8,
        execution_count=20,
    )
    hits = [
        Hit(memory=m, score=0.6, relevance=0.6, source="dense") for m in (lesson, novice, veteran)
    ]
    flags = {"l1": ReviewFlag("l1", "f1", "c1", "premise changed", 3.0)}
    answer = compose_answer("plan", hits, [], [], flags, review_factor=0.5)
    assert [p.id for p in answer.procedures] == ["p2", "p1"]
    assert "Suggested procedure: steady" in answer.response
    assert any("Thursday shipping" in c for c in answer.caveats)
    assert answer.flagged == [flags["l1"]]


def test_empty_answer_and_fact_list_behaves_like_a_list():
    assert compose_answer("x", [], [], [], {}, review_factor=0.5).response == (
        "I don't have anything about that yet."
    )
    facts = FactList([fact("a", "open")], [])
    assert facts == [fact("a", "open")] and facts.conflicts == []
    assert facts.to_dict()["disambiguation_required"] is False

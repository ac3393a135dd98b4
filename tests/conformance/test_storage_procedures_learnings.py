"""Procedural tag lookup and learning relevance: filters and ordering."""

from __future__ import annotations

from ucma.types import (
    Condition,
    LearningType,
    ProcedureStatus,
    ProcedureType,
    RiskLevel,
    Scope,
)

ALICE = Scope("alice", "assistant")


def test_find_by_tags_orders_by_confidence_weighted_success(storage, make) -> None:
    def add(name, rate, runs, tags=("deploy",), status=ProcedureStatus.ACTIVE):
        procedure = make.procedure(
            ALICE,
            name=name,
            success_rate=rate,
            execution_count=runs,
            trigger_tags=list(tags),
            status=status,
        )
        storage.procedures.add(procedure, make.vector())
        return procedure

    lucky = add("lucky", 1.0, 2)  # 0.2: perfect but barely tried
    proven = add("proven", 0.7, 40)  # 0.7
    add("decent", 0.9, 6)  # 0.54
    draft = add("draft", 0.5, 10, tags=("Deploy", "ci"), status=ProcedureStatus.DRAFT)  # 0.5
    add("deprecated", 1.0, 100, status=ProcedureStatus.DEPRECATED)
    add("unrelated", 1.0, 100, tags=("cooking",))

    found = storage.procedures.find_by_tags(ALICE, ["DEPLOY"])
    assert [p.name for p in found] == ["proven", "decent", "draft", "lucky"]
    assert [p.ranking_score for p in found] == sorted(
        (p.ranking_score for p in found), reverse=True
    )
    assert found[0] == proven
    assert [p.name for p in storage.procedures.find_by_tags(ALICE, ["ci", "deploy"])] == [
        "proven",
        "decent",
        "draft",
        "lucky",
    ]  # each once, even when several tags match
    assert [
        p.name for p in storage.procedures.find_by_tags(ALICE, ["deploy"], min_success_rate=0.9)
    ] == ["decent", "lucky"]
    assert storage.procedures.find_by_tags(ALICE, ["ci"]) == [draft]
    assert storage.procedures.find_by_tags(ALICE, []) == []
    assert storage.procedures.find_by_tags(ALICE, ["nothing"]) == []
    storage.memories.set_archived(ALICE, [proven.id], 1.0)
    assert proven.id not in [p.id for p in storage.procedures.find_by_tags(ALICE, ["deploy"])]
    assert lucky.id in [p.id for p in storage.procedures.find_by_tags(ALICE, ["deploy"])]


def test_procedure_stats(storage, make) -> None:
    storage.procedures.add(make.procedure(ALICE, trigger_tags=["A", "b", "a"]), make.vector())
    storage.procedures.add(make.procedure(ALICE, trigger_tags=["B", "c"]), make.vector())
    assert storage.procedures.stats(ALICE) == {"procedure_count": 2, "tag_count": 3}


def test_relevant_filters_and_orders_learnings(storage, make) -> None:
    def add(
        title,
        confidence,
        impact,
        tags=("billing",),
        kind=LearningType.FAILURE_ANALYSIS,
    ):
        learning = make.learning(
            ALICE,
            title=title,
            confidence=confidence,
            impact_score=impact,
            applicability=list(tags),
            learning_type=kind,
        )
        storage.learnings.add(learning, make.vector())
        return learning

    add("strong", 0.9, 0.9)  # 0.81
    add("sure-but-small", 0.95, 0.3)  # 0.285
    add("impactful", 0.6, 1.0)  # 0.6
    add("weak", 0.2, 1.0)  # below the default 0.3
    add("preference", 0.8, 0.5, tags=("Billing", "tone"), kind=LearningType.USER_PREFERENCE)
    add("elsewhere", 0.99, 0.99, tags=("travel",))

    names = [learning.title for learning in storage.learnings.relevant(ALICE, ["BILLING"])]
    assert names == ["strong", "impactful", "preference", "sure-but-small"]
    assert [x.title for x in storage.learnings.relevant(ALICE, ["billing"], limit=2)] == [
        "strong",
        "impactful",
    ]
    assert [
        x.title
        for x in storage.learnings.relevant(
            ALICE, ["billing"], learning_type=LearningType.USER_PREFERENCE
        )
    ] == ["preference"]
    assert [
        x.title
        for x in storage.learnings.relevant(ALICE, ["billing"], min_confidence=0.0, limit=10)
    ][-1] == "weak"
    assert [x.title for x in storage.learnings.relevant(ALICE, ["tone", "travel"])] == [
        "elsewhere",
        "preference",
    ]
    assert storage.learnings.relevant(ALICE, ["billing"], min_confidence=0.99) == []
    assert storage.learnings.relevant(ALICE, []) == []
    assert storage.learnings.relevant(ALICE, ["billing"], limit=0) == []


def test_relevant_excludes_archived(storage, make) -> None:
    learning = make.learning(ALICE, applicability=["x"])
    storage.learnings.add(learning, make.vector())
    assert storage.learnings.relevant(ALICE, ["x"]) == [learning]
    storage.memories.set_archived(ALICE, [learning.id], 1.0)
    assert storage.learnings.relevant(ALICE, ["x"]) == []


def test_learning_stats(storage, make) -> None:
    storage.learnings.add(make.learning(ALICE, applicability=["A", "b"]), make.vector())
    storage.learnings.add(make.learning(ALICE, applicability=["a", "c", "C"]), make.vector())
    assert storage.learnings.stats(ALICE) == {"learning_count": 2, "applicability_tags": 3}


def test_strategy_fields_round_trip_and_in_domain_lists_one_domain(storage, make) -> None:
    def add(name, domain, kind, updated_at):
        procedure = make.procedure(
            ALICE,
            name=name,
            procedure_type=kind,
            domain=domain,
            preconditions=[Condition("site", "pagination", "links")],
            risk_level=RiskLevel.MEDIUM,
            failure_modes=["429 from the API"],
            source_trajectories=["traj_1", "traj_2"],
            success_count=9,
            updated_at=updated_at,
        )
        storage.procedures.add(procedure, make.vector())
        return procedure

    older = add("older", "scraping", ProcedureType.STRATEGY, 10.0)
    newer = add("newer", "scraping", ProcedureType.STRATEGY, 20.0)
    pitfall = add("pitfall", "scraping", ProcedureType.PITFALL, 30.0)
    add("elsewhere", "deployment", ProcedureType.STRATEGY, 40.0)
    assert storage.procedures.get(ALICE, older.id) == older
    found = storage.procedures.in_domain(ALICE, "scraping", ProcedureType.STRATEGY)
    assert found == [newer, older]
    assert storage.procedures.in_domain(ALICE, "scraping") == [pitfall, newer, older]
    assert storage.procedures.in_domain(ALICE, "scraping", limit=1) == [pitfall]
    assert storage.procedures.in_domain(Scope("bob", "assistant"), "scraping") == []
    storage.memories.set_archived(ALICE, [newer.id], 1.0)
    assert storage.procedures.in_domain(ALICE, "scraping", ProcedureType.STRATEGY) == [older]

"""Semantic store: the entity index on both ends, multi-hop traversal, stats."""

from __future__ import annotations

import dataclasses

from ucma.types import Scope

ALICE = Scope("alice", "assistant")


def add(storage, make, subject, predicate, object_, **fields):
    fact = make.fact(ALICE, subject, predicate, object_, **fields)
    storage.facts.add(fact, make.vector())
    return fact


def test_about_finds_subject_and_object_ends_case_insensitively(storage, make) -> None:
    owns = add(storage, make, "Alice", "owns", "Kettle", confidence=0.7)
    made = add(storage, make, "kettle", "made_by", "Acme", confidence=0.9)
    other = add(storage, make, "Bob", "likes", "coffee")
    for query in ("kettle", "KETTLE", "  Kettle "):
        assert [f.id for f in storage.facts.about(ALICE, query)] == [made.id, owns.id]
    assert [f.id for f in storage.facts.about(ALICE, "acme")] == [made.id]
    assert [f.id for f in storage.facts.about(ALICE, "bob")] == [other.id]
    assert storage.facts.about(ALICE, "nobody") == []
    assert storage.facts.about(ALICE, "alice")[0] == owns


def test_about_orders_by_confidence_then_recency(storage, make) -> None:
    old = add(storage, make, "tea", "is", "hot", confidence=0.5, created_at=1.0, updated_at=None)
    new = add(storage, make, "tea", "is", "green", confidence=0.5, created_at=2.0, updated_at=None)
    touched = add(
        storage, make, "tea", "is", "cheap", confidence=0.5, created_at=0.5, updated_at=3.0
    )
    sure = add(
        storage, make, "tea", "is", "a drink", confidence=0.99, created_at=0.1, updated_at=None
    )
    assert [f.id for f in storage.facts.about(ALICE, "tea")] == [
        sure.id,
        touched.id,
        new.id,
        old.id,
    ]


def test_about_excludes_archived_unless_asked(storage, make) -> None:
    fact = add(storage, make, "Alice", "lives_in", "Paris")
    storage.memories.set_archived(ALICE, [fact.id], 10.0)
    assert storage.facts.about(ALICE, "paris") == []
    assert storage.facts.about(ALICE, "paris", include_archived=True) == [
        dataclasses.replace(fact, archived_at=10.0)
    ]


def test_traverse_walks_subject_to_object_up_to_max_hops(storage, make) -> None:
    a_b = add(storage, make, "A", "knows", "B")
    b_c = add(storage, make, "B", "knows", "C")
    c_d = add(storage, make, "C", "knows", "D")
    d_e = add(storage, make, "D", "knows", "E")
    a_x = add(storage, make, "a", "owns", "X")
    x_y = add(storage, make, "X", "part_of", "Y")
    back = add(storage, make, "C", "knows", "A")  # a cycle back to the start
    unrelated = add(storage, make, "Q", "knows", "A")  # points *to* A: not followed

    assert storage.facts.traverse(ALICE, "a", max_hops=1) == [a_b, a_x]
    assert [f.id for f in storage.facts.traverse(ALICE, "A", max_hops=2)] == [
        a_b.id,
        a_x.id,
        b_c.id,
        x_y.id,
    ]
    hop3 = [f.id for f in storage.facts.traverse(ALICE, "A", max_hops=3)]
    assert hop3 == [a_b.id, a_x.id, b_c.id, x_y.id, c_d.id, back.id]
    everything = [f.id for f in storage.facts.traverse(ALICE, "A", max_hops=10)]
    assert everything == hop3 + [d_e.id]
    assert len(everything) == len(set(everything))
    assert unrelated.id not in everything
    assert storage.facts.traverse(ALICE, "A", max_hops=0) == []
    assert storage.facts.traverse(ALICE, "nobody") == []
    assert [f.id for f in storage.facts.traverse(ALICE, "d")] == [d_e.id]


def test_traverse_skips_archived_facts(storage, make) -> None:
    a_b = add(storage, make, "A", "knows", "B")
    b_c = add(storage, make, "B", "knows", "C")
    add(storage, make, "C", "knows", "D")
    storage.memories.set_archived(ALICE, [b_c.id], 1.0)
    assert storage.facts.traverse(ALICE, "A") == [a_b]


def test_stats_count_facts_and_distinct_entities(storage, make) -> None:
    assert storage.facts.stats(ALICE) == {"fact_count": 0, "entity_count": 0}
    add(storage, make, "Alice", "owns", "Kettle")
    add(storage, make, "kettle", "made_by", "Acme")
    add(storage, make, "ALICE", "likes", "acme")
    assert storage.facts.stats(ALICE) == {"fact_count": 3, "entity_count": 3}
